#pragma once
// The parsed form of a DeviceSelector (private to policy): values as CEL sees them, semantic
// versions, the expression tree, and the parser. Pure; the tree is immutable once built.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "extender/common/quantity.h"
#include "extender/policy/device_selector.h"

namespace extender::policy {
namespace selector {

struct Version {
  std::int64_t major = 0, minor = 0, patch = 0;
  std::string pre;
};

std::optional<Version> parse_version(std::string_view text);  // "1.2.3", "1.2.3-rc.1+build"
int compare_versions(const Version& a, const Version& b);

struct Value {
  enum class Type { kError, kBool, kInt, kString, kVersion, kQuantity, kList };
  Type type = Type::kError;
  bool b = false;
  std::int64_t i = 0;
  std::string s;  // kString, the version's text, or kError's message
  Version version;
  Quantity q;
  std::vector<Value> list;

  static Value error(std::string message) {
    Value v;
    v.s = std::move(message);
    return v;
  }
  static Value boolean(bool x) {
    Value v;
    v.type = Type::kBool;
    v.b = x;
    return v;
  }
  static Value integer(std::int64_t x) {
    Value v;
    v.type = Type::kInt;
    v.i = x;
    return v;
  }
  static Value string(std::string x) {
    Value v;
    v.type = Type::kString;
    v.s = std::move(x);
    return v;
  }
  bool is_error() const { return type == Type::kError; }
};

const char* type_name(Value::Type t);
// -1, 0, 1; nullopt when the two values do not compare.
std::optional<int> compare(const Value& a, const Value& b);

// The tree of `expression`; nullptr when it is outside the subset, and `why` says where.
std::unique_ptr<DeviceSelector::Node> parse_tree(std::string_view expression, std::string& why);

}  // namespace selector

struct DeviceSelector::Node {
  enum class Kind {
    kLiteral,
    kDriver,
    kAttribute,
    kCapacity,
    kAttrDomain,
    kCapDomain,
    kList,
    kNot,
    kNeg,
    kAnd,
    kOr,
    kCompare,
    kIn,
    kMethod
  };
  Kind kind = Kind::kLiteral;
  selector::Value literal;
  std::string key;  // qualified name (kAttribute, kCapacity), domain (k*Domain), operator or method name
  std::vector<std::unique_ptr<Node>> kids;
};

}  // namespace extender::policy
