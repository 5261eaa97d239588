#pragma once
// DeadlineQueue: when each connection (by id) next needs attention, earliest first: a min-heap
// with lazy invalidation instead of a scan of every connection. An id has one live deadline, its
// earliest armed; arming a later one keeps the earlier (it fires early and its owner re-arms);
// entries of forgotten or superseded deadlines are skipped when they surface. Header-only value
// type; one thread at a time, not thread-safe.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <unordered_map>
#include <vector>

#include "extender/common/clock.h"

namespace extender::http {

class DeadlineQueue {
 public:
  // TimePoint::max() arms nothing.
  void arm(std::uint64_t id, TimePoint at) {
    if (at == TimePoint::max()) return;
    auto [it, fresh] = armed_.try_emplace(id, at);
    if (!fresh) {
      if (at >= it->second) return;
      it->second = at;
    }
    heap_.push({at, id});
  }
  void forget(std::uint64_t id) { armed_.erase(id); }
  // An id whose live deadline is at or before `now` (disarmed by this call); nullopt when none.
  std::optional<std::uint64_t> pop_due(TimePoint now) {
    while (!heap_.empty() && heap_.top().at <= now) {
      const Entry e = heap_.top();
      heap_.pop();
      auto it = armed_.find(e.id);
      if (it == armed_.end() || it->second != e.at) continue;
      armed_.erase(it);
      return e.id;
    }
    return std::nullopt;
  }
  // The earliest entry (possibly stale: at worst an early wake-up).
  std::optional<TimePoint> next() const {
    if (heap_.empty()) return std::nullopt;
    return heap_.top().at;
  }
  std::size_t armed() const { return armed_.size(); }

 private:
  struct Entry {
    TimePoint at;
    std::uint64_t id;
    bool operator>(const Entry& o) const { return at > o.at; }
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_;
  std::unordered_map<std::uint64_t, TimePoint> armed_;
};

}  // namespace extender::http
