#pragma once
// Listener: one HTTP(S) listening socket served by cpp-httplib with the daemon's limits: a worker
// pool (each open connection holds a worker), TCP_NODELAY, read/write timeouts, a keep-alive cap,
// and a request body limit enforced while reading (413 as soon as the limit is crossed, with
// Content-Length or chunked, and the connection closed without reading the rest). Requests are
// handed to a Dispatch function. Thread-safe; serve() blocks until stop().
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

namespace httplib {
class Server;
}

namespace extender::server {

struct HttpRequest {
  std::string method;
  std::string path;
  std::string body;
  std::string remote;  // address:port, for logs
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
};

using Dispatch = std::function<HttpResponse(const HttpRequest&)>;

struct ListenerOptions {
  std::string name;  // for logs: "scheduler" or "admin"
  std::int64_t threads = 64;
  std::int64_t max_body_bytes = std::int64_t{128} << 20;
  std::chrono::milliseconds read_timeout{10'000};
  std::chrono::milliseconds write_timeout{10'000};
  std::chrono::milliseconds keep_alive_timeout{5'000};
  std::int64_t keep_alive_max_requests = 1000;
  config::TlsConfig tls;
};

class Listener {
 public:
  Listener(ListenerOptions options, Dispatch dispatch);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Binds host:port (port 0 picks a free one). Fails with a readable reason.
  Status bind(const std::string& host, int port);
  int port() const { return port_; }
  // Serves until stop(); returns when the listener is closed and in-flight requests finished.
  void serve();
  void stop();

 private:
  ListenerOptions options_;
  Dispatch dispatch_;
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
};

}  // namespace extender::server
