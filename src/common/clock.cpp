#include "extender/common/clock.h"

namespace extender {
namespace {

class ProcessClock final : public Clock {
 public:
  TimePoint now() const override { return SteadyClock::now(); }
};

}  // namespace

const Clock& steady_clock() {
  static const ProcessClock clock;
  return clock;
}

}  // namespace extender
