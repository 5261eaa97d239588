#pragma once
// DeviceSelector: the subset of DRA's CEL selector expressions the daemon judges, parsed once into
// a small tree and evaluated against one device. The subset: `device.driver`;
// `device.attributes['<domain>'].<name>` (or `['<name>']`); `device.capacity['<domain>'].<name>`;
// literals (strings in ' or ", integers, true, false, lists ['a', 'b']); `quantity('40Gi')` and
// `semver('1.2.3')`; ==, !=, <, <=, >, >= on ints, strings, bools, quantities and versions;
// `.compareTo(x)`, `.isGreaterThan(x)`, `.isLessThan(x)` on quantities and versions; `x in [...]`
// and `'<name>' in device.attributes['<domain>']` (also capacity); `&&`, `||`, `!`, parentheses.
// Errors follow CEL: a missing attribute or a comparison of different types is an error, `&&`
// and `||` absorb an error when the other side decides (false && error is false).
// Anything outside the subset parses to an unsupported selector, whose every evaluation answers
// kUnsupported with the expression text: the caller passes such devices unjudged.
// Pure (no I/O, no JSON); a parsed selector is immutable and thread-safe to share.
#include <memory>
#include <string>
#include <string_view>

#include "extender/model/dra.h"

namespace extender::policy {

enum class MatchKind { kMatch, kNoMatch, kUnsupported, kError };

struct SelectorMatch {
  MatchKind kind = MatchKind::kNoMatch;
  std::string detail;  // kUnsupported: the expression and why; kError: what failed
};

class DeviceSelector {
 public:
  // Never fails: an expression outside the subset gives a selector that is unsupported().
  static DeviceSelector parse(std::string_view expression);

  SelectorMatch evaluate(std::string_view driver, const model::DraDevice& device) const;
  bool supported() const { return root_ != nullptr; }
  const std::string& text() const { return text_; }
  const std::string& unsupported_reason() const { return reason_; }

  struct Node;

 private:
  std::string text_;
  std::string reason_;
  std::shared_ptr<const Node> root_;
};

}  // namespace extender::policy
