#include "extender/common/clock.h"

#include <thread>

#include "extender/common/blocking_region.h"

namespace extender {
namespace {

class ProcessClock final : public Clock {
 public:
  TimePoint now() const override { return SteadyClock::now(); }
  WallTime wall_now() const override { return std::chrono::system_clock::now(); }
  void sleep_until(TimePoint until) const override {
    BlockingRegion waiting;
    std::this_thread::sleep_until(until);
  }
  void wait(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, TimePoint until) const override {
    BlockingRegion waiting;
    cv.wait_until(lock, until);
  }
};

}  // namespace

const Clock& steady_clock() {
  static const ProcessClock clock;
  return clock;
}

}  // namespace extender
