#include "extender/http/listener.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

namespace extender::http {
namespace {

using namespace std::chrono_literals;

// A listener on a free loopback port, served on its own thread until the fixture ends.
HttpResponse echo(const HttpRequest& r) {
  HttpResponse res;
  res.body = r.method + " " + r.path + " " + r.body;
  return res;
}

class Served {
 public:
  explicit Served(ListenerOptions options, Dispatch dispatch = echo)
      : listener_(std::move(options), std::move(dispatch)) {
    auto st = listener_.bind("127.0.0.1", 0);
    EXPECT_TRUE(st.ok()) << st.message();
    thread_ = std::thread([this] { listener_.serve(); });
  }
  ~Served() {
    listener_.stop();
    if (thread_.joinable()) thread_.join();
  }
  Listener& listener() { return listener_; }
  std::thread& thread() { return thread_; }

 private:
  Listener listener_;
  std::thread thread_;
};

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  return fd;
}

// Reads until `want` bytes arrived, the peer closed, or `limit` passed; "" plus eof on close.
std::string read_for(int fd, std::size_t want, std::chrono::milliseconds limit, bool* eof = nullptr) {
  std::string got;
  const auto until = std::chrono::steady_clock::now() + limit;
  while (got.size() < want) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left <= 0ms) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      if (eof) *eof = true;
      break;
    }
    got.append(buf, static_cast<std::size_t>(n));
  }
  return got;
}

std::string answer(const std::string& body, bool close = false) {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         (close ? "\r\nConnection: close\r\n\r\n" : "\r\nConnection: keep-alive\r\n\r\n") + body;
}

ListenerOptions quick() {
  ListenerOptions o;
  o.name = "test";
  o.threads = 2;
  o.bind_threads = 1;
  o.light_threads = 1;
  o.keep_alive_timeout = 300ms;
  return o;
}

TEST(Listener, PipelinedRequestsAreAnsweredInOrderOnOneConnection) {
  Served s(quick());
  const int fd = connect_to(s.listener().port());
  const std::string two =
      "POST /a HTTP/1.1\r\nContent-Length: 1\r\n\r\nx"
      "GET /b HTTP/1.1\r\n\r\n";
  ASSERT_EQ(::send(fd, two.data(), two.size(), 0), static_cast<ssize_t>(two.size()));
  const std::string expected = answer("POST /a x") + answer("GET /b ");
  EXPECT_EQ(read_for(fd, expected.size(), 5s), expected);
  ::close(fd);
}

// Echoes, holding the answer to /late until `hold` after it is ready.
Dispatch holding(std::chrono::milliseconds hold) {
  return [hold](const HttpRequest& r) {
    HttpResponse res = echo(r);
    if (r.path == "/late") res.not_before = steady_clock().now() + hold;
    return res;
  };
}

TEST(Listener, AnAnswerIsHeldUntilItsNotBeforeOnNoThread) {
  ListenerOptions o = quick();
  o.threads = 1;
  o.lane_of = [](std::string_view, std::string_view) { return Lane::kCompute; };
  Served s(o, holding(600ms));
  const int late = connect_to(s.listener().port());
  const int now = connect_to(s.listener().port());
  const std::string late_req = "GET /late HTTP/1.1\r\n\r\n";
  const std::string now_req = "GET /now HTTP/1.1\r\n\r\n";
  ::send(late, late_req.data(), late_req.size(), 0);
  EXPECT_EQ(read_for(late, 1, 200ms), "");  // held
  // The one worker is free while the answer is held.
  ::send(now, now_req.data(), now_req.size(), 0);
  EXPECT_EQ(read_for(now, answer("GET /now ").size(), 5s), answer("GET /now "));
  EXPECT_EQ(read_for(late, answer("GET /late ").size(), 5s), answer("GET /late "));
  // The connection serves its next request as usual.
  ::send(late, now_req.data(), now_req.size(), 0);
  EXPECT_EQ(read_for(late, answer("GET /now ").size(), 5s), answer("GET /now "));
  ::close(late);
  ::close(now);
}

TEST(Listener, StopSendsHeldAnswersAtOnce) {
  auto s = std::make_unique<Served>(quick(), holding(60s));
  const int fd = connect_to(s->listener().port());
  const std::string req = "GET /late HTTP/1.1\r\n\r\n";
  ::send(fd, req.data(), req.size(), 0);
  EXPECT_EQ(read_for(fd, 1, 200ms), "");
  const auto start = std::chrono::steady_clock::now();
  s->listener().stop();
  bool eof = false;
  const std::string got = read_for(fd, 1 << 16, 10s, &eof);
  EXPECT_TRUE(eof);
  EXPECT_TRUE(got.starts_with("HTTP/1.1 200 OK")) << got;
  EXPECT_TRUE(got.ends_with("GET /late ")) << got;
  s->thread().join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);  // not after the hold
  ::close(fd);
}

TEST(Listener, AnIdleKeepAliveConnectionIsClosedAtItsTimeout) {
  Served s(quick());
  const int fd = connect_to(s.listener().port());
  const std::string req = "GET /x HTTP/1.1\r\n\r\n";
  ::send(fd, req.data(), req.size(), 0);
  EXPECT_EQ(read_for(fd, answer("GET /x ").size(), 5s), answer("GET /x "));
  bool eof = false;
  const auto start = std::chrono::steady_clock::now();
  read_for(fd, 1, 5s, &eof);
  EXPECT_TRUE(eof);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s);  // closed by its deadline, not by the read's limit
  ::close(fd);
}

TEST(Listener, StopClosesIdleConnectionsAndServeReturnsWithoutWaitingForThem) {
  auto s = std::make_unique<Served>([] {
    ListenerOptions o = quick();
    o.keep_alive_timeout = 60s;
    o.header_timeout = 60s;
    return o;
  }());
  const int idle = connect_to(s->listener().port());
  const int silent = connect_to(s->listener().port());
  const std::string req = "GET /x HTTP/1.1\r\n\r\n";
  ::send(idle, req.data(), req.size(), 0);
  EXPECT_EQ(read_for(idle, answer("GET /x ").size(), 5s), answer("GET /x "));
  const auto start = std::chrono::steady_clock::now();
  s->listener().stop();
  s->thread().join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);  // the shutdown grace is 25 s
  bool eof = false;
  read_for(idle, 1, 1s, &eof);
  EXPECT_TRUE(eof);
  eof = false;
  read_for(silent, 1, 1s, &eof);
  EXPECT_TRUE(eof);
  ::close(idle);
  ::close(silent);
}

}  // namespace
}  // namespace extender::http
