#pragma once
// PaddedBody: a request body followed by the readable padding the JSON decoder may read past its
// last byte (kBodyPadding bytes; the decoder checks it covers simdjson's own). Either a view of a
// string whose capacity already leaves the padding (the caller keeps that string alive), or a
// padded copy, owned and shared by copies of the PaddedBody. Immutable; safe to share.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace extender::wire {

inline constexpr std::size_t kBodyPadding = 64;

class PaddedBody {
 public:
  PaddedBody() = default;  // empty
  // A padded copy of `text`.
  explicit PaddedBody(std::string_view text);
  // A view of `body` when its capacity leaves the padding, else a padded copy.
  static PaddedBody of(const std::string& body);

  std::string_view bytes() const { return bytes_; }
  std::size_t size() const { return bytes_.size(); }
  // Whether the bytes are a copy this body owns (false for a view).
  bool owns_copy() const { return copy_ != nullptr; }

 private:
  std::shared_ptr<const std::string> copy_;
  std::string_view bytes_;
};

}  // namespace extender::wire
