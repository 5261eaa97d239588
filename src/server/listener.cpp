#include "extender/server/listener.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include "extender/wire/results.h"

namespace extender::server {
namespace {

void set_json_error(httplib::Response& res, int status, std::string_view message) {
  res.status = status;
  res.set_content(wire::encode_request_error(message), "application/json");
}

// Sends `body` as is, whatever Accept-Encoding asks: cpp-httplib would otherwise gzip or brotli
// JSON answers, which for a node echo of several MB costs far more CPU than it saves on a cluster
// network (brotli: seconds per answer), and any client could ask for it. A body given through a
// content provider of known length is never compressed. With `then_close`, the provider reports
// failure once the body is out, which makes cpp-httplib close the connection instead of reading
// what is left of the request as the next one.
void send_body(httplib::Response& res, std::string body, const std::string& content_type, bool then_close = false) {
  auto shared = std::make_shared<std::string>(std::move(body));
  if (then_close) res.set_header("Connection", "close");
  res.set_content_provider(shared->size(), content_type.c_str(),
                           [shared, then_close](size_t offset, size_t length, httplib::DataSink& sink) {
                             return sink.write(shared->data() + offset, length) && !then_close;
                           });
}

// Answers `status` with an error and ends the connection without reading the rest of the request.
void answer_and_close(httplib::Response& res, int status, std::string_view message) {
  res.status = status;
  send_body(res, wire::encode_request_error(message), "application/json", /*then_close=*/true);
}

// The declared body length; nullopt when absent, UINT64_MAX when it is not a plain number.
std::optional<std::uint64_t> content_length(const httplib::Request& req) {
  if (!req.has_header("Content-Length")) return std::nullopt;
  const std::string v = req.get_header_value("Content-Length");
  if (v.empty() || v.size() > 19) return UINT64_MAX;
  std::uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return UINT64_MAX;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return n;
}

std::string too_large_message(std::int64_t limit) {
  return "request body is larger than the limit of " + std::to_string(limit) + " bytes (server.max_body_bytes)";
}

}  // namespace

Listener::Listener(ListenerOptions options, Dispatch dispatch)
    : options_(std::move(options)), dispatch_(std::move(dispatch)) {}

Listener::~Listener() { stop(); }

Status Listener::bind(const std::string& host, int port) {
  if (!options_.tls.cert_file.empty()) {
    const char* ca = options_.tls.client_ca_file.empty() ? nullptr : options_.tls.client_ca_file.c_str();
    auto tls = std::make_unique<httplib::SSLServer>(options_.tls.cert_file.c_str(), options_.tls.key_file.c_str(), ca);
    if (!tls->is_valid()) {
      return Error{options_.name + " listener: cannot load TLS certificate " + options_.tls.cert_file + ", key " +
                   options_.tls.key_file + (ca ? std::string(" or client CA ") + ca : std::string())};
    }
    server_ = std::move(tls);
  } else {
    server_ = std::make_unique<httplib::Server>();
  }
  httplib::Server& svr = *server_;
  const std::int64_t threads = options_.threads;
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  svr.set_tcp_nodelay(true);
  svr.set_read_timeout(options_.read_timeout);
  svr.set_write_timeout(options_.write_timeout);
  svr.set_keep_alive_timeout(std::max<time_t>(1, std::chrono::duration_cast<std::chrono::seconds>(options_.keep_alive_timeout).count()));
  svr.set_keep_alive_max_count(static_cast<size_t>(options_.keep_alive_max_requests));
  svr.set_payload_max_length(std::numeric_limits<size_t>::max());

  const std::int64_t limit = options_.max_body_bytes;
  svr.set_expect_100_continue_handler([limit](const httplib::Request& req, httplib::Response& res) {
    auto length = content_length(req);
    if (length && *length > static_cast<std::uint64_t>(limit)) {
      answer_and_close(res, 413, too_large_message(limit));
      return 413;
    }
    return 100;
  });
  svr.set_exception_handler([name = options_.name](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    spdlog::error("{} listener: internal error serving {} {}: {}", name, req.method, req.path, what);
    set_json_error(res, 500, "internal error; see the daemon's log");
  });
  // cpp-httplib calls this for every answer of 400 or more; only its own bare answers get a body.
  httplib::Server::HandlerWithResponse on_error = [](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty() && !res.has_header("Content-Type")) {
      set_json_error(res, res.status, res.status == 413 ? "request body too large" : "bad request");
    }
    return httplib::Server::HandlerResponse::Handled;
  };
  svr.set_error_handler(on_error);

  auto handle = [this, limit](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader* reader) {
    HttpRequest request{req.method, req.path, {}, req.remote_addr + ":" + std::to_string(req.remote_port)};
    if (reader) {
      const auto length = content_length(req);
      if (length == UINT64_MAX) {
        answer_and_close(res, 400, "Content-Length is not a number");
        return;
      }
      if (length && *length > static_cast<std::uint64_t>(limit)) {
        answer_and_close(res, 413, too_large_message(limit));
        return;
      }
      // Room for the padding simdjson reads past the end, so the body is parsed where it lies.
      constexpr std::size_t kPadding = 64;
      if (length) request.body.reserve(*length + kPadding);
      bool too_large = false;
      bool complete = (*reader)([&](const char* data, size_t length) {
        if (request.body.size() + length > static_cast<size_t>(limit)) {
          too_large = true;
          return false;
        }
        if (request.body.capacity() < request.body.size() + length + kPadding) {
          request.body.reserve(std::max(request.body.capacity() * 2, request.body.size() + length + kPadding));
        }
        request.body.append(data, length);
        return true;
      });
      if (too_large) {
        answer_and_close(res, 413, too_large_message(limit));
        return;
      }
      if (!complete) {
        answer_and_close(res, 400, "request body could not be read completely");
        return;
      }
    }
    HttpResponse response = dispatch_(request);
    res.status = response.status;
    for (auto& [k, v] : response.headers) res.set_header(k, v);
    send_body(res, std::move(response.body), response.content_type);
  };
  httplib::Server::HandlerWithContentReader with_body = [handle](const httplib::Request& req, httplib::Response& res,
                                                                  const httplib::ContentReader& reader) {
    handle(req, res, &reader);
  };
  httplib::Server::Handler without_body = [handle](const httplib::Request& req, httplib::Response& res) {
    handle(req, res, nullptr);
  };
  svr.Post(".*", with_body);
  svr.Put(".*", with_body);
  svr.Patch(".*", with_body);
  svr.Delete(".*", with_body);
  svr.Get(".*", without_body);
  svr.Options(".*", without_body);

  const int bound = port == 0 ? svr.bind_to_any_port(host) : (svr.bind_to_port(host, port) ? port : -1);
  if (bound < 0) {
    return Error{options_.name + " listener: cannot listen on " + host + ":" + std::to_string(port) +
                 " (address in use, or not an address of this machine?)"};
  }
  port_ = bound;
  return {};
}

void Listener::serve() {
  if (server_ && !stopping_) server_->listen_after_bind();
}

void Listener::stop() {
  stopping_ = true;
  if (server_) server_->stop();
}

}  // namespace extender::server
