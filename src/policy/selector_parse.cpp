#include <cctype>
#include <variant>

#include "selector_ast.h"

namespace extender::policy::selector {
namespace {

constexpr int kMaxDepth = 64;
constexpr std::size_t kMaxTokens = 1024;

using Node = DeviceSelector::Node;
using NodePtr = std::unique_ptr<Node>;

struct Token {
  enum Kind { kIdent, kString, kInt, kPunct, kEnd } kind = kEnd;
  std::string text;
  std::int64_t value = 0;
  std::size_t pos = 0;
};

struct Unsupported {
  std::string why;
};

std::variant<std::vector<Token>, Unsupported> lex(std::string_view s) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (out.size() >= kMaxTokens) return Unsupported{"too many tokens"};
    Token t;
    t.pos = i;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      t.kind = Token::kIdent;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) t.text += s[i++];
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      t.kind = Token::kInt;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        if (t.value > (INT64_MAX - 9) / 10) return Unsupported{"integer too large at " + std::to_string(t.pos)};
        t.value = t.value * 10 + (s[i++] - '0');
      }
      if (i < s.size() && (std::isalpha(static_cast<unsigned char>(s[i])) || s[i] == '.')) {
        return Unsupported{"number form at " + std::to_string(t.pos)};
      }
    } else if (c == '\'' || c == '"') {
      t.kind = Token::kString;
      ++i;
      for (;;) {
        if (i >= s.size()) return Unsupported{"unterminated string at " + std::to_string(t.pos)};
        if (s[i] == c) break;
        if (s[i] == '\\') {
          if (i + 1 >= s.size() || (s[i + 1] != '\\' && s[i + 1] != '\'' && s[i + 1] != '"')) {
            return Unsupported{"escape at " + std::to_string(i)};
          }
          ++i;
        }
        t.text += s[i++];
      }
      ++i;
    } else {
      t.kind = Token::kPunct;
      const std::string_view pair = s.substr(i, 2);
      for (std::string_view op : {"==", "!=", "<=", ">=", "&&", "||"}) {
        if (pair == op) t.text.append(op.data(), op.size());
      }
      if (t.text.empty()) {
        if (std::string_view("<>!()[].,-").find(c) == std::string_view::npos) {
          return Unsupported{std::string("character '") + c + "' at " + std::to_string(i)};
        }
        t.text = std::string(1, c);
      }
      i += t.text.size();
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.pos = s.size();
  out.push_back(end);
  return out;
}

NodePtr make(Node::Kind kind, std::string key = {}) {
  auto n = std::make_unique<Node>();
  n->kind = kind;
  n->key = std::move(key);
  return n;
}

NodePtr literal(Value v) {
  auto n = make(Node::Kind::kLiteral);
  n->literal = std::move(v);
  return n;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  NodePtr parse() {
    NodePtr root = parse_or();
    if (!failed() && peek().kind != Token::kEnd) fail("unexpected '" + peek().text + "'");
    return failed() ? nullptr : std::move(root);
  }
  bool failed() const { return !why_.empty(); }
  const std::string& why() const { return why_; }

 private:
  const Token& peek() const { return t_[at_]; }
  bool is(std::string_view punct) const { return peek().kind == Token::kPunct && peek().text == punct; }
  bool accept(std::string_view punct) {
    if (!is(punct)) return false;
    ++at_;
    return true;
  }
  void expect(std::string_view punct) {
    if (!accept(punct)) fail("expected '" + std::string(punct) + "'");
  }
  NodePtr fail(std::string why) {
    if (why_.empty()) why_ = std::move(why) + " at " + std::to_string(peek().pos);
    return nullptr;
  }
  bool deeper() {
    if (++depth_ > kMaxDepth) fail("nested too deeply");
    return !failed();
  }

  NodePtr binary(Node::Kind kind, std::string op, NodePtr l, NodePtr r) {
    auto n = make(kind, std::move(op));
    n->kids.push_back(std::move(l));
    n->kids.push_back(std::move(r));
    return n;
  }

  NodePtr parse_or() {
    if (!deeper()) return nullptr;
    NodePtr l = parse_and();
    while (!failed() && accept("||")) l = binary(Node::Kind::kOr, "||", std::move(l), parse_and());
    --depth_;
    return l;
  }
  NodePtr parse_and() {
    NodePtr l = parse_relation();
    while (!failed() && accept("&&")) l = binary(Node::Kind::kAnd, "&&", std::move(l), parse_relation());
    return l;
  }
  NodePtr parse_relation() {
    NodePtr l = parse_unary();
    if (failed()) return nullptr;
    for (const char* op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (accept(op)) return binary(Node::Kind::kCompare, op, std::move(l), parse_unary());
    }
    if (peek().kind == Token::kIdent && peek().text == "in") {
      ++at_;
      return binary(Node::Kind::kIn, "in", std::move(l), parse_unary());
    }
    return l;
  }
  NodePtr parse_unary() {
    if (is("!") || is("-")) {
      const bool negate = peek().text == "-";
      ++at_;
      if (!deeper()) return nullptr;
      NodePtr operand = parse_unary();
      --depth_;
      if (negate && operand && operand->kind == Node::Kind::kLiteral && operand->literal.type == Value::Type::kInt) {
        operand->literal.i = -operand->literal.i;
        return operand;
      }
      auto n = make(negate ? Node::Kind::kNeg : Node::Kind::kNot);
      n->kids.push_back(std::move(operand));
      return n;
    }
    return parse_postfix();
  }
  NodePtr parse_postfix() {
    NodePtr p = parse_primary();
    while (!failed()) {
      if (accept(".")) {
        if (peek().kind != Token::kIdent) return fail("expected a name after '.'");
        std::string name = t_[at_++].text;
        if (accept("(")) {
          if (name != "compareTo" && name != "isGreaterThan" && name != "isLessThan") return fail("method " + name);
          auto m = make(Node::Kind::kMethod, name);
          m->kids.push_back(std::move(p));
          m->kids.push_back(parse_or());
          expect(")");
          p = std::move(m);
        } else {
          p = member(std::move(p), name);
        }
      } else if (is("[") && p && (p->kind == Node::Kind::kAttrDomain || p->kind == Node::Kind::kCapDomain)) {
        ++at_;
        if (peek().kind != Token::kString) return fail("expected a quoted name");
        std::string name = t_[at_++].text;
        expect("]");
        p = member(std::move(p), name);
      } else {
        break;
      }
    }
    return failed() ? nullptr : std::move(p);
  }
  NodePtr member(NodePtr p, const std::string& name) {
    if (!p || (p->kind != Node::Kind::kAttrDomain && p->kind != Node::Kind::kCapDomain)) return fail("field " + name);
    return make(p->kind == Node::Kind::kAttrDomain ? Node::Kind::kAttribute : Node::Kind::kCapacity,
                p->key + "/" + name);
  }
  NodePtr parse_primary() {
    const Token tok = peek();
    if (accept("(")) {
      NodePtr e = parse_or();
      expect(")");
      return e;
    }
    if (accept("[")) {
      auto list = make(Node::Kind::kList);
      if (!accept("]")) {
        do {
          if (list->kids.size() >= 256) return fail("list too long");
          list->kids.push_back(parse_or());
        } while (!failed() && accept(","));
        expect("]");
      }
      return list;
    }
    if (tok.kind == Token::kString) return ++at_, literal(Value::string(tok.text));
    if (tok.kind == Token::kInt) return ++at_, literal(Value::integer(tok.value));
    if (tok.kind != Token::kIdent) return fail("unexpected '" + tok.text + "'");
    ++at_;
    if (tok.text == "true" || tok.text == "false") return literal(Value::boolean(tok.text == "true"));
    if (tok.text == "quantity" || tok.text == "semver") {
      expect("(");
      if (failed() || peek().kind != Token::kString) return fail(tok.text + "() takes one quoted literal");
      const std::string text = t_[at_++].text;
      expect(")");
      Value v;
      if (tok.text == "quantity") {
        auto q = Quantity::parse(text);
        if (!q) return fail("quantity('" + text + "'): " + q.message());
        v.type = Value::Type::kQuantity;
        v.q = *q;
      } else {
        auto version = parse_version(text);
        if (!version) return fail("semver('" + text + "') is not a version");
        v.type = Value::Type::kVersion;
        v.version = *version;
        v.s = text;
      }
      return literal(std::move(v));
    }
    if (tok.text != "device") return fail("name " + tok.text);
    expect(".");
    if (failed() || peek().kind != Token::kIdent) return fail("expected device.driver, .attributes or .capacity");
    const std::string what = t_[at_++].text;
    if (what == "driver") return make(Node::Kind::kDriver);
    if (what != "attributes" && what != "capacity") return fail("device." + what);
    expect("[");
    if (failed() || peek().kind != Token::kString) return fail("expected a quoted domain");
    const std::string domain = t_[at_++].text;
    expect("]");
    return make(what == "attributes" ? Node::Kind::kAttrDomain : Node::Kind::kCapDomain, domain);
  }

  std::vector<Token> t_;
  std::size_t at_ = 0;
  int depth_ = 0;
  std::string why_;
};

}  // namespace

namespace {

// Semver 2.0's dot-separated identifiers: non-empty, [0-9A-Za-z-]; in a pre-release, a numeric
// one has no leading zero.
bool dot_identifiers(std::string_view text, bool pre_release) {
  for (;;) {
    const std::string_view id = text.substr(0, text.find('.'));
    if (id.empty()) return false;
    bool numeric = true;
    for (char c : id) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
      numeric = numeric && std::isdigit(static_cast<unsigned char>(c));
    }
    if (pre_release && numeric && id.size() > 1 && id[0] == '0') return false;
    if (id.size() == text.size()) return true;
    text.remove_prefix(id.size() + 1);
  }
}

}  // namespace

std::optional<Version> parse_version(std::string_view text) {
  Version v;
  std::int64_t* parts[] = {&v.major, &v.minor, &v.patch};
  std::size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    if (i > 0) {
      if (at >= text.size() || text[at] != '.') return std::nullopt;
      ++at;
    }
    const std::size_t start = at;
    std::int64_t n = 0;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) {
      if (n > (INT64_MAX - 9) / 10) return std::nullopt;
      n = n * 10 + (text[at++] - '0');
    }
    if (at == start || (text[start] == '0' && at - start > 1)) return std::nullopt;
    *parts[i] = n;
  }
  if (at < text.size() && text[at] == '-') {
    const std::size_t end = text.find('+', at);
    v.pre = std::string(text.substr(at + 1, end == std::string_view::npos ? std::string_view::npos : end - at - 1));
    if (!dot_identifiers(v.pre, true)) return std::nullopt;
    at = end == std::string_view::npos ? text.size() : end;
  }
  if (at < text.size() && (text[at] != '+' || !dot_identifiers(text.substr(at + 1), false))) return std::nullopt;
  return v;
}

std::unique_ptr<Node> parse_tree(std::string_view expression, std::string& why) {
  auto tokens = lex(expression);
  if (auto* u = std::get_if<Unsupported>(&tokens)) {
    why = u->why;
    return nullptr;
  }
  Parser parser(std::move(std::get<std::vector<Token>>(tokens)));
  NodePtr root = parser.parse();
  if (!root) why = parser.why();
  return root;
}

}  // namespace extender::policy::selector
