// What hostile peers cost a well-behaved client. For each scenario a fresh daemon (the built
// binary, defaults as `make run` has them, admin on its own port) serves one real keep-alive
// client on 127.0.0.1 that repeats a captured Nodes-form /filter, one request in flight, while
// strangers on other loopback addresses attack:
//  - lockout: one address opens 4,100 connections, each sending a /filter head that declares
//    128 MiB and no body;
//  - gzip-held: four gzip bodies that inflate to 128 MiB each, their last bytes withheld;
//  - unread-answers: 40 clients that ask for 16 MiB answers and never read them;
//  - strangers: 8 addresses repeating a 16 KiB gzip /filter that inflates to 16 MiB;
//  - split-head: a head whose bare "\n\n" ends one segment, its next line the next segment;
//  - lying-size: six connections from three addresses repeat a 20-byte gzip body whose size
//    field claims 51.2 MiB, two more repeat 52 KB of deflate junk (1032 times that if believed);
//  - medium-body: 8 addresses repeat a ~200 KB gzip NodeNames /filter that decodes to ~900 KB
//    (90,000 names), just under the size that makes a request heavy.
// Prints, per scenario, the real client's calls, failures (any answer but 200 or no answer),
// median, p99 and worst latency. Exits 1 when the real client saw a failure (latencies are
// reported, never judged here).
//
// usage: hostile_bench [--seconds S] [--only NAME] [--idle-strangers]
#include <httplib.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <thread>

#include "daemon/daemon_process.h"
#include "scenario_flags.h"
#include "support/files.h"
#include "support/gzip.h"

namespace {

using namespace extender::testing;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Its clients replay one pod's request back to back, which server.pacing would answer late (kube-scheduler
// sends each pod once an attempt): pacing is off, so that the figures are the daemon's own.
constexpr const char* kConfig = "server:\n  pacing: {hold: 0s}\nadmin:\n  listen: 127.0.0.1:0\n";

std::string post_head(std::uint64_t length, const char* extra = "") {
  return "POST /scheduler/filter HTTP/1.1\r\nHost: extender\r\nContent-Type: application/json\r\n" +
         std::string(extra) + "Content-Length: " + std::to_string(length) + "\r\n\r\n";
}

// A Nodes-form /filter of `nodes` nodes that all pass (each holds 8 GPUs, the pod asks one),
// each padded to about `node_bytes`, so that the answer echoes about nodes * node_bytes.
std::string passing_body(int nodes, std::size_t node_bytes) {
  const std::string pad(node_bytes, 'x');
  std::string body =
      R"({"Pod":{"metadata":{"name":"p","namespace":"default","uid":"00000000-0000-4000-8000-000000000001"},)"
      R"("spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}},"Nodes":{"items":[)";
  for (int i = 0; i < nodes; ++i) {
    if (i) body += ',';
    body += R"({"metadata":{"name":"big-)" + std::to_string(i) + R"(","annotations":{"pad":")" + pad +
            R"("}},"status":{"allocatable":{"nvidia.com/gpu":"8","cpu":"96","memory":"512Gi","pods":"110"}}})";
  }
  return body + R"(]},"NodeNames":null})";
}

struct Report {
  int calls = 0;
  int failures = 0;
  std::vector<double> ms;
};

// The real client: keep-alive /filter, one in flight, until `stop`.
Report real_client(int port, const std::string& body, const std::atomic<bool>& stop) {
  Report r;
  httplib::Client c("127.0.0.1", port);
  c.set_keep_alive(true);
  c.set_tcp_nodelay(true);
  c.set_read_timeout(10s);
  c.set_connection_timeout(10s);
  while (!stop) {
    const auto start = Clock::now();
    auto res = c.Post("/scheduler/filter", body, "application/json");
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    ++r.calls;
    if (!res || res->status != 200) {
      ++r.failures;
      if (r.failures <= 3)
        std::fprintf(stderr, "  real client: %s\n",
                     res ? std::to_string(res->status).c_str() : httplib::to_string(res.error()).c_str());
    }
    r.ms.push_back(ms);
    std::this_thread::sleep_for(5ms);
  }
  return r;
}

double at(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

using Attack = std::function<void(int port, const std::atomic<bool>& stop)>;

void lockout(int port, const std::atomic<bool>& stop) {
  std::vector<std::unique_ptr<RawConnection>> held;
  const std::string head = post_head(std::uint64_t{128} << 20);
  for (int i = 0; i < 4100 && !stop; ++i) {
    try {
      held.push_back(std::make_unique<RawConnection>(port, "127.0.0.2"));
      held.back()->send_all(head);
    } catch (const std::exception&) {
      std::this_thread::sleep_for(1ms);
    }
  }
  while (!stop) std::this_thread::sleep_for(50ms);
}

void gzip_held(int port, const std::atomic<bool>& stop) {
  const std::string inflated = "{\"Pod\":\"" + std::string((std::size_t{128} << 20) - 16, ' ') + "\"}";
  const std::string wire = gzip(inflated);
  const std::string head = post_head(wire.size(), "Content-Encoding: gzip\r\n");
  std::vector<std::unique_ptr<RawConnection>> held;
  while (!stop) {
    held.clear();
    for (int i = 0; i < 4; ++i) {
      held.push_back(std::make_unique<RawConnection>(port, "127.0.0.2"));
      held.back()->send_all(head + wire.substr(0, wire.size() - 8));
    }
    for (int i = 0; i < 100 && !stop; ++i) std::this_thread::sleep_for(50ms);
  }
}

void unread_answers(int port, const std::atomic<bool>& stop) {
  const std::string body = passing_body(1600, 10 << 10);
  const std::string request = post_head(body.size()) + body;
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 40 && !stop; ++i) {
    held.push_back(std::make_unique<RawConnection>(port, "127.0.0.2"));
    held.back()->send_all(request);
  }
  while (!stop) std::this_thread::sleep_for(50ms);
}

void strangers(int port, const std::atomic<bool>& stop) {
  const std::string wire = gzip(passing_body(1600, 10 << 10));
  std::vector<std::thread> threads;
  for (int s = 0; s < 8; ++s) {
    threads.emplace_back([&, s] {
      const std::string source = "127.0.0." + std::to_string(3 + s);
      httplib::Client c("127.0.0.1", port);
      c.set_interface(source);
      c.set_keep_alive(true);
      c.set_tcp_nodelay(true);
      c.set_read_timeout(30s);
      httplib::Headers headers{{"Content-Encoding", "gzip"}};
      while (!stop) c.Post("/scheduler/filter", headers, wire, "application/json");
    });
  }
  for (auto& t : threads) t.join();
}

void split_head(int port, const std::atomic<bool>& stop) {
  const std::string first = "POST /scheduler/filter HTTP/1.1\nHost: extender\n\n";
  const std::string second = "Content-Length: 2\r\n\r\n{}";
  while (!stop) {
    try {
      RawConnection c(port, "127.0.0.2");
      c.send_all(first);
      std::this_thread::sleep_for(2ms);
      c.send_all(second);
      c.read_until_closed(200ms);
    } catch (const std::exception&) {
      std::this_thread::sleep_for(10ms);
    }
  }
}

// `connections` keep-alive clients, each from its own address of `addresses`, repeating one
// coded /filter body until `stop`.
void repeat_coded(int port, const std::atomic<bool>& stop, const std::string& wire, const char* coding, int connections,
                  int addresses, int first_address) {
  std::vector<std::thread> threads;
  for (int i = 0; i < connections; ++i) {
    threads.emplace_back([&, i] {
      const std::string source = "127.0.0." + std::to_string(first_address + i % addresses);
      httplib::Client c("127.0.0.1", port);
      c.set_interface(source);
      c.set_keep_alive(true);
      c.set_tcp_nodelay(true);
      c.set_read_timeout(30s);
      httplib::Headers headers{{"Content-Encoding", coding}};
      while (!stop) c.Post("/scheduler/filter", headers, wire, "application/json");
    });
  }
  for (auto& t : threads) t.join();
}

void lying_size(int port, const std::atomic<bool>& stop) {
  std::string liar = gzip("");
  const std::uint32_t claimed = 51u << 20 | 200u << 10;
  for (int i = 0; i < 4; ++i) liar[liar.size() - 4 + i] = static_cast<char>((claimed >> (8 * i)) & 0xff);
  const std::string junk(52'000, 'j');
  std::thread deflate([&] { repeat_coded(port, stop, junk, "deflate", 2, 1, 20); });
  repeat_coded(port, stop, liar, "gzip", 6, 3, 10);
  deflate.join();
}

// A NodeNames /filter of `names` names of about 10 bytes whose gzip is about 2 bytes a name.
std::string names_body(int names) {
  std::string body =
      R"({"Pod":{"metadata":{"name":"p","namespace":"default","uid":"00000000-0000-4000-8000-000000000002"},)"
      R"("spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}},"NodeNames":[)";
  std::uint64_t x = 88172645463325252ull;
  for (int i = 0; i < names; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    if (i) body += ',';
    body += "\"n" + std::to_string(x % 1000000) + "\"";
  }
  return body + "]}";
}

void medium_body(int port, const std::atomic<bool>& stop) {
  static const std::string wire = gzip(names_body(90'000));
  repeat_coded(port, stop, wire, "gzip", 8, 8, 30);
}

bool run(const char* name, const Attack& attack, const extender::bench::ScenarioFlags& flags,
         const std::string& real_body) {
  const int seconds = flags.seconds;
  DaemonProcess d({}, kConfig);
  std::atomic<bool> stop{false};
  std::thread attacker([&] {
    flags.become_stranger();
    attack(d.port(), stop);
  });
  std::this_thread::sleep_for(1s);
  std::atomic<bool> real_stop{false};
  Report r;
  std::thread real([&] { r = real_client(d.port(), real_body, real_stop); });
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  real_stop = true;
  real.join();
  stop = true;
  attacker.join();
  std::printf("%-16s calls %6d  failures %4d  median %8.2f ms  p99 %8.2f ms  worst %8.2f ms\n", name, r.calls,
              r.failures, at(r.ms, 0.5), at(r.ms, 0.99), at(r.ms, 1.0));
  return r.failures == 0;
}

}  // namespace

int main(int argc, char** argv) {
  const auto flags = extender::bench::parse_scenario_flags(argc, argv, "hostile_bench", 10);
  if (!flags) return 2;
  const int seconds = flags->seconds;
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
  const std::string real_body =
      read_file(std::string(EXTENDER_FIXTURES_DIR) + "/protocol-examples/filter-request-nodes.json");
  const std::pair<const char*, Attack> scenarios[] = {
      {"lockout", lockout},        {"gzip-held", gzip_held},   {"unread-answers", unread_answers},
      {"strangers", strangers},    {"split-head", split_head}, {"lying-size", lying_size},
      {"medium-body", medium_body}};
  bool ok = true;
  std::printf(
      "the real client: keep-alive POST /scheduler/filter (fixture, Nodes form) from 127.0.0.1, %d s per scenario; "
      "the strangers %s\n",
      seconds, flags->idle_strangers ? "under SCHED_IDLE" : "at normal priority");
  for (const auto& [name, attack] : scenarios) {
    if (!flags->wanted(name)) continue;
    ok = run(name, attack, *flags, real_body) && ok;
  }
  return ok ? 0 : 1;
}
