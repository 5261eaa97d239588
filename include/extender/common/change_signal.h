#pragma once
// ChangeSignal: a counter of changes that threads can wait on, measured against a Clock. The
// writer calls notify() after each change it publishes; a reader takes version() before reading
// what it watches, and await(seen, ...) returns as soon as the version differs from `seen` (so a
// change between the read and the wait is never missed), or when `clock` reaches `until`.
// Thread-safe; not copyable.
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "extender/common/clock.h"

namespace extender {

class ChangeSignal {
 public:
  ChangeSignal() = default;
  ChangeSignal(const ChangeSignal&) = delete;
  ChangeSignal& operator=(const ChangeSignal&) = delete;

  std::uint64_t version() const;
  void notify();
  // True when a change came after `seen`, false when `until` came first.
  bool await(std::uint64_t seen, TimePoint until, const Clock& clock) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::uint64_t version_ = 0;
};

}  // namespace extender
