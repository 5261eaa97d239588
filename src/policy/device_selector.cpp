#include "extender/policy/device_selector.h"

#include <algorithm>

#include "selector_ast.h"

namespace extender::policy {
namespace selector {

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Semver 2.0 (11.4): identifier by identifier; numeric ones numerically (no leading zeros, so
// the longer is the larger) and below alphanumeric ones, which compare in ASCII order; a shorter
// list that is a prefix of the other is lower.
int compare_pre_releases(std::string_view a, std::string_view b) {
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  for (;;) {
    if (a.empty() || b.empty()) return cmp(!a.empty(), !b.empty());
    const std::string_view x = a.substr(0, a.find('.'));
    const std::string_view y = b.substr(0, b.find('.'));
    const bool xn = all_digits(x), yn = all_digits(y);
    int c = xn != yn ? (xn ? -1 : 1) : xn ? (x.size() != y.size() ? cmp(x.size(), y.size()) : cmp(x, y)) : cmp(x, y);
    if (c) return c;
    a.remove_prefix(std::min(a.size(), x.size() + 1));
    b.remove_prefix(std::min(b.size(), y.size() + 1));
  }
}

}  // namespace

int compare_versions(const Version& a, const Version& b) {
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (int c = cmp(a.major, b.major)) return c;
  if (int c = cmp(a.minor, b.minor)) return c;
  if (int c = cmp(a.patch, b.patch)) return c;
  if (a.pre.empty() != b.pre.empty()) return a.pre.empty() ? 1 : -1;
  return compare_pre_releases(a.pre, b.pre);
}

const char* type_name(Value::Type t) {
  switch (t) {
    case Value::Type::kError: return "error";
    case Value::Type::kBool: return "bool";
    case Value::Type::kInt: return "int";
    case Value::Type::kString: return "string";
    case Value::Type::kVersion: return "semver";
    case Value::Type::kQuantity: return "quantity";
    case Value::Type::kList: return "list";
  }
  return "?";
}

std::optional<int> compare(const Value& a, const Value& b) {
  if (a.type != b.type) return std::nullopt;
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  switch (a.type) {
    case Value::Type::kBool: return cmp(a.b, b.b);
    case Value::Type::kInt: return cmp(a.i, b.i);
    case Value::Type::kString: return cmp(a.s, b.s);
    case Value::Type::kVersion: return compare_versions(a.version, b.version);
    case Value::Type::kQuantity: return cmp(a.q, b.q);
    default: return std::nullopt;
  }
}

}  // namespace selector

namespace {

using selector::parse_version;
using selector::Value;
using Node = DeviceSelector::Node;

struct Context {
  std::string_view driver;
  const model::DraDevice& device;
};

Value attribute_value(const model::DraAttribute& a) {
  switch (a.kind) {
    case model::DraAttribute::Kind::kInt: return Value::integer(a.int_value);
    case model::DraAttribute::Kind::kBool: return Value::boolean(a.bool_value);
    case model::DraAttribute::Kind::kString: return Value::string(a.text);
    case model::DraAttribute::Kind::kVersion: {
      auto version = parse_version(a.text);
      if (!version) return Value::error("attribute value '" + a.text + "' is not a version");
      Value v;
      v.type = Value::Type::kVersion;
      v.version = *version;
      v.s = a.text;
      return v;
    }
  }
  return Value::error("attribute kind");
}

Value eval(const Node& n, const Context& ctx);

// A capacity of the device, by key.
Value capacity_value(const Node& n, const Context& ctx) {
  auto it = ctx.device.capacity.find(n.key);
  if (it == ctx.device.capacity.end()) return Value::error("no such key: " + n.key);
  Value v;
  v.type = Value::Type::kQuantity;
  v.q = it->second;
  return v;
}

Value eval_list(const Node& n, const Context& ctx) {
  Value v;
  v.type = Value::Type::kList;
  for (const auto& kid : n.kids) {
    Value item = eval(*kid, ctx);
    if (item.is_error()) return item;
    v.list.push_back(std::move(item));
  }
  return v;
}

// ! and unary -.
Value eval_unary(const Node& n, const Context& ctx) {
  Value v = eval(*n.kids[0], ctx);
  if (v.is_error()) return v;
  if (n.kind == Node::Kind::kNot) {
    if (v.type != Value::Type::kBool) return Value::error(std::string("! of ") + type_name(v.type));
    return Value::boolean(!v.b);
  }
  if (v.type != Value::Type::kInt || v.i == INT64_MIN) return Value::error(std::string("- of ") + type_name(v.type));
  return Value::integer(-v.i);
}

// && and ||: a side that decides alone decides, even when the other is an error.
Value eval_logic(const Node& n, const Context& ctx) {
  const bool decisive = n.kind == Node::Kind::kOr;  // the value that decides alone
  Value l = eval(*n.kids[0], ctx);
  if (l.type == Value::Type::kBool && l.b == decisive) return l;
  Value r = eval(*n.kids[1], ctx);
  if (r.type == Value::Type::kBool && r.b == decisive) return r;
  if (l.is_error()) return l;
  if (r.is_error()) return r;
  if (l.type != Value::Type::kBool || r.type != Value::Type::kBool) return Value::error(n.key + " of a non-bool");
  return Value::boolean(!decisive);
}

Value eval_compare(const Node& n, const Context& ctx) {
  Value l = eval(*n.kids[0], ctx);
  if (l.is_error()) return l;
  Value r = eval(*n.kids[1], ctx);
  if (r.is_error()) return r;
  auto c = compare(l, r);
  const bool ordering = n.key != "==" && n.key != "!=";
  if (ordering && (l.type == Value::Type::kQuantity || l.type == Value::Type::kVersion)) {
    return Value::error(std::string("no such overload: ") + type_name(l.type) + " " + n.key + " " + type_name(r.type) +
                        " (use compareTo, isLessThan or isGreaterThan)");
  }
  if (!c) {
    return Value::error(std::string("no such overload: ") + type_name(l.type) + " " + n.key + " " + type_name(r.type));
  }
  if (n.key == "==") return Value::boolean(*c == 0);
  if (n.key == "!=") return Value::boolean(*c != 0);
  if (n.key == "<") return Value::boolean(*c < 0);
  if (n.key == "<=") return Value::boolean(*c <= 0);
  if (n.key == ">") return Value::boolean(*c > 0);
  return Value::boolean(*c >= 0);
}

// `x in list`, or `key in device.attributes[domain]` / `device.capacity[domain]`.
Value eval_in(const Node& n, const Context& ctx) {
  using K = Node::Kind;
  Value l = eval(*n.kids[0], ctx);
  if (l.is_error()) return l;
  const Node& right = *n.kids[1];
  if (right.kind == K::kAttrDomain || right.kind == K::kCapDomain) {
    if (l.type != Value::Type::kString) return Value::error("in of a non-string key");
    const std::string key = right.key + "/" + l.s;
    return Value::boolean(right.kind == K::kAttrDomain ? ctx.device.attributes.count(key) > 0
                                                       : ctx.device.capacity.count(key) > 0);
  }
  Value r = eval(right, ctx);
  if (r.is_error()) return r;
  if (r.type != Value::Type::kList) return Value::error(std::string("in of ") + type_name(r.type));
  for (const auto& item : r.list) {
    if (auto c = compare(l, item); c && *c == 0) return Value::boolean(true);
  }
  return Value::boolean(false);
}

// compareTo, isGreaterThan and isLessThan of quantities and versions.
Value eval_method(const Node& n, const Context& ctx) {
  Value l = eval(*n.kids[0], ctx);
  if (l.is_error()) return l;
  Value r = eval(*n.kids[1], ctx);
  if (r.is_error()) return r;
  if ((l.type != Value::Type::kQuantity && l.type != Value::Type::kVersion) || l.type != r.type) {
    return Value::error(std::string("no such overload: ") + type_name(l.type) + "." + n.key + "(" + type_name(r.type) +
                        ")");
  }
  const int c = *compare(l, r);
  if (n.key == "compareTo") return Value::integer(c);
  return Value::boolean(n.key == "isGreaterThan" ? c > 0 : c < 0);
}

Value eval(const Node& n, const Context& ctx) {
  using K = Node::Kind;
  switch (n.kind) {
    case K::kLiteral: return n.literal;
    case K::kDriver: return Value::string(std::string(ctx.driver));
    case K::kAttribute: {
      auto it = ctx.device.attributes.find(n.key);
      if (it == ctx.device.attributes.end()) return Value::error("no such key: " + n.key);
      return attribute_value(it->second);
    }
    case K::kCapacity: return capacity_value(n, ctx);
    case K::kAttrDomain:
    case K::kCapDomain: return Value::error("a map of " + n.key + " used as a value");
    case K::kList: return eval_list(n, ctx);
    case K::kNot:
    case K::kNeg: return eval_unary(n, ctx);
    case K::kAnd:
    case K::kOr: return eval_logic(n, ctx);
    case K::kCompare: return eval_compare(n, ctx);
    case K::kIn: return eval_in(n, ctx);
    case K::kMethod: return eval_method(n, ctx);
  }
  return Value::error("unknown node");
}

}  // namespace

DeviceSelector DeviceSelector::parse(std::string_view expression) {
  DeviceSelector out;
  out.text_ = std::string(expression);
  auto root = selector::parse_tree(expression, out.reason_);
  if (root) out.root_ = std::shared_ptr<const Node>(std::move(root));
  return out;
}

SelectorMatch DeviceSelector::evaluate(std::string_view driver, const model::DraDevice& device) const {
  if (!root_) return {MatchKind::kUnsupported, text_ + " (" + reason_ + ")"};
  Value v = eval(*root_, Context{driver, device});
  if (v.is_error()) return {MatchKind::kError, v.s};
  if (v.type != Value::Type::kBool) {
    return {MatchKind::kError, std::string("the expression gives a ") + type_name(v.type)};
  }
  return {v.b ? MatchKind::kMatch : MatchKind::kNoMatch, {}};
}

}  // namespace extender::policy
