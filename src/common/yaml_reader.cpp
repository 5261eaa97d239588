#include "extender/common/yaml_reader.h"

#include <cctype>
#include <fstream>
#include <sstream>

#include "extender/common/quantity.h"

namespace extender {
namespace {

std::string join(std::string_view path, std::string_view key) {
  if (path.empty()) return std::string(key);
  return std::string(path) + "." + std::string(key);
}

}  // namespace

Result<YamlReader> YamlReader::parse(std::string text, std::string source) {
  try {
    YAML::Node root = YAML::Load(text);
    return YamlReader(std::move(root), std::move(source));
  } catch (const YAML::Exception& e) {
    return Error{source + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg};
  } catch (const std::exception& e) {
    return Error{source + ": not valid YAML: " + e.what()};
  }
}

Result<YamlReader> YamlReader::load_file(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot be read"};
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes) return Error{path + ": larger than " + std::to_string(max_bytes) + " bytes"};
  }
  return parse(std::move(text), path);
}

Error YamlReader::error_at(const YAML::Node& node, std::string_view path, std::string_view message) const {
  std::string where = source_;
  if (node.IsDefined() && node.Mark().line >= 0) where += ":" + std::to_string(node.Mark().line + 1);
  return Error{where + ": " + std::string(path) + ": " + std::string(message)};
}

Status YamlReader::spend(const YAML::Node& node, std::string_view path) {
  if (budget_ == 0) return error_at(node, path, "document too large (too many nodes, or aliases expanding)");
  --budget_;
  return {};
}

Status YamlReader::expect_keys(const YAML::Node& node, std::string_view path,
                               std::initializer_list<std::string_view> allowed) {
  if (auto st = spend(node, path); !st) return st;
  if (!node.IsDefined() || node.IsNull()) return {};
  if (!node.IsMap()) return error_at(node, path.empty() ? "document" : path, "expected a mapping");
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar()) return error_at(it->first, path, "keys must be plain strings");
    const std::string& key = it->first.Scalar();
    bool known = false;
    for (auto a : allowed) known = known || key == a;
    if (!known) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      return error_at(it->first, join(path, key), "unknown key (known here: " + list + ")");
    }
  }
  return {};
}

Status YamlReader::read(const YAML::Node& map, std::string_view key, std::string_view path, std::string& out) {
  YAML::Node v = map[std::string(key)];
  if (!v.IsDefined() || v.IsNull()) return {};
  if (!v.IsScalar()) return error_at(v, join(path, key), "expected a string");
  out = v.Scalar();
  return {};
}

Status YamlReader::read(const YAML::Node& map, std::string_view key, std::string_view path, bool& out) {
  YAML::Node v = map[std::string(key)];
  if (!v.IsDefined() || v.IsNull()) return {};
  const std::string s = v.IsScalar() ? v.Scalar() : "";
  if (s == "true") {
    out = true;
  } else if (s == "false") {
    out = false;
  } else {
    return error_at(v, join(path, key), "expected true or false");
  }
  return {};
}

Status YamlReader::read(const YAML::Node& map, std::string_view key, std::string_view path, std::int64_t& out) {
  YAML::Node v = map[std::string(key)];
  if (!v.IsDefined() || v.IsNull()) return {};
  const std::string s = v.IsScalar() ? v.Scalar() : "";
  std::size_t i = s.size() > 0 && s[0] == '-' ? 1 : 0;
  bool digits = s.size() > i && s.size() - i <= 18;
  for (std::size_t k = i; k < s.size() && digits; ++k) digits = std::isdigit(static_cast<unsigned char>(s[k])) != 0;
  if (!digits) return error_at(v, join(path, key), "expected an integer");
  out = std::stoll(s);
  return {};
}

Status YamlReader::read(const YAML::Node& map, std::string_view key, std::string_view path,
                        std::vector<std::string>& out) {
  YAML::Node v = map[std::string(key)];
  if (!v.IsDefined() || v.IsNull()) return {};
  if (!v.IsSequence()) return error_at(v, join(path, key), "expected a list of strings");
  std::vector<std::string> items;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const YAML::Node item = v[i];
    EXTENDER_TRY(spend(item, join(path, key)));
    if (!item.IsScalar()) return error_at(item, join(path, key) + "[" + std::to_string(i) + "]", "expected a string");
    items.push_back(item.Scalar());
  }
  out = std::move(items);
  return {};
}

Status YamlReader::read_duration(const YAML::Node& map, std::string_view key, std::string_view path,
                                 std::chrono::milliseconds& out) {
  YAML::Node v = map[std::string(key)];
  if (!v.IsDefined() || v.IsNull()) return {};
  if (!v.IsScalar()) return error_at(v, join(path, key), "expected a duration such as 5s or 500ms");
  auto d = parse_duration(v.Scalar());
  if (!d) return error_at(v, join(path, key), d.message());
  out = *d;
  return {};
}

Status YamlReader::read_quantity(const YAML::Node& map, std::string_view key, std::string_view path,
                                 std::int64_t& out) {
  YAML::Node v = map[std::string(key)];
  if (!v.IsDefined() || v.IsNull()) return {};
  if (!v.IsScalar()) return error_at(v, join(path, key), "expected a quantity such as 10Gi");
  auto n = parse_count(v.Scalar(), "value");
  if (!n) return error_at(v, join(path, key), n.message());
  out = *n;
  return {};
}

Result<std::chrono::milliseconds> parse_duration(std::string_view text) {
  auto bad = [&] {
    return Error{"invalid duration \"" + std::string(text.substr(0, 64)) + "\" (use e.g. 500ms, 5s, 1m30s, 2h)"};
  };
  if (text.empty()) return bad();
  if (text == "0") return std::chrono::milliseconds(0);
  __int128 total_ms = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t start = i;
    __int128 value = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      value = value * 10 + (text[i] - '0');
      if (value > (__int128{1} << 62)) return bad();
      ++i;
    }
    if (i == start) return bad();
    std::size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    __int128 factor = 0;
    if (unit == "ms")
      factor = 1;
    else if (unit == "s")
      factor = 1000;
    else if (unit == "m")
      factor = 60'000;
    else if (unit == "h")
      factor = 3'600'000;
    else
      return bad();
    total_ms += value * factor;
    if (total_ms > (__int128{1} << 62)) return bad();
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(total_ms));
}

Result<HostPort> parse_host_port(std::string_view text) {
  auto bad = [&] { return Error{"invalid address \"" + std::string(text.substr(0, 64)) + "\" (use HOST:PORT)"}; };
  HostPort hp;
  std::string_view port;
  if (!text.empty() && text[0] == '[') {
    auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') return bad();
    hp.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return bad();
    hp.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
    if (hp.host.find(':') != std::string::npos) return bad();
  }
  if (hp.host.empty()) hp.host = "0.0.0.0";
  if (port.empty() || port.size() > 5) return bad();
  int p = 0;
  for (char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return bad();
    p = p * 10 + (c - '0');
  }
  if (p > 65535) return bad();
  hp.port = p;
  return hp;
}

}  // namespace extender
