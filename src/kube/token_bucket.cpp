#include "extender/kube/token_bucket.h"

#include <algorithm>
#include <thread>

namespace extender::kube {

TokenBucket::TokenBucket(std::int64_t qps, std::int64_t burst, Clock::time_point start)
    : qps_(qps), burst_(static_cast<double>(std::max<std::int64_t>(1, burst))), tokens_(burst_), last_(start) {}

std::optional<TokenBucket::Clock::time_point> TokenBucket::reserve(Clock::time_point now, Clock::time_point deadline) {
  if (qps_ <= 0) return now;
  if (now > last_) {
    tokens_ = std::min(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * static_cast<double>(qps_));
    last_ = now;
  }
  const double left = tokens_ - 1;
  Clock::time_point at = std::max(now, last_);
  if (left < 0) at += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(-left / static_cast<double>(qps_)));
  if (at > deadline) return std::nullopt;
  tokens_ = left;
  return at;
}

Status RateLimiter::wait(Clock::time_point deadline) {
  std::optional<Clock::time_point> at;
  {
    std::lock_guard lock(mu_);
    at = bucket_.reserve(Clock::now(), deadline);
  }
  if (!at) {
    return Error{"the client-side limit of API writes (kubernetes.api_qps " + std::to_string(qps_) + ", api_burst " +
                 std::to_string(burst_) + ") allows none before the deadline"};
  }
  std::this_thread::sleep_until(*at);
  return {};
}

}  // namespace extender::kube
