#pragma once
// A clock a test sets and advances by hand. Thread-safe.
#include <atomic>
#include <chrono>

#include "extender/common/clock.h"

namespace extender::testing {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(time_point start = time_point{} + std::chrono::hours(1)) : now_(start) {}
  time_point now() const override { return now_.load(); }
  void advance(std::chrono::steady_clock::duration d) { now_.store(now_.load() + d); }

 private:
  std::atomic<time_point> now_;
};

}  // namespace extender::testing
