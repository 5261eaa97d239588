#include "extender/http/http_connection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "extender/http/deadline_queue.h"
#include "extender/http/transport.h"

namespace extender::http {
namespace {

using namespace std::chrono_literals;
using Phase = HttpConnection::Phase;

ServerOptions small_options() {
  ServerOptions o;
  o.max_body_bytes = 1024;
  o.max_header_bytes = 512;
  o.max_header_count = 8;
  o.header_timeout = 5s;
  o.read_timeout = 10s;
  o.min_body_rate = 1024;  // a second per KiB
  o.write_timeout = 10s;
  o.keep_alive_timeout = 3s;
  o.keep_alive_max_requests = 100;
  return o;
}

// An in-memory peer behind the Transport interface: reads hand out what the test queued, in the
// pieces it was queued in; writes take at most write_limit bytes per call.
class FakeTransport final : public Transport {
 public:
  FakeTransport() : Transport(-1, PeerAddress{"10.0.0.7", 40000, false}) {}
  IoResult handshake() override { return {}; }
  IoResult read(char* buf, std::size_t len) override {
    if (incoming.empty()) return {eof ? IoStatus::kEof : IoStatus::kAgain, 0};
    std::string& front = incoming.front();
    const std::size_t n = std::min(len, front.size());
    std::copy_n(front.data(), n, buf);
    front.erase(0, n);
    if (front.empty()) incoming.pop_front();
    return {IoStatus::kOk, n};
  }
  IoResult write(std::span<const std::string_view> buffers) override {
    ++writes;
    std::size_t room = write_limit;
    std::size_t put = 0;
    for (std::string_view b : buffers) {
      const std::size_t n = std::min(room, b.size());
      sent.append(b.substr(0, n));
      room -= n;
      put += n;
    }
    if (put == 0 && write_limit == 0) return {IoStatus::kAgain, 0};
    return {IoStatus::kOk, put};
  }
  void shutdown() override { shut = true; }

  std::deque<std::string> incoming;
  bool eof = false;
  std::string sent;
  std::size_t write_limit = SIZE_MAX;
  int writes = 0;
  bool shut = false;
};

// Drives a connection as the event loop does, over a FakeTransport and a clock the test sets.
struct Harness {
  explicit Harness(ServerOptions o = small_options()) : options(std::move(o)), http(options, wire.peer(), now) {}

  // Reads everything queued; collects the requests that became ready; writes what can be written.
  void pump() {
    char buf[4096];
    for (;;) {
      flush();
      if (auto req = http.take_request()) {
        requests.push_back(std::move(*req));
        continue;
      }
      if (!http.wants_read()) return;
      const IoResult r = wire.read(buf, sizeof buf);
      if (r.status != IoStatus::kOk) return;
      http.on_bytes(std::string_view(buf, r.bytes), now);
    }
  }
  void flush() {
    while (http.has_output()) {
      const auto out = http.output();
      const IoResult r = wire.write(out);
      if (r.status != IoStatus::kOk || r.bytes == 0) return;
      http.wrote(r.bytes, now);
    }
    if (http.take_shutdown()) wire.shutdown();
  }
  void send(std::string bytes) {
    wire.incoming.push_back(std::move(bytes));
    pump();
  }
  void answer(std::string body, int status = 200) {
    HttpResponse res;
    res.status = status;
    res.body = std::move(body);
    http.respond(std::move(res), now);
    pump();
  }

  ServerOptions options;
  TimePoint now = TimePoint{} + 1000s;
  FakeTransport wire;
  HttpConnection http;
  std::vector<HttpRequest> requests;
};

std::string post(std::string path, std::string body, std::string extra = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra +
         "\r\n" + body;
}

TEST(HttpConnection, PipelinedKeepAliveRequestsAreServedInOrderOneAtATime) {
  Harness h;
  h.send(post("/filter?x=1", "{\"a\":1}") + post("/prioritize", "{\"b\":2}"));
  ASSERT_EQ(h.requests.size(), 1u);  // the second waits for the first's answer
  EXPECT_EQ(h.requests[0].method, "POST");
  EXPECT_EQ(h.requests[0].path, "/filter");
  EXPECT_EQ(h.requests[0].body, "{\"a\":1}");
  EXPECT_EQ(h.requests[0].peer_ip, "10.0.0.7");
  EXPECT_EQ(h.requests[0].remote, "10.0.0.7:40000");
  EXPECT_EQ(h.http.phase(), Phase::kDispatched);
  EXPECT_EQ(h.http.deadline(), TimePoint::max());

  h.answer("first");
  ASSERT_EQ(h.requests.size(), 2u);
  EXPECT_EQ(h.requests[1].path, "/prioritize");
  EXPECT_EQ(h.requests[1].body, "{\"b\":2}");
  h.answer("second");
  EXPECT_EQ(
      h.wire.sent,
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\nfirst"
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 6\r\nConnection: keep-alive\r\n\r\nsecond");
  EXPECT_EQ(h.http.phase(), Phase::kIdle);
  EXPECT_EQ(h.http.served(), 2);
  EXPECT_FALSE(h.wire.shut);
}

TEST(HttpConnection, AnAnswerMarkedCloseEndsTheKeepAliveConnection) {
  Harness h;
  h.send(post("/filter", "{}"));
  ASSERT_EQ(h.requests.size(), 1u);
  HttpResponse res;
  res.body = "no";
  res.close = true;
  h.http.respond(std::move(res), h.now);
  h.pump();
  EXPECT_NE(h.wire.sent.find("Connection: close\r\n"), std::string::npos) << h.wire.sent;
  EXPECT_TRUE(h.wire.shut) << "closed after the answer although the client asked to keep it alive";
}

TEST(HttpConnection, AContentLengthBodyArrivingByteByByteMakesOneRequest) {
  Harness h;
  const std::string wire = post("/filter", std::string(300, 'x'));
  for (char c : wire) {
    EXPECT_TRUE(h.requests.empty());
    h.send(std::string(1, c));
  }
  ASSERT_EQ(h.requests.size(), 1u);
  EXPECT_EQ(h.requests[0].body, std::string(300, 'x'));
}

TEST(HttpConnection, AChunkedBodyArrivingInPiecesIsJoined) {
  Harness h;
  h.send("POST /filter HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel");
  EXPECT_EQ(h.http.phase(), Phase::kBody);
  h.send("lo\r\n6\r\n wor");
  h.send("ld\r\n0\r\n");
  EXPECT_TRUE(h.requests.empty());
  h.send("\r\n");
  ASSERT_EQ(h.requests.size(), 1u);
  EXPECT_EQ(h.requests[0].body, "hello world");
}

TEST(HttpConnection, AHeadThatStartedAndMissesItsDeadlineIsAnswered408ThenClosed) {
  Harness h;
  h.now += 2s;  // the head's deadline counts from the connection
  h.send("POST /filter HTTP/1.1\r\nHo");
  EXPECT_EQ(h.http.deadline(), TimePoint{} + 1000s + 5s);
  h.now = h.http.deadline() - 1ms;
  h.http.on_deadline(h.now);
  EXPECT_EQ(h.http.phase(), Phase::kHead);
  h.now = h.http.deadline();
  h.http.on_deadline(h.now);
  h.pump();
  EXPECT_TRUE(h.wire.sent.starts_with("HTTP/1.1 408 Request Timeout\r\n")) << h.wire.sent;
  EXPECT_NE(h.wire.sent.find("Connection: close"), std::string::npos);
  EXPECT_TRUE(h.wire.shut);
  EXPECT_EQ(h.http.phase(), Phase::kLinger);
  h.now = h.http.deadline();
  h.http.on_deadline(h.now);
  EXPECT_TRUE(h.http.closed());
}

TEST(HttpConnection, AConnectionThatNeverSendsIsClosedSilentlyAtTheHeadDeadline) {
  Harness h;
  h.now += 5s;
  h.http.on_deadline(h.now);
  EXPECT_TRUE(h.http.closed());
  EXPECT_TRUE(h.wire.sent.empty());
}

TEST(HttpConnection, TheBodyDeadlineGrowsWithTheWireBytesReceivedNotTheLengthDeclared) {
  Harness h;
  h.send("POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n");
  const auto body_start = h.now;
  EXPECT_EQ(h.http.phase(), Phase::kBody);
  EXPECT_EQ(h.http.deadline(), body_start + 10s);  // nothing received yet, whatever was declared
  h.now += 3s;
  h.send(std::string(512, 'x'));
  EXPECT_EQ(h.http.deadline(), body_start + 10s + 500ms);  // 512 bytes at 1 KiB/s
  h.now = body_start + 10s + 500ms;
  h.http.on_deadline(h.now);
  h.pump();
  EXPECT_TRUE(h.wire.sent.starts_with("HTTP/1.1 408 ")) << h.wire.sent;
  EXPECT_TRUE(h.requests.empty());
}

TEST(HttpConnection, ConnectionCloseIsAnsweredWithCloseThenTheConnectionLingersAndCloses) {
  Harness h;
  h.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  ASSERT_EQ(h.requests.size(), 1u);
  EXPECT_FALSE(h.wire.shut);
  h.answer("ok");
  EXPECT_NE(h.wire.sent.find("\r\nConnection: close\r\n\r\nok"), std::string::npos) << h.wire.sent;
  EXPECT_TRUE(h.wire.shut);
  EXPECT_EQ(h.http.phase(), Phase::kLinger);
  EXPECT_TRUE(h.http.wants_read());  // reads and discards what the peer still sends
  h.send("GET /more HTTP/1.1\r\n\r\n");
  EXPECT_EQ(h.requests.size(), 1u);
  h.now += 1s;
  h.http.on_deadline(h.now);
  EXPECT_TRUE(h.http.closed());
}

struct ErrorCase {
  const char* name;
  std::string wire;
  int status;
};

std::string many_headers(int n) {
  std::string wire = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < n; ++i) wire += "X-H" + std::to_string(i) + ": v\r\n";
  return wire + "\r\n";
}

TEST(HttpConnection, MalformedOrOversizedRequestsAreAnsweredWithTheirStatusThenClosed) {
  const std::vector<ErrorCase> cases = {
      {"malformed request line", "BOGUS\r\n\r\n", 400},
      {"body larger than the limit", post("/filter", std::string(2000, 'x')), 413},
      {"declared larger than the limit", "POST /filter HTTP/1.1\r\nContent-Length: 5000\r\n\r\n", 413},
      {"head larger than the limit", "GET / HTTP/1.1\r\nX-Big: " + std::string(600, 'a') + "\r\n\r\n", 431},
      {"too many header lines", many_headers(10), 431},
      {"a header line without a colon", "GET / HTTP/1.1\r\nnocolon\r\n\r\n", 400},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Harness h;
    h.send(c.wire);
    EXPECT_TRUE(h.wire.sent.starts_with("HTTP/1.1 " + std::to_string(c.status) + " ")) << h.wire.sent;
    EXPECT_NE(h.wire.sent.find("Connection: close"), std::string::npos);
    EXPECT_TRUE(h.requests.empty());
    EXPECT_TRUE(h.wire.shut);
    EXPECT_EQ(h.http.phase(), Phase::kLinger);
  }
}

TEST(HttpConnection, AnAnswerWrittenInManyPartialWritesArrivesWhole) {
  Harness h;
  h.wire.write_limit = 1000;
  h.send(post("/filter", "{}"));
  ASSERT_EQ(h.requests.size(), 1u);
  const std::string body(100'000, 'b');
  HttpResponse res;
  res.body = body;
  res.headers = {{"X-Extra", "1"}};
  h.http.respond(std::move(res), h.now);
  EXPECT_EQ(h.http.phase(), Phase::kWriting);
  const std::size_t total = h.http.unsent();
  h.wire.write_limit = 0;  // the socket is full
  h.flush();
  EXPECT_EQ(h.http.unsent(), total);
  h.wire.write_limit = 1000;
  h.flush();
  EXPECT_EQ(h.wire.writes, static_cast<int>((total + 999) / 1000) + 1);
  EXPECT_EQ(h.wire.sent,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\nX-Extra: 1\r\n"
            "Connection: keep-alive\r\n\r\n" +
                body);
  EXPECT_EQ(h.http.phase(), Phase::kIdle);
  EXPECT_EQ(h.http.deadline(), h.now + 3s);  // keep_alive_timeout
}

TEST(HttpConnection, ABudgetThatRefusesTheBodyAnswers503) {
  Harness h;
  std::size_t asked = 0;
  h.http.set_admit([&](std::size_t held) {
    asked = held;
    return held < 200;
  });
  h.send("POST /filter HTTP/1.1\r\nContent-Length: 500\r\n\r\n");
  EXPECT_EQ(h.http.phase(), Phase::kBody);
  h.send(std::string(300, 'x'));
  EXPECT_GE(asked, 300u);
  EXPECT_TRUE(h.wire.sent.starts_with("HTTP/1.1 503 ")) << h.wire.sent;
  EXPECT_TRUE(h.requests.empty());
}

TEST(HttpConnection, ExpectContinueIsAnsweredBeforeTheBody) {
  Harness h;
  h.send("POST /filter HTTP/1.1\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_EQ(h.wire.sent, "HTTP/1.1 100 Continue\r\n\r\n");
  h.send("{}");
  ASSERT_EQ(h.requests.size(), 1u);
  h.answer("[]");
  EXPECT_NE(h.wire.sent.find("HTTP/1.1 200 OK"), std::string::npos);
}

TEST(HttpConnection, AHeadRequestIsAnsweredWithoutItsBodyAndTheLastAllowedRequestCloses) {
  ServerOptions o = small_options();
  o.keep_alive_max_requests = 2;
  Harness h(o);
  h.send("HEAD /healthz HTTP/1.1\r\n\r\n");
  h.answer("ok");
  EXPECT_TRUE(h.wire.sent.ends_with("Content-Length: 2\r\nConnection: keep-alive\r\n\r\n")) << h.wire.sent;
  h.send("GET /healthz HTTP/1.1\r\n\r\n");
  h.answer("ok");
  EXPECT_TRUE(h.wire.sent.ends_with("Connection: close\r\n\r\nok")) << h.wire.sent;
  EXPECT_TRUE(h.wire.shut);
}

TEST(HttpConnection, ARefusedClientCertificateIsAnswered403AtItsHead) {
  ServerOptions o = small_options();
  HttpConnection http(o, PeerAddress{"::1", 1, true}, TimePoint{}, true);
  EXPECT_EQ(http.phase(), Phase::kHandshake);
  EXPECT_FALSE(http.wants_read());
  http.handshake_done({"intruder"}, true);
  http.on_bytes("POST /filter HTTP/1.1\r\nContent-Length: 900\r\n\r\n", TimePoint{});
  EXPECT_EQ(http.phase(), Phase::kWriting);
  EXPECT_TRUE(std::string(http.output()[0]).starts_with("HTTP/1.1 403 "));
  EXPECT_FALSE(http.take_request().has_value());
}

TEST(HttpConnection, SlowBodiesBecomeEvictableAfterTheGraceAndQuietConnectionsAlwaysAre) {
  Harness h;
  EXPECT_TRUE(h.http.quiet());
  EXPECT_TRUE(h.http.evictable(h.now));
  h.send("POST /filter HTTP/1.1\r\nContent-Length: 1000\r\n\r\n");
  EXPECT_FALSE(h.http.quiet());
  EXPECT_FALSE(h.http.evictable(h.now));
  h.send(std::string(600, 'x'));
  h.now += 500ms;
  EXPECT_FALSE(h.http.below_rate(h.now));  // within the grace
  h.now += 1500ms;                         // 600 bytes in 2 s: below 1 KiB/s
  EXPECT_TRUE(h.http.below_rate(h.now));
  EXPECT_TRUE(h.http.evictable(h.now));
}

TEST(HttpConnection, DrainingClosesAnIdleConnectionAndTheNextAnswerCloses) {
  Harness idle;
  idle.http.drain();
  EXPECT_TRUE(idle.http.closed());

  Harness busy;
  busy.send("GET /healthz HTTP/1.1\r\n\r\n");
  busy.http.drain();
  EXPECT_FALSE(busy.http.closed());
  busy.answer("ok");
  EXPECT_TRUE(busy.wire.shut);
  EXPECT_EQ(busy.http.phase(), Phase::kLinger);
}

TEST(DeadlineQueue, HandsOutDueIdsEarliestFirstAndSkipsSupersededOrForgottenOnes) {
  DeadlineQueue q;
  const auto t0 = TimePoint{} + 100s;
  q.arm(1, t0 + 3s);
  q.arm(2, t0 + 1s);
  q.arm(3, t0 + 2s);
  q.arm(1, t0 + 500ms);  // earlier: supersedes
  q.arm(2, t0 + 9s);     // later: the earlier entry stays
  q.arm(4, TimePoint::max());
  q.forget(3);
  EXPECT_EQ(q.armed(), 2u);
  EXPECT_EQ(q.next(), t0 + 500ms);
  EXPECT_FALSE(q.pop_due(t0).has_value());
  EXPECT_EQ(q.pop_due(t0 + 10s), std::optional<std::uint64_t>(1));
  EXPECT_EQ(q.pop_due(t0 + 10s), std::optional<std::uint64_t>(2));
  EXPECT_FALSE(q.pop_due(t0 + 10s).has_value());  // 1's and 2's later entries and 3 are stale
  EXPECT_EQ(q.armed(), 0u);
  q.arm(2, t0 + 20s);
  EXPECT_EQ(q.pop_due(t0 + 20s), std::optional<std::uint64_t>(2));
}

}  // namespace
}  // namespace extender::http
