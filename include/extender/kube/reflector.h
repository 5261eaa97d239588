#pragma once
// Reflector: keeps one resource kind in step with the API server, the way client-go does: a paged
// list (limit=500 with continue), then a watch from the list's resourceVersion (bookmarks on,
// timeoutSeconds, resumed from the last version seen when the server ends it). A 410 / Expired
// answer or ERROR event means the version is too old: list again. Other failures back off with
// jitter and retry. The stream is split on newlines, not on network chunks; a line is bounded in
// size and nesting. A watch silent for longer than its timeoutSeconds plus a grace (a stuck
// server, a half-open connection) is dropped and resumed from the last version. The status says
// since when the reflector has been down (failing to list or watch).
// run() blocks until stop(); status() is thread-safe.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "extender/common/clock.h"
#include "extender/kube/api_client.h"

namespace extender::kube {

// Receives what the reflector learns. Called from the reflector's thread only.
class ReflectorSink {
 public:
  virtual ~ReflectorSink() = default;
  // A full list starts; items follow through list_item(); end_list() makes it the whole truth.
  virtual void begin_list() = 0;
  virtual void list_item(const nlohmann::json& object) = 0;
  virtual void end_list() = 0;
  // A watch event: "ADDED", "MODIFIED" or "DELETED".
  virtual void event(std::string_view type, const nlohmann::json& object) = 0;
};

struct ReflectorOptions {
  std::string resource;        // for logs and readiness: "nodes", "pods", ...
  std::string path;            // e.g. /api/v1/pods
  std::string field_selector;  // optional, already URL-encoded
  std::size_t page_size = 500;
  std::chrono::milliseconds request_timeout{60'000};
  std::chrono::milliseconds watch_timeout{45'000};  // timeoutSeconds asked of the server
  // A watch stream silent for watch_timeout + watch_grace is dropped and resumed.
  std::chrono::milliseconds watch_grace{10'000};
  std::chrono::milliseconds backoff_initial{500};
  std::chrono::milliseconds backoff_max{30'000};
  std::size_t max_line_bytes = std::size_t{64} << 20;
  const Clock* clock = nullptr;  // the status's times, the silence bound and the backoff; null: steady_clock()
};

struct ReflectorStatus {
  bool synced = false;     // a full list has been delivered
  std::string last_error;  // the latest failure, empty once things work again
  std::string resource_version;
  std::uint64_t lists = 0;  // full lists delivered (relists included)
  // Since when listing or watching has been failing (a refused or failed request, a stream that
  // broke off or went silent); unset once a list succeeds or a watch stream is up again. After a
  // stream that went silent or carried a bad line, the next one counts as up only once an event
  // arrives or it ends cleanly, so streams that keep failing that way stay down.
  std::optional<TimePoint> down_since;
};

class Reflector {
 public:
  Reflector(ApiClient& client, ReflectorOptions options, ReflectorSink& sink);

  void run();
  void stop();
  ReflectorStatus status() const;
  const std::string& resource() const { return options_.resource; }

 private:
  enum class Outcome { kResume, kRelist, kFailed, kStopped };
  class WatchPass;  // one watch request's state (reflector.cpp)
  Outcome list();
  Outcome watch();
  // A GET whose body is collected, cancellable by stop() like the watch.
  Result<ApiReply> fetch(const std::string& path);
  void fail(std::string message);  // also marks the reflector down
  void mark_up();
  void wait(std::chrono::milliseconds d);
  std::string query(std::initializer_list<std::pair<std::string, std::string>> params) const;

  ApiClient& client_;
  ReflectorOptions options_;
  const Clock& clock_;
  ReflectorSink& sink_;
  std::atomic<bool> stopping_{false};
  StreamHandle stream_;
  std::string resource_version_;
  bool last_stream_failed_ = false;  // the previous watch went silent or carried a bad line
  bool stream_delivered_ = false;    // the previous watch delivered events

  mutable std::mutex mu_;
  ReflectorStatus status_;
  std::condition_variable wake_;
};

}  // namespace extender::kube
