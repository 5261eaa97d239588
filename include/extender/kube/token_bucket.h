#pragma once
// The client-side rate limit of the daemon's API writes, as client-go's clients have it (a token
// bucket of QPS and burst; golang.org/x/time/rate's reservations). TokenBucket is the pure
// bucket: time is passed in, a value type, not thread-safe. RateLimiter waits on one with the
// steady clock for any number of threads (thread-safe).
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "extender/common/clock.h"
#include "extender/common/result.h"

namespace extender::kube {

class TokenBucket {
 public:
  // `qps` tokens a second, held up to `burst` (at least 1); full at `start`. qps 0: no limit.
  TokenBucket(std::int64_t qps, std::int64_t burst, TimePoint start);

  // Takes a token for one write and says when it may be sent: `now` while tokens are left, else
  // when the refill has made this one (writes waiting queue in the order they asked). nullopt,
  // taking nothing, when that time is after `deadline`.
  std::optional<TimePoint> reserve(TimePoint now, TimePoint deadline);

 private:
  std::int64_t qps_;
  double burst_;
  double tokens_;  // below 0 while writes wait for the refill
  TimePoint last_;
};

class RateLimiter {
 public:
  // `clock`: the refill's and the waits' clock.
  RateLimiter(std::int64_t qps, std::int64_t burst, const Clock& clock = steady_clock())
      : qps_(qps), burst_(burst), clock_(clock), bucket_(qps, burst, clock.now()) {}

  // Blocks until one write may be sent. When it could not be sent by `deadline` it answers an
  // error at once, without waiting and without taking a token.
  Status wait(TimePoint deadline);

 private:
  const std::int64_t qps_;
  const std::int64_t burst_;
  const Clock& clock_;
  std::mutex mu_;
  TokenBucket bucket_;
};

}  // namespace extender::kube
