#include "extender/kube/token_bucket.h"

#include <algorithm>

namespace extender::kube {

TokenBucket::TokenBucket(std::int64_t qps, std::int64_t burst, TimePoint start)
    : qps_(qps), burst_(static_cast<double>(std::max<std::int64_t>(1, burst))), tokens_(burst_), last_(start) {}

std::optional<TimePoint> TokenBucket::reserve(TimePoint now, TimePoint deadline) {
  if (qps_ <= 0) return now;
  if (now > last_) {
    tokens_ =
        std::min(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * static_cast<double>(qps_));
    last_ = now;
  }
  const double left = tokens_ - 1;
  TimePoint at = std::max(now, last_);
  if (left < 0) {
    at += std::chrono::duration_cast<Duration>(std::chrono::duration<double>(-left / static_cast<double>(qps_)));
  }
  if (at > deadline) return std::nullopt;
  tokens_ = left;
  return at;
}

Status RateLimiter::wait(TimePoint deadline) {
  std::optional<TimePoint> at;
  {
    std::lock_guard lock(mu_);
    at = bucket_.reserve(clock_.now(), deadline);
  }
  if (!at) {
    return Error{"the client-side limit of API writes (kubernetes.api_qps " + std::to_string(qps_) + ", api_burst " +
                 std::to_string(burst_) + ") allows none before the deadline"};
  }
  clock_.sleep_until(*at);
  return {};
}

}  // namespace extender::kube
