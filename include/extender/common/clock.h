#pragma once
// The daemon's one clock. Every deadline, expiry, age and elapsed time is a TimePoint or Duration
// of the process's monotonic clock, SteadyClock; code names these, not std::chrono::steady_clock.
// Wall time (std::chrono::system_clock) appears only where the API server's objects carry it.
//
// Clock is the injectable source of "now" for code that expires or waits on time, so that tests
// can set the time (tests/support/fake_clock.h); steady_clock() is the process's. Implementations
// must be thread-safe.
#include <chrono>

namespace extender {

using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;
using Duration = SteadyClock::duration;

class Clock {
 public:
  using time_point = TimePoint;
  using duration = Duration;
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
};

// The process's SteadyClock behind the Clock interface, for the life of the process.
const Clock& steady_clock();

}  // namespace extender
