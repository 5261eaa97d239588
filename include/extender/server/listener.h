#pragma once
// Listener: one HTTP(S) listening socket. One event-loop thread owns every connection: it accepts,
// completes TLS handshakes, reads request heads and bodies (RequestParser, with its limits), and
// writes answers; a connection holds no worker while it is idle, slow or sending. A complete
// request goes to the worker lane its path names (lanes never share threads, so binds waiting on
// the API server cannot hold what filters need); the lane's answer is written back by the loop.
//
// Deadlines: a request head within header_timeout of its first byte (a new connection's: of its
// accept), a body within read_timeout plus the bytes received so far (on the wire) at
// min_body_rate, an answer within write_timeout plus its size at the same rate, an idle keep-alive
// connection closed after keep_alive_timeout. Caps: open connections in all and per peer address,
// in every phase (past either, the oldest connection that is idle, still sending its head, or
// sending its body below min_body_rate is closed; else the new connection is refused), request
// bodies held at once (past it, the oldest body below min_body_rate is closed, else 503).
//
// Each request carries its peer address, whether that peer is 127.0.0.1, ::1 or ::ffff:127.0.0.1
// (not the rest of 127.0.0.0/8, where mesh sidecars forward from), and the names of its TLS client
// certificate; with an allow-list of client names, other certificates are answered 403 once their
// request head is read, before the body and before any handler. Certificates are re-read when their files change (TlsContextSource).
//
// Thread-safety: bind() and serve() from one thread; stop() from any thread. serve() returns once
// the socket is closed and every request in flight has been answered (or its peer has gone).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "extender/common/result.h"
#include "extender/config/config.h"

namespace extender::server {

struct HttpRequest {
  std::string method;
  std::string path;      // without the query
  std::string body;      // with kBodyPadding spare capacity (see request_parser.h)
  std::string remote;    // address:port, for logs
  std::string peer_ip;
  bool peer_loopback = false;  // 127.0.0.1, ::1 or ::ffff:127.0.0.1
  std::vector<std::string> client_names;  // from a verified TLS client certificate
  // When the complete request was queued for a worker; the request deadline counts from here
  // (time spent waiting for a worker is the caller's time too). Unset: when it is handled.
  std::chrono::steady_clock::time_point queued_at{};
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  // What the handler is done with but is costly to free (a decoded request, its decision): a
  // worker frees it after handing the answer to the event loop, so the client does not wait on it.
  std::shared_ptr<const void> spent = nullptr;
};

using Dispatch = std::function<HttpResponse(const HttpRequest&)>;

// Where a request runs. kInline: on the event loop itself (trivial answers only).
enum class Lane { kInline, kLight, kDecide, kBind };
using LaneOf = std::function<Lane(std::string_view method, std::string_view path)>;

struct ListenerOptions {
  std::string name;  // for logs: "scheduler" or "admin"
  std::int64_t decide_threads = 8;
  std::int64_t bind_threads = 64;
  std::int64_t light_threads = 2;
  std::int64_t max_body_bytes = std::int64_t{128} << 20;
  std::int64_t max_header_bytes = std::int64_t{64} << 10;
  std::int64_t max_header_count = 100;
  std::chrono::milliseconds header_timeout{5'000};
  std::chrono::milliseconds read_timeout{10'000};
  std::int64_t min_body_rate = std::int64_t{1} << 20;
  std::chrono::milliseconds write_timeout{10'000};
  std::chrono::milliseconds keep_alive_timeout{5'000};
  std::int64_t keep_alive_max_requests = 1000;
  std::int64_t max_connections = 4096;
  std::int64_t max_connections_per_peer = 256;
  std::int64_t max_buffered_bytes = std::int64_t{512} << 20;
  config::TlsConfig tls;  // TLS when cert_file is set
  LaneOf lane_of;         // unset: every request on kDecide
};

// The listener options of a server config (scheduler listener, or a small admin one).
ListenerOptions listener_options(const config::ServerConfig& server, std::string name);

class Listener {
 public:
  Listener(ListenerOptions options, Dispatch dispatch);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Binds host:port (port 0 picks a free one) and loads TLS files. Fails with a readable reason.
  Status bind(const std::string& host, int port);
  int port() const { return port_; }
  // Serves until stop(); returns when the socket is closed and requests in flight are answered.
  void serve();
  void stop();

  struct Loop;  // the event loop's state; defined in the .cpp

 private:
  ListenerOptions options_;
  Dispatch dispatch_;
  std::unique_ptr<Loop> loop_;
  int port_ = 0;
};

}  // namespace extender::server
