// scheduler-extender-relay: the loopback relay with a circuit breaker that kube-scheduler's
// every-pod extender entry calls instead of the daemon (include/extender/relay/relay.h).
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <string>
#include <vector>

#include "extender/common/logging.h"
#include "extender/relay/relay.h"
#include "extender/version.h"

int main(int argc, char** argv) {
  using namespace extender;
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  auto cli = relay::parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
  if (!cli) {
    std::fprintf(stderr, "scheduler-extender-relay: %s\n", cli.message().c_str());
    return 2;
  }
  if (cli->show_help) {
    std::fputs(relay::usage_text().c_str(), stdout);
    return 0;
  }
  if (cli->show_version) {
    std::printf("scheduler-extender-relay %s (%s)\n", kVersion, kGitCommit);
    return 0;
  }
  if (auto st = setup_logging(cli->log_level, false); !st) {
    std::fprintf(stderr, "scheduler-extender-relay: %s\n", st.message().c_str());
    return 2;
  }
  auto relay = relay::Relay::create(cli->options);
  if (!relay) {
    spdlog::critical("{}", relay.message());
    return 2;
  }
  (*relay)->start();
  spdlog::info("relay on {}:{} to {} (upstream timeout {}ms, open for {}ms)", cli->options.listen_host,
               (*relay)->port(), cli->options.upstream, cli->options.upstream_timeout.count(),
               cli->options.breaker.open_for.count());
  int signal = 0;
  sigwait(&signals, &signal);
  spdlog::info("received {}: stopping", signal == SIGTERM ? "SIGTERM" : "SIGINT");
  (*relay)->stop();
  return 0;
}
