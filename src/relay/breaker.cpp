#include "extender/relay/breaker.h"

namespace extender::relay {

std::string_view to_string(BreakerState state) {
  switch (state) {
    case BreakerState::kClosed: return "closed";
    case BreakerState::kOpen: return "open";
    case BreakerState::kHalfOpen: return "half-open";
  }
  return "unknown";
}

BreakerState Breaker::state(time_point now) const {
  if (!open_) return BreakerState::kClosed;
  return now < open_until_ ? BreakerState::kOpen : BreakerState::kHalfOpen;
}

Breaker::Ticket Breaker::admit(time_point now) {
  switch (state(now)) {
    case BreakerState::kClosed: return {.admitted = true, .probe = false};
    case BreakerState::kOpen: return {};
    case BreakerState::kHalfOpen:
      if (probe_in_flight_) return {};
      probe_in_flight_ = true;
      return {.admitted = true, .probe = true};
  }
  return {};
}

Breaker::Transition Breaker::report(const Ticket& ticket, bool success, time_point now) {
  if (!ticket.admitted) return Transition::kNone;
  if (ticket.probe) {
    probe_in_flight_ = false;
    if (success) {
      open_ = false;
      return Transition::kClosed;
    }
    open_until_ = now + options_.open_for;
    return Transition::kReopened;
  }
  if (open_ || success) return Transition::kNone;
  open_ = true;
  open_until_ = now + options_.open_for;
  return Transition::kOpened;
}

}  // namespace extender::relay
