#pragma once
// YamlReader: strict reading of operator-written YAML (config, inventory). Every mapping declares
// its keys, so unknown keys are errors; every error names the file, line and key path. Alias
// expansion and document size are budgeted, so a hostile file fails instead of exhausting memory.
// Not thread-safe; one reader per document.
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "extender/common/result.h"

namespace extender {

class YamlReader {
 public:
  // Parses `text`; `source` names it in errors (a file path, or "<embedded>").
  static Result<YamlReader> parse(std::string text, std::string source);
  static Result<YamlReader> load_file(const std::string& path, std::size_t max_bytes = 64u << 20);

  const YAML::Node& root() const { return root_; }

  // Fails when `node` is not a mapping or has a key outside `allowed`. Null/absent is an empty map.
  Status expect_keys(const YAML::Node& node, std::string_view path, std::initializer_list<std::string_view> allowed);

  // Typed reads of mapping[key]; an absent or null key leaves `out` untouched.
  Status read(const YAML::Node& map, std::string_view key, std::string_view path, std::string& out);
  Status read(const YAML::Node& map, std::string_view key, std::string_view path, bool& out);
  Status read(const YAML::Node& map, std::string_view key, std::string_view path, std::int64_t& out);
  Status read(const YAML::Node& map, std::string_view key, std::string_view path, std::vector<std::string>& out);
  Status read_duration(const YAML::Node& map, std::string_view key, std::string_view path,
                       std::chrono::milliseconds& out);
  // A Kubernetes quantity as a whole non-negative number ("10Gi", 1024).
  Status read_quantity(const YAML::Node& map, std::string_view key, std::string_view path, std::int64_t& out);

  // An error located at `node`: "<source>:<line>: <path>: <message>".
  Error error_at(const YAML::Node& node, std::string_view path, std::string_view message) const;

  // Visits one more node of the document; fails once the budget of nodes is spent.
  Status spend(const YAML::Node& node, std::string_view path);

 private:
  YamlReader(YAML::Node root, std::string source) : root_(std::move(root)), source_(std::move(source)) {}
  YAML::Node root_;
  std::string source_;
  std::size_t budget_ = 1'000'000;
};

// Go-style durations: "500ms", "10s", "1m30s", "2h". Fails on anything else.
Result<std::chrono::milliseconds> parse_duration(std::string_view text);

// "host:port" or "[v6]:port"; port 0..65535.
struct HostPort {
  std::string host;
  int port = 0;
};
Result<HostPort> parse_host_port(std::string_view text);

}  // namespace extender
