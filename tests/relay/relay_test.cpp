// The relay over real loopback sockets: in front of an upstream that answers, one that never
// answers, and one that recovers. Timing is asserted only as "did not wait for the upstream
// timeout", with wide margins, never as performance.
#include "extender/relay/relay.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "support/test_pki.h"

namespace extender::relay {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* kPath = "/scheduler/prioritize-unmanaged";

// A cpp-httplib upstream on a free loopback port, served from a thread of its own.
class Upstream {
 public:
  explicit Upstream(std::function<void(httplib::Server&)> routes) {
    routes(server_);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(1ms);
  }
  ~Upstream() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// A listener whose connections complete (the kernel's backlog) and are never answered.
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 64), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~SilentListener() { ::close(fd_); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

std::unique_ptr<Relay> start_relay(std::string upstream, std::chrono::milliseconds upstream_timeout = 2000ms,
                                   std::chrono::milliseconds open_for = 5000ms,
                                   std::size_t max_body_bytes = std::size_t{64} << 20) {
  RelayOptions options;
  options.listen_host = "127.0.0.1";
  options.listen_port = 0;
  options.upstream = std::move(upstream);
  options.upstream_timeout = upstream_timeout;
  options.breaker.open_for = open_for;
  options.max_body_bytes = max_body_bytes;
  auto relay = Relay::create(options);
  EXPECT_TRUE(relay.ok()) << (relay.ok() ? "" : relay.message());
  if (!relay) return nullptr;
  (*relay)->start();
  return std::move(*relay);
}

struct Answer {
  int status = 0;
  std::string body;
  std::string content_type;
  Clock::duration took{};
};

Answer post(const Relay& relay, const std::string& path, const std::string& body,
            const std::string& type = "application/json") {
  httplib::Client client("127.0.0.1", relay.port());
  client.set_read_timeout(10, 0);
  const auto start = Clock::now();
  auto r = client.Post(path.c_str(), body, type.c_str());
  Answer a;
  a.took = Clock::now() - start;
  if (r) {
    a.status = r->status;
    a.body = r->body;
    a.content_type = r->get_header_value("Content-Type");
  }
  return a;
}

TEST(RelayParse, ListenLoopbackOnly) {
  struct Row {
    std::string text;
    bool ok;
    std::string host;
  };
  const Row rows[] = {
      {"127.0.0.1:8890", true, "127.0.0.1"},
      {"127.1.2.3:80", true, "127.1.2.3"},
      {"localhost:8890", true, "127.0.0.1"},
      {"[::1]:8890", true, "::1"},
      {"0.0.0.0:8890", false, ""},
      {"10.0.0.1:8890", false, ""},
      {"[::]:8890", false, ""},
      {"example.com:8890", false, ""},
      {"127.0.0.1", false, ""},
      {"", false, ""},
      {"127.0.0.1:99999", false, ""},
      {":8890", false, ""},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.text);
    auto l = parse_listen(row.text);
    ASSERT_EQ(l.ok(), row.ok) << (l.ok() ? "" : l.message());
    if (row.ok) {
      EXPECT_EQ(l->host, row.host);
    }
  }
  auto refused = parse_listen("0.0.0.0:8890");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("loopback"), std::string::npos) << refused.message();
}

TEST(RelayParse, Upstream) {
  struct Row {
    std::string text;
    bool ok;
    std::string scheme_host_port, path;
  };
  const Row rows[] = {
      {"http://127.0.0.1:8888", true, "http://127.0.0.1:8888", ""},
      {"http://127.0.0.1:8888/", true, "http://127.0.0.1:8888", ""},
      {"https://ext.kube-system.svc:8888/scheduler", true, "https://ext.kube-system.svc:8888", "/scheduler"},
      {"http://daemon", true, "http://daemon:80", ""},
      {"https://daemon/x/", true, "https://daemon:443", "/x"},
      {"http://[::1]:8888/s", true, "http://[::1]:8888", "/s"},
      {"ftp://daemon:21", false, "", ""},
      {"daemon:8888", false, "", ""},
      {"http://", false, "", ""},
      {"http://user:pw@daemon:1", false, "", ""},
      {"http://daemon:0", false, "", ""},
      {"http://daemon:8888/a b", false, "", ""},
      {"http://daemon:8888/a?b=c", false, "", ""},
      {"http://dae\r\nmon:1", false, "", ""},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.text);
    auto u = parse_upstream(row.text);
    ASSERT_EQ(u.ok(), row.ok) << (u.ok() ? "" : u.message());
    if (row.ok) {
      EXPECT_EQ(u->scheme_host_port(), row.scheme_host_port);
      EXPECT_EQ(u->path, row.path);
    }
  }
}

TEST(RelayParse, CommandLine) {
  auto cli = parse_command_line({"--upstream", "http://127.0.0.1:8888", "--listen=127.0.0.1:9000", "--upstream-timeout",
                                 "120ms", "--open-for", "2s", "--max-body-bytes", "1024"});
  ASSERT_TRUE(cli.ok()) << cli.message();
  EXPECT_EQ(cli->options.listen_port, 9000);
  EXPECT_EQ(cli->options.upstream_timeout, 120ms);
  EXPECT_EQ(cli->options.breaker.open_for, 2s);
  EXPECT_EQ(cli->options.max_body_bytes, 1024u);

  auto defaults = parse_command_line({"--upstream", "http://x:1"});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->options.upstream_timeout, 150ms);
  EXPECT_EQ(defaults->options.breaker.open_for, 5s);
  EXPECT_EQ(defaults->options.max_body_bytes, std::size_t{64} << 20);
  EXPECT_EQ(defaults->options.listen_host, "127.0.0.1");
  EXPECT_EQ(defaults->options.listen_port, 8890);

  EXPECT_FALSE(parse_command_line({}).ok());  // --upstream required
  EXPECT_FALSE(parse_command_line({"--upstream", "http://x:1", "--listen", "0.0.0.0:8890"}).ok());
  EXPECT_FALSE(parse_command_line({"--upstream", "http://x:1", "--bogus"}).ok());
  EXPECT_FALSE(parse_command_line({"--upstream"}).ok());
  EXPECT_FALSE(parse_command_line({"--upstream", "http://x:1", "--open-for", "soon"}).ok());
  EXPECT_FALSE(parse_command_line({"--upstream", "http://x:1", "--max-body-bytes", "-1"}).ok());
  EXPECT_TRUE(parse_command_line({"--help"})->show_help);
  EXPECT_TRUE(parse_command_line({"--version"})->show_version);
}

TEST(Relay, RefusesNonLoopbackListen) {
  RelayOptions options;
  options.upstream = "http://127.0.0.1:1";
  options.listen_host = "0.0.0.0";
  options.listen_port = 0;
  auto relay = Relay::create(options);
  ASSERT_FALSE(relay.ok());
  EXPECT_NE(relay.message().find("loopback"), std::string::npos) << relay.message();
}

TEST(Relay, RefusesBadTlsOptions) {
  RelayOptions options;
  options.listen_port = 0;
  options.upstream = "http://127.0.0.1:1";
  options.ca_file = "/nonexistent/ca.crt";
  EXPECT_FALSE(Relay::create(options).ok());  // CA on an http upstream
  options.upstream = "https://127.0.0.1:1";
  EXPECT_FALSE(Relay::create(options).ok());  // unreadable CA
  options.ca_file.clear();
  options.cert_file = "/etc/hostname";
  EXPECT_FALSE(Relay::create(options).ok());  // cert without key
}

TEST(Relay, PassesBodyTypeAndStatusThrough) {
  Upstream up([](httplib::Server& s) {
    s.Post(kPath, [](const httplib::Request& req, httplib::Response& res) {
      res.set_content("echo:" + req.body + "|" + req.get_header_value("Content-Type"), "application/json");
    });
    s.Post("/scheduler/filter-unmanaged", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content("filtered:" + req.body, "application/json");
    });
    s.Post("/scheduler/bad/prioritize-unmanaged", [](const httplib::Request&, httplib::Response& res) {
      res.status = 400;
      res.set_content("no", "text/plain");
    });
  });
  auto relay = start_relay(up.url());
  ASSERT_TRUE(relay);
  auto a = post(*relay, kPath, R"({"Pod":{}})", "application/json; charset=utf-8");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, R"(echo:{"Pod":{}}|application/json; charset=utf-8)");
  EXPECT_EQ(a.content_type, "application/json");
  EXPECT_EQ(post(*relay, "/scheduler/filter-unmanaged", "{}").body, "filtered:{}")
      << "the every-pod entry's filter goes through the relay too";

  // A 4xx is the daemon answering: passed back, and the breaker stays closed.
  auto b = post(*relay, "/scheduler/bad/prioritize-unmanaged", "{}");
  EXPECT_EQ(b.status, 400);
  EXPECT_EQ(b.body, "no");
  EXPECT_EQ(relay->breaker_state(), BreakerState::kClosed);
  EXPECT_EQ(post(*relay, kPath, "x").status, 200);

  // Many calls at once all pass.
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      if (post(*relay, kPath, std::to_string(i)).body.rfind("echo:" + std::to_string(i) + "|", 0) == 0) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 8);
}

// Forwards wait on the daemon rather than compute: however few the CPUs, the relay's threads
// all forward at once.
TEST(Relay, ForwardsWaitingOnTheDaemonAreAllInFlightAtOnce) {
  std::atomic<int> in_flight{0}, most{0};
  Upstream up([&](httplib::Server& s) {
    s.Post(kPath, [&](const httplib::Request&, httplib::Response& res) {
      const int now = ++in_flight;
      for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
      }
      std::this_thread::sleep_for(300ms);
      --in_flight;
      res.set_content("{}", "application/json");
    });
  });
  auto relay = start_relay(up.url());
  ASSERT_TRUE(relay);
  std::vector<std::thread> callers;
  std::atomic<int> ok{0};
  for (int i = 0; i < 6; ++i) {
    callers.emplace_back([&] { ok += post(*relay, kPath, "{}").status == 200; });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(ok.load(), 6);
  EXPECT_EQ(most.load(), 6) << "forwards were held back as if they computed";
}

TEST(Relay, IdleConnectionClosedByTheUpstreamIsNoFailure) {
  Upstream up([](httplib::Server& s) {
    s.set_keep_alive_timeout(1);
    s.Post(kPath, [](const httplib::Request& req, httplib::Response& res) { res.set_content("ok", "text/plain"); });
  });
  auto relay = start_relay(up.url(), 2s, 60s);
  ASSERT_TRUE(relay);
  EXPECT_EQ(post(*relay, kPath, "{}").status, 200);
  std::this_thread::sleep_for(1500ms);  // the upstream closes the kept-alive connection
  EXPECT_EQ(post(*relay, kPath, "{}").status, 200);
  EXPECT_EQ(relay->breaker_state(), BreakerState::kClosed);
}

TEST(Relay, NeverAnsweringUpstreamOpensTheBreakerAndLaterCallsAreRefusedAtOnce) {
  SilentListener silent;
  const auto timeout = 500ms;
  auto relay = start_relay(silent.url(), timeout, 60s);
  ASSERT_TRUE(relay);

  auto first = post(*relay, kPath, "{}");
  EXPECT_EQ(first.status, 503);
  EXPECT_GE(first.took, timeout - 100ms) << "the first call waits for the upstream timeout";
  EXPECT_EQ(relay->breaker_state(), BreakerState::kOpen);

  for (int i = 0; i < 5; ++i) {
    auto next = post(*relay, kPath, "{}");
    EXPECT_EQ(next.status, 503);
    EXPECT_FALSE(next.body.empty());
    EXPECT_LT(next.took, timeout) << "call " << i << " waited for the upstream timeout";
  }
}

TEST(Relay, ServerErrorsOpenTheBreakerToo) {
  Upstream up([](httplib::Server& s) {
    s.Post(kPath, [](const httplib::Request&, httplib::Response& res) {
      res.status = 500;
      res.set_content("boom", "text/plain");
    });
  });
  auto relay = start_relay(up.url(), 2s, 60s);
  ASSERT_TRUE(relay);
  auto first = post(*relay, kPath, "{}");
  EXPECT_EQ(first.status, 500);
  EXPECT_EQ(first.body, "boom");
  EXPECT_EQ(relay->breaker_state(), BreakerState::kOpen);
  EXPECT_EQ(post(*relay, kPath, "{}").status, 503);
}

TEST(Relay, ConnectionRefusedOpensTheBreaker) {
  int port = 0;
  {
    Upstream gone([](httplib::Server&) {});
    port = gone.port();
  }
  auto relay = start_relay("http://127.0.0.1:" + std::to_string(port), 2s, 60s);
  ASSERT_TRUE(relay);
  EXPECT_EQ(post(*relay, kPath, "{}").status, 503);
  EXPECT_EQ(relay->breaker_state(), BreakerState::kOpen);
}

TEST(Relay, RecoveredUpstreamClosesTheBreakerAfterOpenFor) {
  std::atomic<bool> slow{true};
  Upstream up([&](httplib::Server& s) {
    s.Post(kPath, [&](const httplib::Request& req, httplib::Response& res) {
      if (slow) std::this_thread::sleep_for(1500ms);
      res.set_content("ok:" + req.body, "application/json");
    });
  });
  const auto timeout = 300ms;
  auto relay = start_relay(up.url(), timeout, 200ms);
  ASSERT_TRUE(relay);

  EXPECT_EQ(post(*relay, kPath, "a").status, 503);
  auto refused = post(*relay, kPath, "b");
  EXPECT_EQ(refused.status, 503);
  EXPECT_LT(refused.took, timeout);

  slow = false;
  std::this_thread::sleep_for(300ms);  // past open_for: the next call probes
  auto probe = post(*relay, kPath, "c");
  EXPECT_EQ(probe.status, 200);
  EXPECT_EQ(probe.body, "ok:c");
  EXPECT_EQ(relay->breaker_state(), BreakerState::kClosed);
  EXPECT_EQ(post(*relay, kPath, "d").body, "ok:d");
}

TEST(Relay, OtherPathsAre404AndHealthzIs200) {
  Upstream up([](httplib::Server& s) {
    s.Post(".*", [](const httplib::Request&, httplib::Response& res) { res.set_content("up", "text/plain"); });
    s.Get(".*", [](const httplib::Request&, httplib::Response& res) { res.set_content("up", "text/plain"); });
  });
  auto relay = start_relay(up.url());
  ASSERT_TRUE(relay);
  httplib::Client client("127.0.0.1", relay->port());
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  for (const char* path : {"/scheduler/filter", "/scheduler/bind", "/", "/prioritize-unmanaged/x", "/healthz",
                           "/scheduler/filter-unmanaged/x", "/scheduler/xfilter-unmanagedx"}) {
    SCOPED_TRACE(path);
    EXPECT_EQ(post(*relay, path, "{}").status, 404);
  }
  auto get = client.Get(kPath);
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 404);
  auto other = client.Get("/metrics");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);
  // Hostile paths: long, or with characters that would need escaping upstream.
  EXPECT_EQ(post(*relay, "/" + std::string(6000, 'a') + "/prioritize-unmanaged", "{}").status, 404);
  EXPECT_EQ(post(*relay, "/a%0d%0aX:%20y/prioritize-unmanaged", "{}").status, 404);
  EXPECT_EQ(post(*relay, "/a/../prioritize-unmanaged", "{}").status, 200);  // plain characters pass
  EXPECT_EQ(relay->breaker_state(), BreakerState::kClosed);
}

TEST(Relay, BodiesAboveTheLimitAre413) {
  Upstream up([](httplib::Server& s) {
    s.Post(kPath, [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(std::to_string(req.body.size()), "text/plain");
    });
  });
  auto relay = start_relay(up.url(), 2s, 5s, 1024);
  ASSERT_TRUE(relay);
  EXPECT_EQ(post(*relay, kPath, std::string(1024, 'x')).body, "1024");
  EXPECT_EQ(post(*relay, kPath, std::string(4096, 'x')).status, 413);
  EXPECT_EQ(relay->breaker_state(), BreakerState::kClosed);
}

TEST(Relay, SurvivesGarbageOnTheSocket) {
  Upstream up([](httplib::Server& s) {
    s.Post(kPath, [](const httplib::Request&, httplib::Response& res) { res.set_content("up", "text/plain"); });
  });
  auto relay = start_relay(up.url());
  ASSERT_TRUE(relay);
  const std::string garbage[] = {
      std::string("\0\0\0\xff\xfe garbage\r\n\r\n", 17),
      "POST /scheduler/prioritize-unmanaged HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
      "POST /scheduler/prioritize-unmanaged HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
      "POST /scheduler/prioritize-unmanaged HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n",
      "POST /scheduler/prioritize-unmanaged HTTP/1.1\r\nContent-Type: " + std::string(20000, 'a') + "\r\n\r\n",
      "GET " + std::string(100000, '/') + " HTTP/1.1\r\n\r\n",
  };
  for (const auto& bytes : garbage) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(relay->port()));
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    timeval tv{2, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    char buf[512];
    (void)::recv(fd, buf, sizeof buf, 0);
    ::close(fd);
  }
  EXPECT_EQ(post(*relay, kPath, "{}").body, "up");
}

// https to the upstream: its certificate checked against --ca-file, and a client certificate
// presented when the upstream asks for one.
class RelayTls : public ::testing::Test {
 protected:
  void SetUp() override {
    namespace pki = kube::testing;
    ca_ = pki::issue("test-ca", pki::Role::kCa, nullptr);
    server_ = pki::issue("scheduler-extender", pki::Role::kServer, &ca_);
    client_ = pki::issue("kube-scheduler", pki::Role::kClient, &ca_);
    other_ca_ = pki::issue("other-ca", pki::Role::kCa, nullptr);
    char tmpl[] = "/tmp/relay-tls-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    write("ca.crt", ca_.cert_pem);
    write("other-ca.crt", other_ca_.cert_pem);
    write("tls.crt", client_.cert_pem);
    write("tls.key", client_.key_pem);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ + "/" + name) << text; }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  // An https upstream on a free port; client certificates required when `mtls`.
  struct HttpsUpstream {
    std::unique_ptr<httplib::SSLServer> server;
    int port = 0;
    std::thread thread;
    ~HttpsUpstream() {
      server->stop();
      thread.join();
    }
  };
  std::unique_ptr<HttpsUpstream> https_upstream(bool mtls) {
    auto up = std::make_unique<HttpsUpstream>();
    up->server = std::make_unique<httplib::SSLServer>(server_.cert.get(), server_.key.get(),
                                                      mtls ? kube::testing::store_of(ca_) : nullptr);
    up->server->Post(kPath, [](const httplib::Request& req, httplib::Response& res) {
      res.set_content("tls:" + req.body, "application/json");
    });
    up->port = up->server->bind_to_any_port("127.0.0.1");
    up->thread = std::thread([s = up->server.get()] { s->listen_after_bind(); });
    while (!up->server->is_running()) std::this_thread::sleep_for(1ms);
    return up;
  }

  std::unique_ptr<Relay> relay_to(int port, const std::string& ca, bool client_cert) {
    RelayOptions options;
    options.listen_port = 0;
    options.upstream = "https://127.0.0.1:" + std::to_string(port);
    options.upstream_timeout = 2s;
    options.breaker.open_for = 60s;
    options.ca_file = path(ca);
    if (client_cert) {
      options.cert_file = path("tls.crt");
      options.key_file = path("tls.key");
    }
    auto relay = Relay::create(options);
    EXPECT_TRUE(relay.ok()) << (relay.ok() ? "" : relay.message());
    if (!relay) return nullptr;
    (*relay)->start();
    return std::move(*relay);
  }

  kube::testing::Issued ca_, server_, client_, other_ca_;
  std::string dir_;
};

TEST_F(RelayTls, MutualTlsPassesBodies) {
  ASSERT_TRUE(tls_supported());
  auto up = https_upstream(true);
  auto relay = relay_to(up->port, "ca.crt", true);
  ASSERT_TRUE(relay);
  auto a = post(*relay, kPath, "{}");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "tls:{}");
  EXPECT_EQ(relay->breaker_state(), BreakerState::kClosed);
}

TEST_F(RelayTls, ServerCertificateFromAnotherCaIsAFailure) {
  auto up = https_upstream(false);
  auto relay = relay_to(up->port, "other-ca.crt", false);
  ASSERT_TRUE(relay);
  EXPECT_EQ(post(*relay, kPath, "{}").status, 503);
  EXPECT_EQ(relay->breaker_state(), BreakerState::kOpen);
}

TEST_F(RelayTls, NoClientCertificateWhereOneIsRequiredIsAFailure) {
  auto up = https_upstream(true);
  auto relay = relay_to(up->port, "ca.crt", false);
  ASSERT_TRUE(relay);
  EXPECT_EQ(post(*relay, kPath, "{}").status, 503);
  EXPECT_EQ(relay->breaker_state(), BreakerState::kOpen);
}

}  // namespace
}  // namespace extender::relay

namespace extender::relay {
namespace {

// A raw loopback connection to `port`, its reads bounded by `wait`.
class Raw {
 public:
  Raw(int port, std::chrono::milliseconds wait = 3000ms) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    timeval tv{static_cast<time_t>(wait.count() / 1000), static_cast<suseconds_t>(wait.count() % 1000 * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~Raw() { ::close(fd_); }
  bool connected() const { return connected_; }
  bool send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }
  // What arrives until the peer closes or `wait` passes without a byte.
  std::string read_all() {
    std::string out;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return out;
      out.append(buf, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

int status_of(const std::string& answer) {
  return answer.size() > 12 && answer.rfind("HTTP/1.", 0) == 0 ? std::atoi(answer.c_str() + 9) : 0;
}

TEST(RelayAttacks, ACompressedBodyIsRefused415AndNothingIsInflatedOrForwarded) {
  std::atomic<int> calls{0};
  Upstream up([&](httplib::Server& s) {
    s.Post(kPath, [&](const httplib::Request&, httplib::Response& res) {
      ++calls;
      res.set_content("up", "text/plain");
    });
  });
  auto relay = start_relay(up.url(), 2s, 60s, 1 << 20);
  ASSERT_TRUE(relay);
  // 1 MiB of zeros in gzip: about 1 KiB on the wire, a thousand times that once inflated.
  const std::string bomb = std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10) + std::string(1000, '\0');
  for (const char* coding : {"gzip", "deflate", "x-gzip"}) {
    Raw c(relay->port());
    ASSERT_TRUE(c.connected());
    c.send(std::string("POST ") + kPath + " HTTP/1.1\r\nHost: r\r\nContent-Encoding: " + coding +
           "\r\nConnection: close\r\nContent-Length: " + std::to_string(bomb.size()) + "\r\n\r\n" + bomb);
    EXPECT_EQ(status_of(c.read_all()), 415) << coding;
  }
  EXPECT_EQ(calls.load(), 0);
  EXPECT_EQ(post(*relay, kPath, "{}").status, 200);
}

TEST(RelayAttacks, AChunkedBodyIsCountedAgainstTheLimitAsItArrives) {
  std::atomic<int> calls{0};
  Upstream up([&](httplib::Server& s) {
    s.Post(kPath, [&](const httplib::Request&, httplib::Response& res) {
      ++calls;
      res.set_content("up", "text/plain");
    });
  });
  auto relay = start_relay(up.url(), 2s, 60s, 64 << 10);
  ASSERT_TRUE(relay);
  Raw c(relay->port());
  ASSERT_TRUE(c.connected());
  c.send(std::string("POST ") + kPath + " HTTP/1.1\r\nHost: r\r\nTransfer-Encoding: chunked\r\n\r\n");
  const std::string chunk = "4000\r\n" + std::string(0x4000, 'x') + "\r\n";
  bool refused_early = false;
  for (int i = 0; i < 64 && !refused_early; ++i) refused_early = !c.send(chunk);
  EXPECT_EQ(status_of(c.read_all()), 413) << "the limit holds for chunked bodies, without the last chunk sent";
  EXPECT_EQ(calls.load(), 0);
}

TEST(RelayAttacks, TricklingHeadsHoldNeitherTheWorkersNorTheConnectionsAndMissTheirDeadline) {
  Upstream up([](httplib::Server& s) {
    s.Post(kPath, [](const httplib::Request&, httplib::Response& res) { res.set_content("up", "text/plain"); });
  });
  RelayOptions options;
  options.listen_port = 0;
  options.upstream = up.url();
  options.header_timeout = 500ms;
  options.max_connections_per_peer = 16;
  auto made = Relay::create(options);
  ASSERT_TRUE(made.ok()) << made.message();
  auto& relay = *made;
  relay->start();
  std::vector<std::unique_ptr<Raw>> tricklers;
  for (int i = 0; i < 40; ++i) {
    tricklers.push_back(std::make_unique<Raw>(relay->port(), 2000ms));
    tricklers.back()->send("P");
  }
  for (int i = 0; i < 5; ++i) {
    const auto a = post(*relay, kPath, "{}");
    EXPECT_EQ(a.status, 200) << "call " << i;
    EXPECT_LT(a.took, 400ms) << "call " << i;
  }
  Raw late(relay->port(), 2000ms);
  late.send("POST " + std::string(kPath) + " HTTP/1.1\r\n");
  const auto start = Clock::now();
  const std::string answer = late.read_all();
  EXPECT_EQ(status_of(answer), 408) << answer;
  EXPECT_LT(Clock::now() - start, 1500ms) << "the head deadline";
}

TEST(RelayAttacks, TheBreakerOpensOnTheDaemonFailingNotOnOneRequestsSize) {
  Upstream up([](httplib::Server& s) {
    s.Post(kPath, [](const httplib::Request& req, httplib::Response& res) {
      // The daemon's answers to a body of its own making: over a limit, or past the budget.
      res.status = req.body.size() >= (std::size_t{2} << 20) ? 503 : req.body == "big" ? 413 : 200;
      res.set_content("x", "text/plain");
    });
    s.Post("/down/prioritize-unmanaged", [](const httplib::Request&, httplib::Response& res) {
      res.status = 503;
      res.set_content("not ready", "text/plain");
    });
  });
  auto relay = start_relay(up.url(), 2s, 60s);
  ASSERT_TRUE(relay);
  struct Row {
    std::string path, body;
    int status;
    BreakerState after;
  };
  const std::vector<Row> rows = {
      {kPath, "big", 413, BreakerState::kClosed},
      {kPath, std::string(std::size_t{3} << 20, 'x'), 503, BreakerState::kClosed},
      {kPath, std::string(std::size_t{3} << 20, 'x'), 503, BreakerState::kClosed},
      {kPath, "{}", 200, BreakerState::kClosed},
      {"/down/prioritize-unmanaged", "{}", 503, BreakerState::kOpen},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(post(*relay, r.path, r.body).status, r.status) << r.path << " " << r.body.size();
    EXPECT_EQ(relay->breaker_state(), r.after) << r.path << " " << r.body.size();
  }
}

}  // namespace
}  // namespace extender::relay
