#pragma once
// A clock a test sets and advances by hand. Thread-safe.
// sleep_until moves the time forward to the sleeper's wake-up at once (a retry loop's pauses pass
// instantly and exactly); wait() returns when notified or after a millisecond of real time, so
// that a waiter sees the test's advance() promptly and rechecks its condition and the time.
#include <atomic>
#include <chrono>

#include "extender/common/clock.h"

namespace extender::testing {

class FakeClock final : public Clock {
 public:
  using Clock::wait;
  explicit FakeClock(time_point start = time_point{} + std::chrono::hours(1)) : start_(start), now_(start) {}
  time_point now() const override { return now_.load(); }
  // Moves with now(), from 2026-01-01T00:00:00Z at the start.
  WallTime wall_now() const override {
    return WallTime(std::chrono::seconds(1'767'225'600)) +
           std::chrono::duration_cast<WallTime::duration>(now() - start_);
  }
  void advance(std::chrono::steady_clock::duration d) {
    time_point at = now_.load();
    while (!now_.compare_exchange_weak(at, at + d)) {
    }
  }
  void sleep_until(time_point until) const override {
    time_point at = now_.load();
    while (at < until && !now_.compare_exchange_weak(at, until)) {
    }
  }
  void wait(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, time_point until) const override {
    if (now() < until) cv.wait_for(lock, std::chrono::milliseconds(1));
  }

 private:
  const time_point start_;
  mutable std::atomic<time_point> now_;
};

}  // namespace extender::testing
