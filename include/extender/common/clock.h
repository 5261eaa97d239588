#pragma once
// Clock: where code that expires or waits on time reads it, so that tests can set the time.
// Implementations must be thread-safe.
#include <chrono>

namespace extender {

class Clock {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  virtual time_point now() const = 0;
};

// The process's steady clock, for the life of the process.
const Clock& steady_clock();

}  // namespace extender
