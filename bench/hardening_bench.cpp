// Measures what hostile or heavy callers cost the daemon (the built binary, on loopback):
//  - peak memory for one Nodes-form /filter of each body, as a multiple of the body (VmHWM of a
//    fresh daemon, minus its idle RSS, over the body size; median of --runs);
//  - /healthz latency on both listeners while 256 trickling and 256 idle connections per listener
//    press on it (median, p99, worst over --seconds).
//
// usage: hardening_bench BODY.json [BODY.json ...] [--runs N] [--seconds S]
#include <httplib.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>

#include "daemon/daemon_process.h"
#include "support/files.h"

namespace {

using namespace extender::testing;
using Clock = std::chrono::steady_clock;

// Its clients replay one pod's request back to back, which server.pacing would answer late (kube-scheduler
// sends each pod once an attempt): pacing is off, so that the figures are the daemon's own.
constexpr const char* kConfig =
    "server:\n  max_body_bytes: 256Mi\n  request_deadline: 60s\n  pacing: {hold: 0s}\nadmin:\n  listen: 127.0.0.1:0\n";

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void peak_memory(const std::string& path, int runs) {
  const std::string body = read_file(path);
  std::vector<double> over_idle, total;
  for (int r = 0; r < runs; ++r) {
    DaemonProcess d({}, kConfig);
    httplib::Client c("127.0.0.1", d.port());
    c.set_read_timeout(120, 0);
    c.Get("/healthz");
    const long long idle = d.memory("VmRSS");
    auto res = c.Post("/filter", body, "application/json");
    if (!res || res->status != 200) {
      std::fprintf(stderr, "filter failed for %s\n", path.c_str());
      return;
    }
    const long long peak = d.memory("VmHWM");
    over_idle.push_back(static_cast<double>(peak - idle) / static_cast<double>(body.size()));
    total.push_back(static_cast<double>(peak) / static_cast<double>(body.size()));
  }
  std::printf("%-40s %8.1f MB  peak-idle %5.2fx body  peak %5.2fx body  (median of %d)\n", path.c_str(),
              static_cast<double>(body.size()) / 1e6, median(over_idle), median(total), runs);
}

void slow_clients(int seconds) {
  rlimit r{};
  getrlimit(RLIMIT_NOFILE, &r);
  r.rlim_cur = r.rlim_max;
  setrlimit(RLIMIT_NOFILE, &r);
  DaemonProcess d({}, kConfig);
  std::atomic<bool> stop{false};
  auto attack = [&](int port) {
    std::vector<std::unique_ptr<RawConnection>> trickling(256), idle(256);
    while (!stop) {
      for (auto& c : trickling) {
        if (!c || !c->send_all("X-Slow: 1\r\n")) {
          c = std::make_unique<RawConnection>(port);
          c->send_all("GET /healthz HTTP/1.1\r\nHost: x\r\n");
        }
      }
      for (auto& c : idle) {
        if (!c || c->closed_by_peer()) c = std::make_unique<RawConnection>(port);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  };
  std::thread a1(attack, d.port()), a2(attack, d.admin_port());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  std::vector<double> ms;
  int failed = 0;
  const auto until = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < until) {
    for (int port : {d.port(), d.admin_port()}) {
      httplib::Client c("127.0.0.1", port);
      c.set_read_timeout(10, 0);
      const auto t0 = Clock::now();
      auto res = c.Get("/healthz");
      const double took = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      if (!res || res->status != 200) ++failed;
      ms.push_back(took);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop = true;
  a1.join();
  a2.join();
  std::sort(ms.begin(), ms.end());
  std::printf(
      "/healthz under 512 slow + 512 idle connections (both listeners, %d s): %zu calls, %d failed, "
      "median %.2f ms, p99 %.2f ms, worst %.2f ms\n",
      seconds, ms.size(), failed, ms[ms.size() / 2], ms[ms.size() * 99 / 100], ms.back());
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> bodies;
  int runs = 3;
  int seconds = 10;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (a == "--seconds" && i + 1 < argc) {
      seconds = std::atoi(argv[++i]);
    } else {
      bodies.push_back(a);
    }
  }
  for (const auto& b : bodies) peak_memory(b, runs);
  slow_clients(seconds);
  return 0;
}
