#pragma once
// The flags of the benches that run named scenarios one after another: `--seconds S` (how long a
// phase runs) and `--only NAME` (that scenario alone). wanted() says whether a scenario runs.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace extender::bench {

struct ScenarioFlags {
  int seconds = 0;
  std::string only;  // empty: every scenario
  bool wanted(const std::string& name) const { return only.empty() || only == name; }
};

// The flags, or nullopt after printing the usage of `program` to stderr.
inline std::optional<ScenarioFlags> parse_scenario_flags(int argc, char** argv, const char* program,
                                                         int default_seconds) {
  ScenarioFlags f{default_seconds, {}};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) {
      f.seconds = std::atoi(argv[++i]);
    } else if (a == "--only" && i + 1 < argc) {
      f.only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--seconds S] [--only NAME]\n", program);
      return std::nullopt;
    }
  }
  return f;
}

}  // namespace extender::bench
