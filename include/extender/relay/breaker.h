#pragma once
// Breaker: a circuit breaker over calls to one upstream, pure (no I/O, no clock: the caller passes
// the time) and not thread-safe (the relay holds one mutex around it). A value type.
//
//   closed     every call is let through; a failed call (timeout, connect error, HTTP 5xx) opens it.
//   open       every call is refused at once, for `open_for` from the failure that opened it.
//   half-open  after `open_for`: exactly one call (the probe) is let through; the others are still
//              refused while it is in flight. The probe's success closes the breaker, its failure
//              opens it again for `open_for`.
//
// Each admitted call's outcome must be reported once, with the Ticket admit() returned. Outcomes of
// calls admitted while closed count only while the breaker is closed (a late failure from before it
// opened does not extend the open period; a late success does not close it: only the probe does).
#include <chrono>
#include <string_view>

#include "extender/common/clock.h"

namespace extender::relay {

struct BreakerOptions {
  std::chrono::milliseconds open_for{5000};
};

enum class BreakerState { kClosed, kOpen, kHalfOpen };
std::string_view to_string(BreakerState state);

class Breaker {
 public:
  using time_point = TimePoint;

  struct Ticket {
    bool admitted = false;
    bool probe = false;  // the one call of the half-open state
  };
  // What a report changed, for the caller to log once.
  enum class Transition { kNone, kOpened, kReopened, kClosed };

  explicit Breaker(BreakerOptions options = {}) : options_(options) {}

  // Whether a call may go upstream now.
  Ticket admit(time_point now);
  // The outcome of a call admit() let through.
  Transition report(const Ticket& ticket, bool success, time_point now);

  // The state at `now` (open becomes half-open by the passing of time alone).
  BreakerState state(time_point now) const;

 private:
  BreakerOptions options_;
  bool open_ = false;  // open or half-open
  time_point open_until_{};
  bool probe_in_flight_ = false;
};

}  // namespace extender::relay
