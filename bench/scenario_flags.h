#pragma once
// The flags of the benches that run named scenarios one after another: `--seconds S` (how long a
// phase runs), `--only NAME` (that scenario alone) and `--idle-strangers` (the strangers' threads
// run under SCHED_IDLE: they get only the CPU the daemon and the real client leave, as strangers
// on other machines would, so the figures show what serving them costs, not what sharing two CPUs
// with their clients costs). wanted() says whether a scenario runs; become_stranger() is called
// first thing on the thread that runs an attack (the threads it starts inherit its policy).
#include <pthread.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace extender::bench {

struct ScenarioFlags {
  int seconds = 0;
  std::string only;  // empty: every scenario
  bool idle_strangers = false;
  bool wanted(const std::string& name) const { return only.empty() || only == name; }
  // Under --idle-strangers, moves the calling thread to SCHED_IDLE (a warning when refused).
  void become_stranger() const {
    if (!idle_strangers) return;
    sched_param none{};
    if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &none) != 0) {
      std::fprintf(stderr, "--idle-strangers: SCHED_IDLE refused; the strangers run at normal priority\n");
    }
  }
};

// The flags, or nullopt after printing the usage of `program` to stderr.
inline std::optional<ScenarioFlags> parse_scenario_flags(int argc, char** argv, const char* program,
                                                         int default_seconds) {
  ScenarioFlags f{default_seconds, {}, false};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) {
      f.seconds = std::atoi(argv[++i]);
    } else if (a == "--only" && i + 1 < argc) {
      f.only = argv[++i];
    } else if (a == "--idle-strangers") {
      f.idle_strangers = true;
    } else {
      std::fprintf(stderr, "usage: %s [--seconds S] [--only NAME] [--idle-strangers]\n", program);
      return std::nullopt;
    }
  }
  return f;
}

}  // namespace extender::bench
