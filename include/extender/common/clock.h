#pragma once
// The daemon's one clock. Every deadline, expiry, age and elapsed time is a TimePoint or Duration
// of the process's monotonic clock, SteadyClock; code names these, not std::chrono::steady_clock.
// Wall time (std::chrono::system_clock) appears only where the API server's objects carry it.
//
// Clock is the injectable source of "now", and of the waits measured against it, for code that
// expires or waits on time, so that tests can set the time (tests/support/fake_clock.h);
// steady_clock() is the process's; its sleeps and waits are BlockingRegions (blocking_region.h).
// Outside this module, src/ neither reads a clock nor sleeps nor waits with a timeout directly,
// not even at its I/O edges (tests/clock_rules.py).
// Implementations must be thread-safe.
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace extender {

using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;
using Duration = SteadyClock::duration;
using WallTime = std::chrono::system_clock::time_point;

class Clock {
 public:
  using time_point = TimePoint;
  using duration = Duration;
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
  // Wall time, for what the API server's objects carry (a lease's renewTime, an annotation's stamp).
  virtual WallTime wall_now() const = 0;
  // Blocks the calling thread until now() reaches `until`.
  virtual void sleep_until(TimePoint until) const = 0;
  // Releases `lock` and blocks until `cv` is notified, now() reaches `until`, or spuriously;
  // holds `lock` again on return. Callers recheck their condition and the time.
  virtual void wait(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, TimePoint until) const = 0;

  void sleep_for(Duration d) const { sleep_until(now() + d); }
  // Waits as above until `done()` holds (true) or now() reaches `until` (done()'s last answer).
  template <class Done>
  bool wait(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, TimePoint until, Done done) const {
    while (!done()) {
      if (now() >= until) return done();
      wait(lock, cv, until);
    }
    return true;
  }
};

// The process's SteadyClock behind the Clock interface, for the life of the process.
const Clock& steady_clock();

}  // namespace extender
