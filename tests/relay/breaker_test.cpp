#include "extender/relay/breaker.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace extender::relay {
namespace {

using namespace std::chrono_literals;
using Transition = Breaker::Transition;

// One step of a script: at `at` (ms on a fake clock), either ask admit() (outcome empty) or report
// the outcome of the ticket admit() returned at step `ticket_of`.
struct Step {
  int at_ms;
  enum Kind { kAdmit, kSucceed, kFail } kind;
  int ticket_of = -1;                          // for kSucceed/kFail: the step whose ticket is reported
  bool admitted = false;                       // kAdmit: expected
  bool probe = false;                          // kAdmit: expected
  Transition transition = Transition::kNone;   // kSucceed/kFail: expected
  BreakerState after = BreakerState::kClosed;  // expected state after the step
};

struct Case {
  std::string name;
  std::vector<Step> steps;
};

constexpr auto C = BreakerState::kClosed;
constexpr auto O = BreakerState::kOpen;
constexpr auto H = BreakerState::kHalfOpen;

Step admit(int at, bool admitted, bool probe, BreakerState after) {
  return {at, Step::kAdmit, -1, admitted, probe, Transition::kNone, after};
}
Step succeed(int at, int of, Transition t, BreakerState after) {
  return {at, Step::kSucceed, of, false, false, t, after};
}
Step fail(int at, int of, Transition t, BreakerState after) { return {at, Step::kFail, of, false, false, t, after}; }

// open_for is 100ms in every case.
const std::vector<Case> kCases = {
    {"closed lets calls through and successes keep it closed",
     {admit(0, true, false, C), succeed(1, 0, Transition::kNone, C), admit(2, true, false, C),
      succeed(3, 2, Transition::kNone, C)}},
    {"a failure opens it and calls are refused until open_for",
     {admit(0, true, false, C), fail(10, 0, Transition::kOpened, O), admit(11, false, false, O),
      admit(109, false, false, O), admit(110, true, true, H)}},
    {"half-open lets exactly one call through; others refused while it is in flight",
     {admit(0, true, false, C), fail(0, 0, Transition::kOpened, O), admit(100, true, true, H),
      admit(101, false, false, H), admit(150, false, false, H), succeed(160, 2, Transition::kClosed, C),
      admit(161, true, false, C)}},
    {"the probe's failure opens it again for open_for from then",
     {admit(0, true, false, C), fail(0, 0, Transition::kOpened, O), admit(100, true, true, H),
      fail(130, 2, Transition::kReopened, O), admit(131, false, false, O), admit(229, false, false, O),
      admit(230, true, true, H), succeed(231, 6, Transition::kClosed, C)}},
    {"a late failure of a call admitted while closed does not extend the open period",
     {admit(0, true, false, C), admit(0, true, false, C), fail(10, 0, Transition::kOpened, O),
      fail(50, 1, Transition::kNone, O), admit(110, true, true, H)}},
    {"a late success of a call admitted while closed does not close it",
     {admit(0, true, false, C), admit(0, true, false, C), fail(10, 0, Transition::kOpened, O),
      succeed(20, 1, Transition::kNone, O), admit(21, false, false, O)}},
    {"a late failure while half-open leaves the probe alone",
     {admit(0, true, false, C), admit(0, true, false, C), fail(0, 0, Transition::kOpened, O), admit(100, true, true, H),
      fail(101, 1, Transition::kNone, H), admit(102, false, false, H), succeed(103, 3, Transition::kClosed, C)}},
    {"after closing, a new failure opens it again",
     {admit(0, true, false, C), fail(0, 0, Transition::kOpened, O), admit(100, true, true, H),
      succeed(100, 2, Transition::kClosed, C), admit(200, true, false, C), fail(201, 4, Transition::kOpened, O),
      admit(202, false, false, O)}},
    {"a refused ticket's report changes nothing",
     {admit(0, true, false, C), fail(0, 0, Transition::kOpened, O), admit(1, false, false, O),
      succeed(2, 2, Transition::kNone, O), fail(3, 2, Transition::kNone, O)}},
};

TEST(Breaker, Table) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.name);
    Breaker breaker(BreakerOptions{.open_for = 100ms});
    const Breaker::time_point t0{};
    std::vector<Breaker::Ticket> tickets(c.steps.size());
    for (std::size_t i = 0; i < c.steps.size(); ++i) {
      SCOPED_TRACE("step " + std::to_string(i));
      const Step& s = c.steps[i];
      const auto now = t0 + std::chrono::milliseconds(s.at_ms);
      if (s.kind == Step::kAdmit) {
        tickets[i] = breaker.admit(now);
        EXPECT_EQ(tickets[i].admitted, s.admitted);
        EXPECT_EQ(tickets[i].probe, s.probe);
      } else {
        ASSERT_GE(s.ticket_of, 0);
        EXPECT_EQ(breaker.report(tickets[s.ticket_of], s.kind == Step::kSucceed, now), s.transition);
      }
      EXPECT_EQ(to_string(breaker.state(now)), to_string(s.after));
    }
  }
}

TEST(Breaker, DefaultOpenForIsFiveSeconds) { EXPECT_EQ(BreakerOptions{}.open_for, 5s); }

}  // namespace
}  // namespace extender::relay
