// The daemon against hostile or careless peers, over real sockets: who may reach what, bodies and
// heads that would exhaust memory, slow and idle connections that would starve the workers, TLS
// client names and certificate rotation. Time bounds here are liveness bounds (a starved worker
// takes five seconds or more), not speed claims.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "daemon/daemon_process.h"
#include "daemon/tls_client.h"
#include "support/files.h"
#include "support/test_pki.h"

namespace extender::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* kAdmin = "admin:\n  listen: 127.0.0.1:0\n";

// A first non-loopback IPv4 address of this machine, or "".
std::string outside_address() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  std::string found;
  for (ifaddrs* a = list; a && found.empty(); a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if ((ntohl(in->sin_addr.s_addr) >> 24) == 127) continue;
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    found = buf;
  }
  freeifaddrs(list);
  return found;
}

std::string gpu_pod(const std::string& name, int gpus = 1) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"t","uid":"uid-)" + name +
         R"("},"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":")" + std::to_string(gpus) + R"("}}}]}})";
}

// A Nodes-form body of about `bytes`, each node with 8 GPUs and a long images list (as real
// nodes carry).
std::string big_body(std::size_t bytes) {
  std::string images = "[";
  for (int i = 0; i < 40; ++i) {
    if (i) images += ",";
    images +=
        R"({"names":["registry.example.com/team/image-)" + std::to_string(i) +
        R"(@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","registry.example.com/team/image-)" +
        std::to_string(i) + R"(:v1.2.3"],"sizeBytes":123456789})";
  }
  images += "]";
  std::string body = R"({"Pod":)" + gpu_pod("big") + R"(,"Nodes":{"metadata":{},"items":[)";
  for (int i = 0; body.size() < bytes; ++i) {
    if (i) body += ",";
    body +=
        R"({"metadata":{"name":"node-)" + std::to_string(i) +
        R"(","labels":{"nvidia.com/gpu.memory":"81559"}},"status":{"allocatable":{"nvidia.com/gpu":"8"},"images":)" +
        images + "}}";
  }
  body += R"(]},"NodeNames":null})";
  return body;
}

void raise_fd_limit() {
  rlimit r{};
  getrlimit(RLIMIT_NOFILE, &r);
  r.rlim_cur = r.rlim_max;
  setrlimit(RLIMIT_NOFILE, &r);
}

TEST(Roles, DebugAndAdminAnswerLoopbackPeersOnlyWhateverTheListenerBinds) {
  const std::string outside = outside_address();
  if (outside.empty()) GTEST_SKIP() << "this machine has no non-loopback IPv4 address to call from";
  DaemonProcess d({"--admin-listen", "0.0.0.0:0"});
  httplib::Client far(outside, d.admin_port());
  auto debug = far.Get("/debug/state");
  ASSERT_TRUE(debug);
  EXPECT_EQ(debug->status, 403) << debug->body;
  EXPECT_NE(debug->body.find("loopback"), std::string::npos);
  auto admin = far.Delete("/admin/pods/x");
  ASSERT_TRUE(admin);
  EXPECT_EQ(admin->status, 403);
  EXPECT_EQ(far.Get("/healthz")->status, 200) << "probes come from the node, not from loopback";
  EXPECT_EQ(far.Get("/metrics")->status, 200);
  httplib::Client near("127.0.0.1", d.admin_port());
  EXPECT_EQ(near.Get("/debug/state")->status, 200);
  EXPECT_NE(d.wait_for_log("403, debug and admin endpoints answer loopback peers only").find(outside),
            std::string::npos)
      << "the refusal is logged with the caller's address";
}

// The status of GET `path` from `source` (127.0.0.6 is where a mesh sidecar forwards from).
int status_from(const char* source, int port, const std::string& path) {
  RawConnection conn(port, source);
  if (!conn.send_all("GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")) return -1;
  return status_of(conn.read_until_closed(5s));
}

TEST(Roles, DebugAndAdminAnswerOnly127001NotTheRestOfTheLoopbackRange) {
  DaemonProcess d({}, "admin:\n  listen: 127.0.0.1:0\n");
  EXPECT_EQ(status_from("127.0.0.1", d.admin_port(), "/debug/state"), 200);
  EXPECT_EQ(status_from("127.0.0.6", d.admin_port(), "/debug/state"), 403);
  EXPECT_EQ(status_from("127.1.2.3", d.admin_port(), "/debug/state"), 403);
  EXPECT_EQ(status_from("127.0.0.6", d.port(), "/healthz"), 200) << "other routes still answer any peer";
}

TEST(Roles, DebugOnTheSchedulerListenerIsStillLoopbackOnly) {
  const std::string outside = outside_address();
  if (outside.empty()) GTEST_SKIP() << "this machine has no non-loopback IPv4 address to call from";
  DaemonProcess d({"--listen", "0.0.0.0:0"}, "admin:\n  listen: \"\"\n");
  httplib::Client far(outside, d.port());
  EXPECT_EQ(far.Get("/debug/state")->status, 403);
  EXPECT_EQ(httplib::Client("127.0.0.1", d.port()).Get("/debug/state")->status, 200);
}

class Limits : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    daemon_ = new DaemonProcess({}, std::string("server:\n  max_body_bytes: 32Mi\n") + kAdmin);
  }
  static void TearDownTestSuite() {
    EXPECT_EQ(daemon_->stop(), 0) << daemon_->log();
    delete daemon_;
  }
  static DaemonProcess* daemon_;
};
DaemonProcess* Limits::daemon_ = nullptr;

TEST_F(Limits, AGetWithABodyIsRefusedWithoutReadingIt) {
  for (int port : {daemon_->port(), daemon_->admin_port()}) {
    RawConnection conn(port);
    ASSERT_TRUE(conn.send_all("GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 400000000\r\n\r\n"));
    bool closed = false;
    const std::string response = conn.read_until_closed(2s, &closed);
    EXPECT_EQ(status_of(response), 400) << response;
    EXPECT_NE(response.find("GET requests carry no body"), std::string::npos) << response;
    EXPECT_TRUE(closed);
    RawConnection chunked(port);
    ASSERT_TRUE(chunked.send_all("DELETE /admin/pods/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"));
    EXPECT_EQ(status_of(chunked.read_until_closed(2s)), 400);
  }
  EXPECT_LT(daemon_->memory(), 200ll << 20);
}

TEST_F(Limits, HeaderLinesAreCappedInCountAndBytes) {
  std::string many = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 150; ++i) many += "X-Filler-" + std::to_string(i) + ": y\r\n";
  RawConnection count(daemon_->port());
  count.send_all(many + "\r\n");
  const std::string too_many = count.read_until_closed(2s);
  EXPECT_EQ(status_of(too_many), 431) << too_many;
  EXPECT_NE(too_many.find("header lines"), std::string::npos) << too_many;

  RawConnection bytes(daemon_->port());
  bytes.send_all("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(70 << 10, 'a') + "\r\n\r\n");
  const std::string too_big = bytes.read_until_closed(2s);
  EXPECT_EQ(status_of(too_big), 431) << too_big.substr(0, 300);
}

TEST_F(Limits, ThreeHundredMegabytesOfHeadersAreRefusedEarlyAndMemoryReturns) {
  [[maybe_unused]] const long long before = daemon_->memory();
  RawConnection conn(daemon_->port());
  ASSERT_TRUE(conn.send_all("GET /healthz HTTP/1.1\r\nHost: x\r\n"));
  const std::string line = "X-Flood: " + std::string(1000, 'z') + "\r\n";
  std::string block;
  for (int i = 0; i < 1000; ++i) block += line;  // ~1 MB
  std::size_t sent = 0;
  while (sent < (300u << 20) && conn.send_all(block)) sent += block.size();
  EXPECT_LT(sent, 300u << 20) << "the daemon read 300 MB of headers instead of closing the connection";
  const std::string response = conn.read_until_closed(2s);
  EXPECT_EQ(status_of(response), 431) << response.substr(0, 200);
  std::this_thread::sleep_for(200ms);
#if !defined(__SANITIZE_THREAD__)
  EXPECT_LT(daemon_->memory(), before + (16ll << 20)) << "memory held after the flood";
#endif
  auto res = httplib::Client("127.0.0.1", daemon_->port()).Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST_F(Limits, ManyLargePrioritizeBodiesLeaveMemoryBounded) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's allocator keeps freed memory (quarantine, shadow): RSS says nothing here";
#endif
  const std::string body = big_body(16u << 20);
  httplib::Client warm("127.0.0.1", daemon_->port());
  ASSERT_EQ(warm.Get("/healthz")->status, 200);
  const long long idle = daemon_->memory();
  for (int i = 0; i < 40; ++i) {
    httplib::Client c("127.0.0.1", daemon_->port());  // a fresh connection each time
    c.set_read_timeout(30, 0);
    auto res = c.Post("/prioritize", body, "application/json");
    ASSERT_TRUE(res) << "request " << i;
    ASSERT_EQ(res->status, 200) << res->body.substr(0, 300);
    ASSERT_EQ(res->body.front(), '[');
  }
  std::this_thread::sleep_for(300ms);
  const long long after = daemon_->memory();
  EXPECT_LT(after, idle + 4 * static_cast<long long>(body.size()))
      << "RSS " << (after >> 20) << " MiB after 40 bodies of " << (body.size() >> 20) << " MiB; idle was "
      << (idle >> 20) << " MiB";
}

TEST(SlowClients, TricklingAndIdleConnectionsDoNotStarveTheScheduler) {
  raise_fd_limit();
  DaemonProcess d({}, kAdmin);
  const std::string filter = R"({"Pod":)" + gpu_pod("p") + R"(,"Nodes":null,"NodeNames":["a","b"]})";
  std::atomic<bool> stop{false};
  // 256 connections that send a header line every 500 ms and 256 that send nothing, on each
  // listener, all from 127.0.0.1 like the well-behaved client; closed ones are opened again.
  auto attack = [&](int port) {
    std::vector<std::unique_ptr<RawConnection>> trickling, idle;
    auto refill = [&](std::vector<std::unique_ptr<RawConnection>>& set, bool trickle) {
      for (auto& c : set) {
        if (!c || (trickle && !c->send_all("X-Slow: 1\r\n"))) {
          c = std::make_unique<RawConnection>(port);
          if (trickle) c->send_all("GET /healthz HTTP/1.1\r\nHost: x\r\n");
        }
      }
    };
    trickling.resize(256);
    idle.resize(256);
    while (!stop) {
      refill(trickling, true);
      refill(idle, false);
      for (auto& c : idle) {
        if (c->closed_by_peer()) c.reset();
      }
      std::this_thread::sleep_for(500ms);
    }
  };
  std::thread a1(attack, d.port());
  std::thread a2(attack, d.admin_port());
  std::this_thread::sleep_for(1s);
  std::chrono::nanoseconds worst{0};
  int answered = 0;
  const auto until = Clock::now() + 7s;
  while (Clock::now() < until) {
    for (int port : {d.port(), d.admin_port()}) {
      httplib::Client c("127.0.0.1", port);
      c.set_connection_timeout(2, 0);
      c.set_read_timeout(2, 0);
      const auto t0 = Clock::now();
      auto health = c.Get("/healthz");
      const auto t1 = Clock::now();
      ASSERT_TRUE(health) << "no answer to /healthz on port " << port;
      EXPECT_EQ(health->status, 200);
      worst = std::max(worst, t1 - t0);
      if (port == d.port()) {
        auto f = c.Post("/filter", filter, "application/json");
        const auto t2 = Clock::now();
        ASSERT_TRUE(f) << "no answer to /filter";
        EXPECT_EQ(f->status, 200);
        worst = std::max(worst, t2 - t1);
      }
      ++answered;
    }
    std::this_thread::sleep_for(100ms);
  }
  stop = true;
  a1.join();
  a2.join();
  EXPECT_GT(answered, 20);
  EXPECT_LT(worst, 1s) << "worst answer took " << std::chrono::duration<double>(worst).count() << " s";
}

// A POST head declaring `declared` body bytes, for connections that then send little or nothing.
std::string post_head(std::uint64_t declared) {
  return "POST /scheduler/filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(declared) + "\r\n\r\n";
}

TEST(Budgets, OnePeerHoldsNoMoreThanItsCapOfConnectionsSendingBodies) {
  DaemonProcess d({}, std::string("server:\n  max_connections_per_peer: 8\n") + kAdmin);
  // Each head asks for 100 Continue, and the next connection opens once the daemon has answered
  // (or closed) this one: the daemon has read every admitted head, so none is a quiet connection
  // it could close to make room, and every admitted body is within its first second.
  std::string head = post_head(std::uint64_t{128} << 20);
  head.insert(head.size() - 2, "Expect: 100-continue\r\n");
  std::vector<std::unique_ptr<RawConnection>> held;
  int continued = 0;
  for (int i = 0; i < 40; ++i) {
    held.push_back(std::make_unique<RawConnection>(d.port(), "127.0.0.2"));
    held.back()->send_all(head);
    continued += status_of(held.back()->read_response(2s)) == 100 ? 1 : 0;
  }
  EXPECT_EQ(continued, 8) << "bodies invited from one address, server.max_connections_per_peer 8";
  int open = 0;
  for (auto& c : held) open += c->closed_by_peer() ? 0 : 1;
  EXPECT_LE(open, 8) << "connections from one address past server.max_connections_per_peer, all sending bodies";
  EXPECT_EQ(status_from("127.0.0.1", d.port(), "/healthz"), 200);
  EXPECT_NE(d.log().find("server.max_connections_per_peer"), std::string::npos) << d.log();
}

TEST(Budgets, BodiesBelowTheMinimumRateMakeRoomForANewConnection) {
  DaemonProcess d({}, std::string("server:\n  max_connections: 16\n  max_connections_per_peer: 16\n") + kAdmin);
  // Each body starts once the daemon has read its head (its 100 Continue), so all 16 are past
  // their first second, below the minimum rate, when the new connection comes.
  std::string head = post_head(std::uint64_t{64} << 20);
  head.insert(head.size() - 2, "Expect: 100-continue\r\n");
  std::vector<std::unique_ptr<RawConnection>> stalled;
  for (int i = 0; i < 16; ++i) {
    stalled.push_back(std::make_unique<RawConnection>(d.port(), "127.0.0.2"));
    stalled.back()->send_all(head);
    ASSERT_EQ(status_of(stalled.back()->read_response(5s)), 100) << "connection " << i;
    stalled.back()->send_all("{");
  }
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(status_from("127.0.0.1", d.port(), "/healthz"), 200)
      << "every slot held by a body that stopped arriving; none was closed for a new connection";
}

TEST(Budgets, ABodyDeadlineCountsTheBytesReceivedNotTheLengthDeclared) {
  DaemonProcess d({}, std::string("server:\n  read_timeout: 1s\n") + kAdmin);
  RawConnection conn(d.port());
  ASSERT_TRUE(conn.send_all(post_head(std::uint64_t{128} << 20) + "{\"Pod\":"));
  const std::string answer = conn.read_until_closed(5s);
  EXPECT_EQ(status_of(answer), 408) << "a declared 128 MiB bought 128 s for a body that stopped: " << answer;
}

TEST(Budgets, ABodyBelowTheMinimumRateMakesRoomInTheBodyBudget) {
  DaemonProcess d({}, std::string("server:\n  max_body_bytes: 4Mi\n  max_buffered_bytes: 4Mi\n") + kAdmin);
  RawConnection stalled(d.port(), "127.0.0.2");
  ASSERT_TRUE(stalled.send_all(post_head(std::uint64_t{4} << 20) + std::string(std::size_t{2} << 20, ' ')));
  std::this_thread::sleep_for(2500ms);
  httplib::Client c("127.0.0.1", d.port());
  c.set_read_timeout(10s);
  auto r = c.Post("/scheduler/filter", big_body(std::size_t{5} << 19), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << "the budget stayed held by a body that stopped arriving: " << r->body.substr(0, 300);
  EXPECT_TRUE(stalled.closed_by_peer() || status_of(stalled.read_until_closed(1s)) >= 400);
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST(Budgets, AFloodOfCallsFromOnePeerIsLoggedWithinItsBudgetAndCounted) {
  DaemonProcess d({}, "server:\n  pacing:\n    hold: 0s\nlogging:\n  lines_per_caller: 5\n");
  httplib::Client flood("127.0.0.1", d.port());
  flood.set_interface("127.0.0.2");
  const std::string flood_body = R"({"Pod":)" + gpu_pod("flood") + R"(,"NodeNames":["n1"]})";
  const auto started = Clock::now();
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(flood.Post("/filter", flood_body, "application/json"));
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  httplib::Client own("127.0.0.1", d.port());
  ASSERT_TRUE(own.Post("/filter", R"({"Pod":)" + gpu_pod("own") + R"(,"NodeNames":["n1"]})", "application/json"));
  std::this_thread::sleep_for(300ms);  // the flooding peer's next token
  ASSERT_TRUE(flood.Post("/filter", flood_body, "application/json"));
  // Every call is written or counted on the caller's next written line, and the last one is written.
  const auto accounted = [](const std::string& log) {
    std::size_t n = count_of(log, "filter t/flood:");
    const std::string tail = " calls from 127.0.0.2 not logged";
    for (auto end = log.find(tail); end != std::string::npos; end = log.find(tail, end + tail.size())) {
      const auto begin = log.rfind("; ", end);
      if (begin != std::string::npos) n += std::stoul(log.substr(begin + 2, end - begin - 2));
    }
    return n;
  };
  std::string log = d.log();
  for (const auto until = Clock::now() + 5s; accounted(log) < 301 && Clock::now() < until; log = d.log()) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(accounted(log), 301u) << log;
  EXPECT_NE(log.find("calls from 127.0.0.2 not logged"), std::string::npos) << log;
  EXPECT_NE(log.find("filter t/own:"), std::string::npos) << "another caller keeps its own budget";
  // The burst (10), five a second while it lasted, and the last call.
  EXPECT_LE(count_of(log, "filter t/flood:"), 10 + 5 * seconds + 2) << log;
}

// The value of the series `name{labels}` in a /metrics text; -1 when absent.
double metric(const std::string& text, const std::string& series) {
  const auto at = text.find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size() + 2));
}

TEST(Budgets, ACallerRepeatingOnePodOrSendingErrorsIsAnsweredLateAndOthersAreNot) {
  // server.pacing as shipped but a shorter hold: past 10 calls a pod or 20 errors a second.
  DaemonProcess d({}, std::string("server:\n  pacing: {hold: 20ms}\n") + kAdmin);
  httplib::Client loop("127.0.0.1", d.port());
  loop.set_interface("127.0.0.2");
  const std::string body = R"({"Pod":)" + gpu_pod("loop") + R"(,"NodeNames":["n1"]})";
  const auto started = Clock::now();
  std::string first;
  for (int i = 0; i < 20; ++i) {
    auto r = loop.Post("/filter", body, "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
    if (i == 0) first = r->body;
    EXPECT_EQ(r->body, first) << "a held answer is still the answer";
  }
  // Calls 11 to 19 within the second were held 20 ms, the 20th twice that.
  EXPECT_GE(Clock::now() - started, 9 * 18ms + 36ms);
  httplib::Client errors("127.0.0.1", d.port());
  errors.set_interface("127.0.0.3");
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(errors.Post("/filter", "{}", "application/json"));
  httplib::Client own("127.0.0.1", d.port());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(own.Post("/filter", R"({"Pod":)" + gpu_pod("own-" + std::to_string(i)) + R"(,"NodeNames":["n1"]})",
                         "application/json"));
  }
  httplib::Client admin("127.0.0.1", d.admin_port());
  auto m = admin.Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(metric(m->body, R"(scheduler_extender_paced_calls_total{reason="repeated"})"), 10) << m->body;
  // The budget's burst (40) answered at once, then 20 a second while the others were held.
  const double errors_held = metric(m->body, R"(scheduler_extender_paced_calls_total{reason="errors"})");
  EXPECT_GE(errors_held, 20);
  EXPECT_LE(errors_held, 60);
  const std::string log = d.wait_for_log("filter t/own-4:");
  EXPECT_NE(log.find("answer held 20 ms: call 11 of filter for this pod from 127.0.0.2"), std::string::npos) << log;
  EXPECT_NE(log.find("answer held 40 ms: call 20 of filter"), std::string::npos) << log;
  EXPECT_EQ(count_of(log, "answer held"), 10u) << "only the repeated calls' lines say so (400s carry no note)";
  for (int i = 0; i < 5; ++i) {
    const auto line = log.find("filter t/own-" + std::to_string(i) + ":");
    ASSERT_NE(line, std::string::npos);
    EXPECT_EQ(log.substr(line, log.find('\n', line) - line).find("held"), std::string::npos);
  }
}

TEST(Budgets, OnePeerHoldsNoMoreThanItsShareOfTheBodyBudget) {
  // Budget 8 MiB, share max(4 MiB, one 2 MiB body charged 2.5 times) = 5 MiB; 1.5 MiB counts 3.75.
  DaemonProcess d({}, std::string("server:\n  max_body_bytes: 2Mi\n  max_buffered_bytes: 8Mi\n") + kAdmin);
  const std::string part(std::size_t{3} << 19, ' ');
  RawConnection first(d.port(), "127.0.0.2");
  ASSERT_TRUE(first.send_all(post_head(std::uint64_t{2} << 20) + part));
  RawConnection second(d.port(), "127.0.0.2");
  second.send_all(post_head(std::uint64_t{2} << 20) + part);
  // Whichever body the loop read second is the one past the share (a slow build may read the
  // second connection's bytes first): one of the two is refused, the other stays open.
  std::string refused = second.read_until_closed(5s);
  RawConnection* kept = &first;
  if (status_of(refused) != 503) {
    refused = first.read_until_closed(5s);
    kept = &second;
  }
  EXPECT_EQ(status_of(refused), 503) << "one peer held more than its share of the body budget";
  httplib::Client c("127.0.0.1", d.port());
  c.set_read_timeout(10s);
  auto r = c.Post("/scheduler/filter", big_body(std::size_t{3} << 19), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << "another peer found the budget held by one stranger: " << r->body.substr(0, 300);
  EXPECT_FALSE(kept->closed_by_peer()) << "the stranger's body within its share was closed";
}

class Tls : public ::testing::Test {
 protected:
  void SetUp() override {
    using kube::testing::issue;
    using kube::testing::Role;
    ca_ = issue("test-ca", Role::kCa, nullptr);
    dir_ = std::filesystem::temp_directory_path() / ("extender-tls-" + std::to_string(getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    write_server_cert("server-1");
    write(dir_ / "ca.crt", ca_.cert_pem);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void write(const std::filesystem::path& path, const std::string& text) {
    const auto tmp = path.string() + ".tmp";
    std::ofstream(tmp) << text;
    std::filesystem::rename(tmp, path);  // as a Secret volume swaps its files
  }
  void write_server_cert(const std::string& cn) {
    auto server = kube::testing::issue(cn, kube::testing::Role::kServer, &ca_);
    write(dir_ / "tls.key.new", server.key_pem);
    write(dir_ / "tls.crt.new", server.cert_pem);
    std::filesystem::rename(dir_ / "tls.key.new", dir_ / "tls.key");
    std::filesystem::rename(dir_ / "tls.crt.new", dir_ / "tls.crt");
  }
  std::string config(const std::string& names) {
    return "server:\n  tls:\n    cert_file: " + (dir_ / "tls.crt").string() +
           "\n    key_file: " + (dir_ / "tls.key").string() + "\n    client_ca_file: " + (dir_ / "ca.crt").string() +
           "\n    client_names: " + names + "\n" + kAdmin;
  }
  TlsIdentity client(const std::string& cn) {
    auto c = kube::testing::issue(cn, kube::testing::Role::kClient, &ca_);
    return {ca_.cert_pem, c.cert_pem, c.key_pem};
  }

  kube::testing::Issued ca_;
  std::filesystem::path dir_;
};

TEST_F(Tls, OnlyNamedClientCertificatesMayCall) {
  DaemonProcess d({}, config("[kube-scheduler, gpu-scheduler]"));
  const std::string bind = fixture("protocol-examples/bind-request.json");
  TlsAnswer allowed = tls_request(d.port(), client("gpu-scheduler"), "POST", "/scheduler/bind", bind);
  EXPECT_EQ(allowed.status, 200) << allowed.body;
  TlsAnswer other = tls_request(d.port(), client("tenant-pod"), "POST", "/scheduler/bind", bind);
  EXPECT_EQ(other.status, 403) << other.body;
  EXPECT_NE(other.body.find("server.tls.client_names"), std::string::npos);
  EXPECT_TRUE(allowed.handshake);
  TlsAnswer none = tls_request(d.port(), {ca_.cert_pem, "", ""}, "GET", "/healthz");
  EXPECT_EQ(none.status, -1) << "no client certificate, no answer";
  const std::string log = d.wait_for_log("refused the client certificate");
  EXPECT_NE(log.find("names: tenant-pod"), std::string::npos) << log;
  EXPECT_EQ(log.find("bind t/"), std::string::npos) << "no handler ran for the refused client";
}

TEST_F(Tls, ARefusedCertificateIsAnsweredAtItsHeadWithoutUploadingTheBody) {
  DaemonProcess d({}, config("[kube-scheduler]"));
  const std::string head =
      "POST /scheduler/filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
      "134217728\r\n\r\n";
  TlsAnswer refused = tls_exchange(d.port(), client("tenant-pod"), head);
  EXPECT_TRUE(refused.handshake);
  EXPECT_EQ(refused.status, 403) << "a refused certificate must not be made to send its 128 MiB first";
  EXPECT_NE(refused.body.find("server.tls.client_names"), std::string::npos) << refused.body;
  TlsAnswer allowed = tls_request(d.port(), client("kube-scheduler"), "GET", "/healthz");
  EXPECT_EQ(allowed.status, 200) << allowed.body;
}

TEST_F(Tls, ACertificateWithoutTheAllowedNameIsRefusedWhateverElseItNames) {
  DaemonProcess d({}, config("[kube-scheduler]"));
  for (const char* cn : {"kube-scheduler.evil", "kube-schedule", "KUBE-SCHEDULER", " kube-scheduler"}) {
    TlsAnswer a = tls_request(d.port(), client(cn), "GET", "/healthz");
    EXPECT_EQ(a.status, 403) << cn;
  }
}

TEST_F(Tls, WithoutAClientCaAnyClientCompletesTheHandshakeAndIsServed) {
  DaemonProcess d({}, "server:\n  tls:\n    cert_file: " + (dir_ / "tls.crt").string() +
                          "\n    key_file: " + (dir_ / "tls.key").string() + "\n" + kAdmin);
  TlsAnswer anonymous = tls_request(d.port(), {ca_.cert_pem, "", ""}, "GET", "/healthz");
  EXPECT_TRUE(anonymous.handshake);
  EXPECT_EQ(anonymous.status, 200) << anonymous.body;
  EXPECT_EQ(anonymous.server_cn, "server-1");
  const std::string bind = fixture("protocol-examples/bind-request.json");
  TlsAnswer with_cert = tls_request(d.port(), client("anyone"), "POST", "/scheduler/bind", bind);
  EXPECT_TRUE(with_cert.handshake);
  EXPECT_EQ(with_cert.status, 200) << with_cert.body;
}

TEST_F(Tls, CertificatesRotateWithoutAFailedRequest) {
  DaemonProcess d({}, config("[]"));
  const TlsIdentity me = client("kube-scheduler");
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0}, before{0}, after{0};
  std::thread caller([&] {
    while (!stop) {
      TlsAnswer a = tls_request(d.port(), me, "GET", "/healthz");
      if (a.status != 200) ++failures;
      ++(a.server_cn == "server-2" ? after : before);
      std::this_thread::sleep_for(10ms);
    }
  });
  const auto wait_for = [](const std::atomic<int>& count, int n) {
    const auto deadline = Clock::now() + 20s;
    while (count.load() < n && Clock::now() < deadline) std::this_thread::sleep_for(20ms);
    return count.load() >= n;
  };
  const bool served_before = wait_for(before, 20);
  write_server_cert("server-2");
  const bool rotated = wait_for(after, 20);
  stop = true;
  caller.join();
  EXPECT_TRUE(served_before) << "fewer than 20 requests served with the first certificate within 20 s";
  EXPECT_TRUE(rotated) << "fewer than 20 requests served with the new certificate within 20 s";
  EXPECT_EQ(failures.load(), 0) << "of " << before.load() + after.load() << " requests";
  EXPECT_NE(d.log().find("TLS files changed; new connections get certificate"), std::string::npos);
}

}  // namespace
}  // namespace extender::testing
