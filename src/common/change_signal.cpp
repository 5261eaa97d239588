#include "extender/common/change_signal.h"

namespace extender {

std::uint64_t ChangeSignal::version() const {
  std::lock_guard lock(mu_);
  return version_;
}

void ChangeSignal::notify() {
  {
    std::lock_guard lock(mu_);
    ++version_;
  }
  cv_.notify_all();
}

bool ChangeSignal::await(std::uint64_t seen, TimePoint until, const Clock& clock) const {
  std::unique_lock lock(mu_);
  return clock.wait(lock, cv_, until, [&] { return version_ != seen; });
}

}  // namespace extender
