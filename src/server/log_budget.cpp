#include "extender/server/log_budget.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <utility>

namespace extender::server {

void LogBudget::refill(Bucket& b, TimePoint now) const {
  if (now <= b.refilled) return;
  const double seconds = std::chrono::duration<double>(now - b.refilled).count();
  b.tokens = std::min(burst(), b.tokens + seconds * options_.per_second);
  b.refilled = now;
}

void LogBudget::forget_idle(TimePoint now) {
  if (forgotten_ != TimePoint{} && now - forgotten_ < std::chrono::seconds(1)) return;
  forgotten_ = now;
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    refill(it->second, now);
    const bool idle = it->second.unlogged == 0 && it->second.tokens >= burst();
    it = idle ? buckets_.erase(it) : std::next(it);
  }
}

LogBudget::Bucket& LogBudget::bucket_of(std::string_view caller, TimePoint now, bool& shared) {
  std::string key(caller);
  if (auto it = buckets_.find(key); it != buckets_.end()) return it->second;
  if (buckets_.size() >= options_.max_callers) forget_idle(now);
  if (buckets_.size() >= options_.max_callers) {
    shared = true;
    key.clear();
  }
  auto [it, inserted] = buckets_.try_emplace(std::move(key));
  if (inserted) it->second = Bucket{burst(), now, 0, {}};
  return it->second;
}

LogBudget::Verdict LogBudget::admit(std::string_view caller, TimePoint now) {
  if (options_.per_second <= 0) return {};
  std::lock_guard lock(mu_);
  Verdict v;
  Bucket& b = bucket_of(caller, now, v.shared);
  refill(b, now);
  if (b.tokens >= 1) {
    b.tokens -= 1;
    v.unlogged = std::exchange(b.unlogged, 0);
    v.span = v.unlogged ? now - b.first_unlogged : Duration{};
    return v;
  }
  v.write = false;
  if (b.unlogged++ == 0) b.first_unlogged = now;
  return v;
}

std::size_t LogBudget::callers() const {
  std::lock_guard lock(mu_);
  return buckets_.size();
}

}  // namespace extender::server
