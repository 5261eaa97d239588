#include "extender/kube/reflector.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <condition_variable>
#include <random>

#include "extender/kube/watch_event.h"
#include "extender/wire/json_text.h"

namespace extender::kube {
namespace {

using nlohmann::json;

std::string url_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  return out;
}

std::string string_at(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* key : path) {
    if (!cur->is_object()) return {};
    auto it = cur->find(key);
    if (it == cur->end()) return {};
    cur = &*it;
  }
  return cur->is_string() ? cur->get<std::string>() : std::string();
}

// The integer code of a Status, else 0 (json::value() would throw on a field of another type).
long long code_of(const json& status) {
  if (!status.is_object()) return 0;
  auto it = status.find("code");
  return it != status.end() && it->is_number_integer() ? it->get<long long>() : 0;
}

std::string seconds_text(std::chrono::milliseconds d) {
  std::string text = std::to_string(d.count() / 1000);
  if (d.count() % 1000 != 0) {
    text += '.';
    text += std::to_string(d.count() % 1000 / 100);
  }
  return text + "s";
}

bool is_expired(const ApiReply& reply) {
  if (reply.status == 410) return true;
  json doc = parse_bounded(reply.body);
  const std::string reason = string_at(doc, {"reason"});
  return doc.is_object() && (code_of(doc) == 410 || reason == "Expired" || reason == "Gone");
}

}  // namespace

Reflector::Reflector(ApiClient& client, ReflectorOptions options, ReflectorSink& sink)
    : client_(client),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : steady_clock()),
      sink_(sink) {}

ReflectorStatus Reflector::status() const {
  std::lock_guard lock(mu_);
  return status_;
}

void Reflector::stop() {
  stopping_ = true;
  stream_.cancel();
  std::lock_guard lock(mu_);
  wake_.notify_all();
}

void Reflector::wait(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  clock_.wait(lock, wake_, clock_.now() + d, [this] { return stopping_.load(); });
}

void Reflector::fail(std::string message) {
  spdlog::warn("{} reflector: {}", options_.resource, message);
  std::lock_guard lock(mu_);
  status_.last_error = std::move(message);
  if (!status_.down_since) status_.down_since = clock_.now();
}

void Reflector::mark_up() {
  last_stream_failed_ = false;
  std::lock_guard lock(mu_);
  status_.down_since.reset();
}

std::string Reflector::query(std::initializer_list<std::pair<std::string, std::string>> params) const {
  std::string q = options_.path;
  char sep = '?';
  for (const auto& [k, v] : params) {
    if (v.empty()) continue;
    q += sep;
    q += k + "=" + url_encode(v);
    sep = '&';
  }
  if (!options_.field_selector.empty()) {
    q += sep;
    q += "fieldSelector=" + options_.field_selector;
  }
  return q;
}

Result<ApiReply> Reflector::fetch(const std::string& path) {
  constexpr std::size_t kMaxPageBytes = std::size_t{256} << 20;
  std::string body;
  bool too_large = false;
  auto reply = client_.stream(
      path, options_.request_timeout,
      [&](std::string_view data) {
        if (body.size() + data.size() > kMaxPageBytes) {
          too_large = true;
          return false;
        }
        body.append(data);
        return !stopping_;
      },
      stream_);
  if (too_large) return Error{"a list page larger than " + std::to_string(kMaxPageBytes) + " bytes"};
  if (!reply) return reply.error();
  if (reply->status / 100 == 2) reply->body = std::move(body);
  return reply;
}

Reflector::Outcome Reflector::list() {
  std::string continue_token;
  bool begun = false;
  bool restarted = false;
  for (;;) {
    if (stopping_) return Outcome::kStopped;
    auto reply = fetch(query({{"limit", std::to_string(options_.page_size)}, {"continue", continue_token}}));
    if (stopping_) return Outcome::kStopped;
    if (!reply) {
      fail("listing: " + reply.message());
      return Outcome::kFailed;
    }
    if (reply->status == 410 && !continue_token.empty()) {
      // The continue token expired between pages: start the list over, once without waiting.
      if (restarted) {
        fail("listing: the continue token expired twice in a row");
        return Outcome::kFailed;
      }
      restarted = true;
      continue_token.clear();
      begun = false;
      continue;
    }
    if (reply->status != 200) {
      fail("listing: HTTP " + std::to_string(reply->status) + ": " + status_message(*reply));
      return Outcome::kFailed;
    }
    if (!wire::nesting_within(reply->body, kMaxJsonNesting)) {
      fail("listing: a page nested deeper than " + std::to_string(kMaxJsonNesting) + " levels");
      return Outcome::kFailed;
    }
    json page = json::parse(reply->body, nullptr, false);
    if (!page.is_object() || !page.contains("items")) {
      fail("listing: the answer is not a list");
      return Outcome::kFailed;
    }
    if (!begun) {
      sink_.begin_list();
      begun = true;
    }
    if (page["items"].is_array()) {
      for (const auto& item : page["items"]) sink_.list_item(item);
    }
    continue_token = string_at(page, {"metadata", "continue"});
    if (continue_token.empty()) {
      resource_version_ = string_at(page, {"metadata", "resourceVersion"});
      sink_.end_list();
      std::lock_guard lock(mu_);
      status_.synced = true;
      status_.last_error.clear();
      status_.down_since.reset();
      last_stream_failed_ = false;
      status_.resource_version = resource_version_;
      ++status_.lists;
      return Outcome::kResume;
    }
  }
}

// One watch request: its lines handed to the sink as they arrive, and how the stream ended.
class Reflector::WatchPass {
 public:
  WatchPass(Reflector& r, long long timeout_seconds)
      : r_(r), seconds_(timeout_seconds), idle_bound_(std::chrono::seconds(timeout_seconds) + r.options_.watch_grace) {}

  std::chrono::milliseconds idle_bound() const { return idle_bound_; }
  // A piece of the stream; false to stop reading.
  bool on_data(std::string_view data);
  // The stream's status line arrived.
  void on_status(int status) {
    if (status != 200) return;
    established_ = true;
    last_data_ = r_.clock_.now();
    if (!r_.last_stream_failed_) bring_up();
  }
  // What the watch comes to, once the stream is over with `reply`.
  Outcome finish(const Result<ApiReply>& reply);

 private:
  bool on_line(std::string_view text);
  bool too_long() {
    r_.fail("watch: an event longer than " + std::to_string(r_.options_.max_line_bytes) + " bytes");
    outcome_ = Outcome::kFailed;
    return false;
  }
  void bring_up() {
    if (up_) return;
    up_ = true;
    r_.mark_up();
  }
  Outcome failed(const std::string& message);

  Reflector& r_;
  const long long seconds_;
  const std::chrono::milliseconds idle_bound_;
  std::string line_;  // a line cut by the end of a piece
  Outcome outcome_ = Outcome::kResume;
  const TimePoint started_ = r_.clock_.now();
  TimePoint last_data_ = started_;
  bool established_ = false;
  bool up_ = false;
  bool got_event_ = false;
};

bool Reflector::WatchPass::on_data(std::string_view data) {
  last_data_ = r_.clock_.now();
  const std::size_t max = r_.options_.max_line_bytes;
  std::size_t start = 0;
  for (std::size_t nl = data.find('\n'); nl != std::string_view::npos; nl = data.find('\n', start)) {
    // The bound holds however the network cut the stream: a whole line inside one piece too.
    if (line_.size() + (nl - start) > max) return too_long();
    if (line_.empty()) {
      if (!on_line(data.substr(start, nl - start))) return false;
    } else {
      line_.append(data.substr(start, nl - start));
      if (!on_line(line_)) return false;
      line_.clear();
    }
    start = nl + 1;
  }
  if (line_.size() + (data.size() - start) > max) return too_long();
  line_.append(data.substr(start));
  return !r_.stopping_;
}

bool Reflector::WatchPass::on_line(std::string_view text) {
  if (text.empty()) return true;
  auto event = parse_watch_event(text);
  if (!event) {
    r_.fail("watch: " + event.message());
    outcome_ = Outcome::kFailed;
    return false;
  }
  const std::string& type = event->type;
  const json& object = event->object;
  if (type == "ERROR") {
    const long long code = code_of(object);
    const std::string reason = string_at(object, {"reason"});
    if (code == 410 || reason == "Expired" || reason == "Gone") {
      outcome_ = Outcome::kRelist;
    } else {
      r_.fail("watch: error event: " + string_at(object, {"message"}));
      outcome_ = Outcome::kFailed;
    }
    return false;
  }
  bring_up();
  const std::string rv = string_at(object, {"metadata", "resourceVersion"});
  if (type == "ADDED" || type == "MODIFIED" || type == "DELETED") {
    r_.sink_.event(type, object);
  } else if (type != "BOOKMARK") {
    return true;  // an event type this version does not know: skip it
  }
  got_event_ = true;
  if (!rv.empty()) r_.resource_version_ = rv;
  return true;
}

Reflector::Outcome Reflector::WatchPass::finish(const Result<ApiReply>& reply) {
  if (r_.stopping_) return Outcome::kStopped;
  r_.stream_delivered_ = got_event_;
  if (outcome_ == Outcome::kFailed && established_) r_.last_stream_failed_ = true;
  if (outcome_ != Outcome::kResume) return outcome_;
  if (!reply) return failed(reply.message());
  if (reply->status == 200) {
    bring_up();
    if (got_event_) {
      std::lock_guard lock(r_.mu_);
      r_.status_.last_error.clear();
      r_.status_.resource_version = r_.resource_version_;
    }
    // The server ended the watch (timeoutSeconds): resume from the last version. One that ends at
    // once with nothing in it is not a timeout; do not spin on it.
    if (!got_event_ && r_.clock_.now() - started_ < std::chrono::seconds(1)) r_.wait(r_.options_.backoff_initial);
    return Outcome::kResume;
  }
  if (is_expired(*reply)) return Outcome::kRelist;
  r_.fail("watch: HTTP " + std::to_string(reply->status) + ": " + status_message(*reply));
  return Outcome::kFailed;
}

// The stream failed: gone silent past the idle bound once established, or not served at all.
Reflector::Outcome Reflector::WatchPass::failed(const std::string& message) {
  const auto silent = r_.clock_.now() - last_data_;
  if (established_ && silent >= idle_bound_) {
    r_.fail("watch: nothing received for " + seconds_text(idle_bound_) + " (timeoutSeconds " +
            std::to_string(seconds_) + " plus " + seconds_text(r_.options_.watch_grace) +
            " of grace); dropped the stream, resuming from resourceVersion " + r_.resource_version_);
    r_.last_stream_failed_ = true;
  } else {
    r_.fail("watch: " + message);
  }
  return Outcome::kFailed;
}

Reflector::Outcome Reflector::watch() {
  const auto seconds =
      std::max<long long>(1, std::chrono::duration_cast<std::chrono::seconds>(options_.watch_timeout).count());
  const std::string path = query({{"watch", "1"},
                                  {"resourceVersion", resource_version_},
                                  {"allowWatchBookmarks", "true"},
                                  {"timeoutSeconds", std::to_string(seconds)}});
  WatchPass pass(*this, seconds);
  auto reply = client_.stream(
      path, pass.idle_bound(), [&](std::string_view data) { return pass.on_data(data); }, stream_,
      [&](int status) { pass.on_status(status); });
  return pass.finish(reply);
}

void Reflector::run() {
  std::mt19937 rng(std::random_device{}());
  std::chrono::milliseconds backoff = options_.backoff_initial;
  bool need_list = true;
  while (!stopping_) {
    Outcome outcome = need_list ? list() : watch();
    switch (outcome) {
      case Outcome::kStopped: return;
      case Outcome::kResume:
        need_list = false;
        backoff = options_.backoff_initial;
        break;
      case Outcome::kRelist:
        spdlog::info("{} reflector: resourceVersion {} is too old; listing again", options_.resource,
                     resource_version_);
        need_list = true;
        break;
      case Outcome::kFailed: {
        // A watch that delivered events before it failed was working: retry it soon.
        if (!need_list && stream_delivered_) backoff = options_.backoff_initial;
        // Jitter: wait between 75% and 125% of the current backoff, then double it.
        std::uniform_real_distribution<double> jitter(0.75, 1.25);
        wait(std::chrono::milliseconds(static_cast<long long>(static_cast<double>(backoff.count()) * jitter(rng))));
        backoff = std::min(backoff * 2, options_.backoff_max);
        // A watch that keeps failing may be stuck on an unusable version: list again after a few.
        need_list = need_list || backoff >= options_.backoff_max / 4;
        break;
      }
    }
  }
}

}  // namespace extender::kube
