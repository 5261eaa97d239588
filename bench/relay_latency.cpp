// What the relay adds to a call: the built daemon (defaults, standalone) on one port, the relay
// in this process in front of it, and one keep-alive client (TCP_NODELAY) that alternates a
// direct POST /scheduler/prioritize-unmanaged with the same call through the relay, one in
// flight. Prints the median, p90 and p99 of each and the median added by the relay.
//
// usage: relay_latency [--calls N] [--body FIXTURE]   (default 2000 calls of each, the
// NodeNames-form fixture protocol-examples/filter-request-names.json)
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "daemon/daemon_process.h"
#include "extender/relay/relay.h"
#include "support/files.h"

namespace {

using namespace extender::testing;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Its clients replay one pod's request back to back, which server.pacing would answer late (kube-scheduler
// sends each pod once an attempt): pacing is off, so that the figures are the daemon's own.
constexpr const char* kConfig = "server:\n  pacing: {hold: 0s}\nadmin:\n  listen: 127.0.0.1:0\n";
constexpr const char* kPath = "/scheduler/prioritize-unmanaged";

double at(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

// One call's time in ms; -1 when it did not answer 200.
double timed_post(httplib::Client& c, const std::string& body) {
  const auto start = Clock::now();
  auto res = c.Post(kPath, body, "application/json");
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return res && res->status == 200 ? ms : -1;
}

httplib::Client client(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_keep_alive(true);
  c.set_tcp_nodelay(true);
  c.set_read_timeout(10s);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 2000;
  std::string fixture_name = "protocol-examples/filter-request-names.json";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--calls" && i + 1 < argc)
      calls = std::atoi(argv[++i]);
    else if (a == "--body" && i + 1 < argc)
      fixture_name = argv[++i];
    else {
      std::fprintf(stderr, "usage: relay_latency [--calls N] [--body FIXTURE]\n");
      return 2;
    }
  }
  const std::string body = read_file(std::string(EXTENDER_FIXTURES_DIR) + "/" + fixture_name);
  DaemonProcess daemon({}, kConfig);
  extender::relay::RelayOptions options;
  options.listen_port = 0;
  options.upstream = "http://127.0.0.1:" + std::to_string(daemon.port());
  options.upstream_timeout = 2s;
  auto made = extender::relay::Relay::create(options);
  if (!made) {
    std::fprintf(stderr, "relay: %s\n", made.message().c_str());
    return 1;
  }
  auto& relay = *made;
  relay->start();
  auto direct = client(daemon.port());
  auto relayed = client(relay->port());
  std::vector<double> d, r;
  int failures = 0;
  for (int i = 0; i < calls + 50; ++i) {
    const double a = timed_post(direct, body);
    const double b = timed_post(relayed, body);
    if (a < 0 || b < 0) {
      ++failures;
      continue;
    }
    if (i >= 50) {  // warm-up
      d.push_back(a);
      r.push_back(b);
    }
  }
  relay->stop();
  std::printf("body %zu bytes (%s), %d calls each, %d failed\n", body.size(), fixture_name.c_str(), calls, failures);
  std::printf("%-14s median %7.3f ms  p90 %7.3f ms  p99 %7.3f ms\n", "direct", at(d, 0.5), at(d, 0.9), at(d, 0.99));
  std::printf("%-14s median %7.3f ms  p90 %7.3f ms  p99 %7.3f ms\n", "through relay", at(r, 0.5), at(r, 0.9),
              at(r, 0.99));
  std::printf("added by the relay: median %.3f ms\n", at(r, 0.5) - at(d, 0.5));
  return failures == 0 ? 0 : 1;
}
