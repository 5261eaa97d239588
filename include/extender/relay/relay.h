#pragma once
// Relay: a loopback HTTP server, run beside kube-scheduler, that forwards the every-pod entry's
// `POST .../filter-unmanaged` and `.../prioritize-unmanaged` to the daemon behind a circuit breaker (breaker.h). While
// the daemon is down or failing (no answer within the upstream timeout, connect error, 500, 502, 504, or 503 to a body
// under a MiB) the breaker is open and each call is answered 503 at once, which an `ignorable` extender entry skips,
// instead of costing every pod the entry's httpTimeout inside the scheduling cycle. A 4xx (413, 400: the request's
// fault) and a 503 to a large body (its own size against the daemon's body budget) pass through and leave the breaker
// closed. `GET /healthz` answers 200; every other request 404.
//
// Its server side is the daemon's own (http::Listener): one event loop with a head deadline,
// a body deadline at a minimum rate, connection caps in all and per peer (the oldest idle or slow
// connection makes room), a body budget, chunked bodies counted against max_body_bytes as they
// arrive. It inflates nothing: a body with a Content-Encoding is refused 415 (kube-scheduler
// never compresses its calls; a relay that inflated would turn a small body into a large one
// for itself and the daemon). Upstream it sets TCP_NODELAY, so a body never waits behind its head
// for a delayed ACK.
//
// Relay owns its server thread and its upstream connections; start() and stop() are called from
// one thread, the request handlers run on the listener's workers and share the breaker under one
// mutex. Errors are returned as values; no exception leaves this module.
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "extender/common/clock.h"
#include "extender/common/result.h"
#include "extender/relay/breaker.h"

namespace extender::relay {

struct RelayOptions {
  std::string listen_host = "127.0.0.1";            // loopback only (parse_listen)
  int listen_port = 8890;                           // 0: any free port (Relay::port() says which)
  std::string upstream;                             // http(s)://host[:port][/path]; the request path is appended
  std::chrono::milliseconds upstream_timeout{150};  // connect, and each read and write, upstream
  BreakerOptions breaker;
  std::size_t max_body_bytes = 64u << 20;          // 413 above (as sent; chunked bodies counted as they arrive)
  std::chrono::milliseconds header_timeout{2000};  // a request head within this of its first byte
  std::chrono::milliseconds body_timeout{5000};    // a body (and an answer) within this plus 1 MiB/s
  std::size_t max_connections = 256;
  std::size_t max_connections_per_peer = 64;
  std::size_t threads = 8;          // calls in flight upstream
  std::string ca_file;              // https: the CA that signs the daemon's certificate
  std::string cert_file, key_file;  // https: a client certificate (mTLS), both or neither
  // The breaker's and the listener's clock (it outlives the relay); null: steady_clock(). The
  // upstream sockets' own timeouts are cpp-httplib's.
  const Clock* clock = nullptr;
};

struct ListenAddress {
  std::string host;
  int port = 0;
};
// "127.0.0.1:PORT" (any 127.0.0.0/8 address), "localhost:PORT" or "[::1]:PORT"; anything else is
// refused: the relay authenticates nobody, so it must not be reachable from outside the pod.
Result<ListenAddress> parse_listen(std::string_view text);

struct UpstreamUrl {
  std::string scheme;  // "http" or "https"
  std::string host;
  int port = 0;
  std::string path;  // "" or "/prefix" (no trailing slash)
  std::string scheme_host_port() const;
};
Result<UpstreamUrl> parse_upstream(std::string_view text);

// Whether this build's HTTP client speaks TLS (https upstreams, --ca-file, --cert-file).
bool tls_supported();

// "--listen 127.0.0.1:8890 --upstream URL ..." into options; help/version requests are flagged.
struct CommandLine {
  RelayOptions options;
  bool show_help = false;
  bool show_version = false;
  std::string log_level = "info";
};
Result<CommandLine> parse_command_line(const std::vector<std::string>& args);
std::string usage_text();

class Relay {
 public:
  // Checks the options (upstream URL, files readable) and binds the listen address.
  static Result<std::unique_ptr<Relay>> create(const RelayOptions& options);
  ~Relay();
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  int port() const;
  // Serves on a thread of its own until stop(); returns once it accepts.
  void start();
  void stop();

  BreakerState breaker_state() const;

  struct Impl;

 private:
  explicit Relay(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace extender::relay
