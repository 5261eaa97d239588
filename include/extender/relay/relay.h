#pragma once
// Relay: a loopback HTTP server, run beside kube-scheduler, that forwards the every-pod entry's
// `POST .../prioritize-unmanaged` to the daemon behind a circuit breaker (breaker.h). While the
// daemon fails (timeout, connect error, HTTP 5xx) the breaker is open and each call is answered
// 503 at once, which an `ignorable` extender entry skips, instead of costing every pod the entry's
// httpTimeout inside the scheduling cycle. `GET /healthz` answers 200; every other request 404.
//
// Relay owns its server thread and its upstream connections; start() and stop() are called from
// one thread, the request handlers run on the server's pool and share the breaker under one mutex.
// Errors are returned as values; no exception leaves this module.
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "extender/common/result.h"
#include "extender/relay/breaker.h"

namespace extender::relay {

struct RelayOptions {
  std::string listen_host = "127.0.0.1";  // loopback only (parse_listen)
  int listen_port = 8890;                 // 0: any free port (Relay::port() says which)
  std::string upstream;                   // http(s)://host[:port][/path]; the request path is appended
  std::chrono::milliseconds upstream_timeout{150};  // connect, and each read and write, upstream
  BreakerOptions breaker;
  std::size_t max_body_bytes = 64u << 20;  // 413 above
  std::string ca_file;                     // https: the CA that signs the daemon's certificate
  std::string cert_file, key_file;         // https: a client certificate (mTLS), both or neither
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
