#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <cstdio>
#include <string_view>

#include "extender/common/logging.h"
#include "extender/config/config.h"
#include "extender/daemon/daemon.h"
#include "extender/daemon/simulator_config.h"
#include "extender/inspect/inspect_command.h"
#include "extender/sim/simulator.h"
#include "extender/version.h"

namespace {

using namespace extender;

// Large request bodies are allocated with mmap and given back whole when freed (a fixed threshold
// also stops glibc from raising it after the first large free); up to 4 MiB of free heap stays
// mapped in each arena, so that an ordinary request reuses the pages the last one freed instead of
// faulting in fresh ones (the body pool's trim returns the rest after large requests); few malloc
// arenas, so that memory freed by one worker is reused by the next instead of staying in a
// per-thread arena; and as many descriptors as the hard limit allows, for the connection caps to
// be the limit that bites.
void tune_process() {
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_TRIM_THRESHOLD, 4 << 20);
  mallopt(M_ARENA_MAX, 4);
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
}

sigset_t stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  return signals;
}

int run(const config::Config& cfg) {
  auto built = daemon::Daemon::create(cfg);
  if (!built) {
    spdlog::critical("{}", built.message());
    return 2;
  }
  (*built)->start();
  const sigset_t signals = stop_signals();
  int signal = 0;
  sigwait(&signals, &signal);
  spdlog::info("received {}: no longer ready; finishing requests in flight", signal == SIGTERM ? "SIGTERM" : "SIGINT");
  (*built)->stop();
  built->reset();
  spdlog::info("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const sigset_t signals = stop_signals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  tune_process();

  if (argc > 1 && std::string_view(argv[1]) == "simulate") {
    return sim::run_simulate_command(argc - 2, argv + 2, daemon::simulator_config);
  }
  if (argc > 1 && std::string_view(argv[1]) == "inspect") return inspect::run_inspect_command(argc - 2, argv + 2);
  auto cli = config::parse_command_line(argc, argv);
  if (!cli) {
    std::fprintf(stderr, "scheduler-extender: %s\n", cli.message().c_str());
    return 2;
  }
  if (cli->show_help) {
    std::fputs(config::usage_text().c_str(), stdout);
    return 0;
  }
  if (cli->show_version) {
    std::printf("scheduler-extender %s (%s)\n", kVersion, kGitCommit);
    return 0;
  }
  auto cfg = config::resolve_config(*cli);
  if (!cfg) {
    std::fprintf(stderr, "scheduler-extender: %s\n", cfg.message().c_str());
    return 2;
  }
  if (auto st = setup_logging(cfg->logging.level, cfg->logging.format == "json"); !st) {
    std::fprintf(stderr, "scheduler-extender: %s\n", st.message().c_str());
    return 2;
  }
  return run(*cfg);
}
