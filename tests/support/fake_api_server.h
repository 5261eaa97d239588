#pragma once
// An in-process fake Kubernetes API server for the tests of kube and sources: a cpp-httplib Server on
// 127.0.0.1 and an ephemeral port whose routes each test scripts. Every request is recorded
// (method, path, query parameters, body, Authorization) before its handler runs, so tests can
// assert what the client sent and wait for a request to arrive. Watch responses are WatchFeeds:
// queues the test pushes pieces into, each written as one HTTP chunk, ended cleanly (end()), cut
// mid-response (cut()), frozen silent (freeze()), or left hanging until the client goes away or
// the server stops.
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

namespace extender::kube::testing {

using nlohmann::json;
using namespace std::chrono_literals;

// Polls `condition` until it holds or `timeout` passes (for what is inherently asynchronous:
// a reflector catching up, a request arriving). Never a measure of speed.
template <class F>
bool eventually(F&& condition, std::chrono::milliseconds timeout = 5000ms) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
}

// A Kubernetes Status body.
inline json status_body(int code, const std::string& reason, const std::string& message) {
  return json{{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
              {"status", "Failure"}, {"message", message}, {"reason", reason},
              {"code", code}};
}

// One watch event line (with its newline), as the API server writes it.
inline std::string event_line(std::string_view type, const json& object) {
  return json{{"type", std::string(type)}, {"object", object}}.dump() + "\n";
}

struct RecordedRequest {
  std::string method;
  std::string path;
  std::multimap<std::string, std::string> params;
  std::string body;
  std::string authorization;

  bool has(const std::string& key) const { return params.count(key) > 0; }
  std::string param(const std::string& key) const {
    auto it = params.find(key);
    return it == params.end() ? std::string() : it->second;
  }
  bool is_watch() const { return param("watch") == "1" || param("watch") == "true"; }
};

// The body of one watch response, written by the test.
class WatchFeed {
 public:
  // One HTTP chunk (any bytes: half a line, half a UTF-8 sequence, several lines).
  void send(std::string piece) { push({Item::kData, std::move(piece)}); }
  void send_event(std::string_view type, const json& object) { send(event_line(type, object)); }
  // Ends the response properly (the terminating chunk), as a server-side watch timeout does.
  void end() { push({Item::kEnd, {}}); }
  // Drops the connection in the middle of the response (no terminating chunk).
  void cut() { push({Item::kCut, {}}); }
  // From now on writes nothing, not even the idle newlines, and keeps the connection open until
  // the server stops: a stuck server, or a peer gone half-open.
  void freeze() { push({Item::kFreeze, {}}); }

  // The stream is over: ended, cut, the client went away, or the server stopped.
  bool closed() const {
    std::lock_guard lock(mu_);
    return closed_;
  }
  bool wait_closed(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [this] { return closed_; });
  }

 private:
  friend class FakeApiServer;
  struct Item {
    enum Kind { kData, kEnd, kCut, kFreeze } kind;
    std::string data;
  };

  void push(Item item) {
    std::lock_guard lock(mu_);
    items_.push_back(std::move(item));
    cv_.notify_all();
  }
  bool pop(Item& out, std::chrono::milliseconds wait) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, wait, [this] { return !items_.empty(); })) return false;
    out = std::move(items_.front());
    items_.pop_front();
    return true;
  }
  void mark_closed() {
    std::lock_guard lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> items_;
  bool closed_ = false;
  bool at_line_start_ = true;  // only the provider thread touches these two
  bool frozen_ = false;
};

class FakeApiServer {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  // Plain HTTP, or the given server (an httplib::SSLServer for the TLS tests).
  explicit FakeApiServer(std::unique_ptr<httplib::Server> server = nullptr, std::string scheme = "http")
      : owned_(server ? std::move(server) : std::make_unique<httplib::Server>()),
        server_(*owned_),
        scheme_(std::move(scheme)) {
    ::signal(SIGPIPE, SIG_IGN);  // writes to clients that went away must fail, not kill the test
    // Watches hold a worker each while they live; leave room for them and for pooled connections.
    server_.new_task_queue = [] { return new httplib::ThreadPool(64); };
    server_.Get(".*", [this](const httplib::Request& req, httplib::Response& res) { dispatch("GET", req, res); });
    server_.Post(".*", [this](const httplib::Request& req, httplib::Response& res) { dispatch("POST", req, res); });
    server_.Patch(".*", [this](const httplib::Request& req, httplib::Response& res) { dispatch("PATCH", req, res); });
    server_.Put(".*", [this](const httplib::Request& req, httplib::Response& res) { dispatch("PUT", req, res); });
    server_.Delete(".*", [this](const httplib::Request& req, httplib::Response& res) { dispatch("DELETE", req, res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) throw std::runtime_error("fake API server: cannot bind 127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    if (!eventually([this] { return server_.is_running(); }, 5000ms))
      throw std::runtime_error("fake API server: not running");
  }
  ~FakeApiServer() { stop(); }
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  void stop() {
    {
      std::lock_guard lock(mu_);
      if (stopped_) return;
      stopped_ = true;
      stopping_ = true;
      cv_.notify_all();
    }
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  std::string url() const { return scheme_ + "://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  bool stopping() const { return stopping_; }

  // Routes requests whose method is `method` and whose path matches `path_pattern` (the whole
  // path; a "*" segment matches any one segment) to `handler`; replaces the handler of the same
  // method and pattern.
  void route(const std::string& method, const std::string& path_pattern, Handler handler) {
    std::lock_guard lock(mu_);
    for (auto& [m, p, h] : routes_) {
      if (m == method && p == path_pattern) {
        h = std::move(handler);
        return;
      }
    }
    routes_.emplace_back(method, path_pattern, std::move(handler));
  }

  static std::vector<std::string> segments(const std::string& path) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at <= path.size()) {
      std::size_t slash = path.find('/', at);
      if (slash == std::string::npos) slash = path.size();
      out.push_back(path.substr(at, slash - at));
      at = slash + 1;
    }
    return out;
  }
  static bool matches(const std::string& pattern, const std::string& path) {
    const auto p = segments(pattern);
    const auto s = segments(path);
    if (p.size() != s.size()) return false;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (p[i] == "*" ? s[i].empty() : p[i] != s[i]) return false;
    }
    return true;
  }

  // Requests received so far, in arrival order; optionally only those of `method` to `path`.
  std::vector<RecordedRequest> requests(const std::string& method = {}, const std::string& path = {}) const {
    std::lock_guard lock(mu_);
    std::vector<RecordedRequest> out;
    for (const auto& r : requests_) {
      if ((method.empty() || r.method == method) && (path.empty() || r.path == path)) out.push_back(r);
    }
    return out;
  }
  std::vector<RecordedRequest> watches(const std::string& path) const {
    std::vector<RecordedRequest> out;
    for (auto& r : requests("GET", path)) {
      if (r.is_watch()) out.push_back(std::move(r));
    }
    return out;
  }
  std::vector<RecordedRequest> lists(const std::string& path) const {
    std::vector<RecordedRequest> out;
    for (auto& r : requests("GET", path)) {
      if (!r.is_watch()) out.push_back(std::move(r));
    }
    return out;
  }

  // Answers with `body` as JSON.
  static void reply(httplib::Response& res, int status, const json& body) {
    res.status = status;
    res.set_content(body.dump(), "application/json");
  }

  // Serves `feed` as the chunked body of `res`. While the feed is idle at a line boundary a bare
  // newline goes out every few milliseconds (clients skip empty lines), so a client that went
  // away is noticed; in the middle of a line nothing is written until the test sends more.
  void serve_watch(httplib::Response& res, std::shared_ptr<WatchFeed> feed) {
    res.status = 200;
    res.set_chunked_content_provider(
        "application/json",
        [this, feed](size_t, httplib::DataSink& sink) -> bool {
          if (feed->frozen_) {
            std::this_thread::sleep_for(20ms);
            if (!stopping_) return true;
            feed->mark_closed();
            return false;
          }
          WatchFeed::Item item;
          if (!feed->pop(item, 20ms)) {
            if (stopping_) {
              feed->mark_closed();
              return false;
            }
            if (feed->at_line_start_ && !sink.write("\n", 1)) {
              feed->mark_closed();
              return false;
            }
            return true;
          }
          switch (item.kind) {
            case WatchFeed::Item::kData:
              if (item.data.empty()) return true;
              if (!sink.write(item.data.data(), item.data.size())) {
                feed->mark_closed();
                return false;
              }
              feed->at_line_start_ = item.data.back() == '\n';
              return true;
            case WatchFeed::Item::kEnd:
              sink.done();
              feed->mark_closed();
              return true;
            case WatchFeed::Item::kCut: feed->mark_closed(); return false;
            case WatchFeed::Item::kFreeze: feed->frozen_ = true; return true;
          }
          return false;
        },
        [feed](bool) { feed->mark_closed(); });
  }

  // For handlers that never answer: waits until release_hangs(), the server stops, or `max`.
  void hang(std::chrono::milliseconds max = 30'000ms) {
    std::unique_lock lock(mu_);
    const std::uint64_t generation = hang_generation_;
    ++hanging_;
    cv_.notify_all();
    cv_.wait_for(lock, max, [&] { return stopping_ || hang_generation_ != generation; });
    --hanging_;
  }
  void release_hangs() {
    std::lock_guard lock(mu_);
    ++hang_generation_;
    cv_.notify_all();
  }
  int hanging() const {
    std::lock_guard lock(mu_);
    return hanging_;
  }

 private:
  void dispatch(const std::string& method, const httplib::Request& req, httplib::Response& res) {
    Handler handler;
    {
      std::lock_guard lock(mu_);
      RecordedRequest r;
      r.method = method;
      r.path = req.path;
      for (const auto& [k, v] : req.params) r.params.emplace(k, v);
      r.body = req.body;
      r.authorization = req.get_header_value("Authorization");
      requests_.push_back(std::move(r));
      for (const auto& [m, p, h] : routes_) {
        if (m == method && matches(p, req.path)) {
          handler = h;
          break;
        }
      }
    }
    if (!handler) {
      reply(res, 404, status_body(404, "NotFound", "the server could not find the requested resource"));
      return;
    }
    handler(req, res);
  }

  std::unique_ptr<httplib::Server> owned_;
  httplib::Server& server_;
  std::string scheme_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
  std::vector<std::tuple<std::string, std::string, Handler>> routes_;
  std::vector<RecordedRequest> requests_;
  std::uint64_t hang_generation_ = 0;
  int hanging_ = 0;
};

// Hands each watch request of a scripted route a fresh WatchFeed, and the test takes them in
// arrival order to write to.
class WatchDesk {
 public:
  struct Accepted {
    RecordedRequest request;
    std::shared_ptr<WatchFeed> feed;
  };

  // From a route handler: a feed for this request, served on `res`.
  void accept(FakeApiServer& server, const httplib::Request& req, httplib::Response& res) {
    auto feed = std::make_shared<WatchFeed>();
    Accepted a;
    a.request.method = "GET";
    a.request.path = req.path;
    for (const auto& [k, v] : req.params) a.request.params.emplace(k, v);
    a.feed = feed;
    {
      std::lock_guard lock(mu_);
      pending_.push_back(a);
      ++accepted_;
      cv_.notify_all();
    }
    server.serve_watch(res, feed);
  }

  // The next watch that arrived (waiting up to `timeout`), or nullopt.
  std::optional<Accepted> take(std::chrono::milliseconds timeout = 5000ms) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, timeout, [this] { return !pending_.empty(); })) return std::nullopt;
    Accepted a = std::move(pending_.front());
    pending_.pop_front();
    return a;
  }
  int accepted() const {
    std::lock_guard lock(mu_);
    return accepted_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Accepted> pending_;
  int accepted_ = 0;
};

}  // namespace extender::kube::testing
