#pragma once
// Listener: one HTTP(S) listening socket. One event-loop thread owns every connection: it accepts,
// completes TLS handshakes, reads request heads and bodies (RequestParser, with its limits), and
// writes answers; a connection holds no worker while it is idle, slow or sending. A complete
// request goes to the worker lane its path names (lanes never share threads, so binds waiting on
// the API server cannot hold what filters need); the lane's answer is written back by the loop.
// Layers: a Transport (transport.h) moves bytes, plain or TLS; an HttpConnection
// (http_connection.h) frames HTTP/1.1 with no system calls; the EventLoop (src/http/
// event_loop.h and .cpp) owns epoll, the caps, the body budget and a DeadlineQueue; Lanes run
// handlers. The Listener itself only binds the socket, loads TLS and hands both to its loop.
//
// Deadlines: a request head within header_timeout of its first byte (a new connection's: of its
// accept), a body within read_timeout plus the bytes received so far (on the wire) at
// min_body_rate, an answer within write_timeout plus its size at the same rate, an idle keep-alive
// connection closed after keep_alive_timeout. Caps: open connections in all and per peer address,
// in every phase (past either, the oldest connection that is idle, still sending its head, or
// sending its body below min_body_rate is closed; else the new connection is refused), request
// bodies held at once (past it, the oldest body below min_body_rate is closed, else 503), and of
// those one peer address's share: at most half the budget, or one request of max_body_bytes when
// that counts more (past it, that peer's own oldest body below min_body_rate is closed, else 503).
//
// Each request carries its peer address, whether that peer is 127.0.0.1, ::1 or ::ffff:127.0.0.1
// (not the rest of 127.0.0.0/8, where mesh sidecars forward from), and the names of its TLS client
// certificate; with an allow-list of client names, other certificates are answered 403 once their
// request head is read, before the body and before any handler. Certificates are re-read when
// their files change (TlsContextSource). Unsent answer bytes count in the body budget too.
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

#include "extender/common/clock.h"
#include "extender/common/result.h"
#include "extender/http/http_message.h"
#include "extender/http/server_options.h"

namespace extender::http {

struct EventLoop;  // src/http/event_loop.h

// A listener's settings: the server's options, a name for logs ("scheduler" or "admin") and the
// lane of each request (unset: every request on kCompute), whether coded bodies are decoded.
// TLS when tls.cert_file is set.
struct ListenerOptions : ServerOptions {
  std::string name;
  LaneOf lane_of;
  // false: a coded body reaches the handler as sent, content_coding set (a relay that must not
  // inflate refuses it or passes it on).
  bool decode_content = true;
};

// The listener options of a server's options (scheduler listener, or a small admin one).
ListenerOptions listener_options(const ServerOptions& server, std::string name);

class Listener {
 public:
  // `clock` (which outlives the listener) stamps requests and times deadlines and lane costs.
  Listener(ListenerOptions options, Dispatch dispatch, const Clock& clock = steady_clock());
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Binds host:port (port 0 picks a free one) and loads TLS files. Fails with a readable reason.
  Status bind(const std::string& host, int port);
  int port() const { return port_; }
  // Serves until stop(); returns when the socket is closed and requests in flight are answered.
  void serve();
  void stop();

 private:
  ListenerOptions options_;
  Dispatch dispatch_;
  std::unique_ptr<EventLoop> loop_;
  int port_ = 0;
};

}  // namespace extender::http
