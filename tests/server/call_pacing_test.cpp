#include "extender/server/call_pacing.h"

#include <gtest/gtest.h>

#include <string>

namespace extender::server {
namespace {

using namespace std::chrono_literals;
using Reason = CallPacing::Reason;

const TimePoint t0 = TimePoint{} + 1000s;

CallPacing::Options paced(std::size_t max_pods = 16'384) { return {50ms, 10, 20, max_pods, 4'096}; }

// Judges `n` calls at `at`; returns how many were paced.
int paced_calls(CallPacing& p, int n, TimePoint at, const std::string& caller = "10.0.0.1",
                const std::string& verb = "filter", const std::string& uid = "uid-a", bool error = false) {
  int out = 0;
  for (int i = 0; i < n; ++i) out += p.judge(caller, verb, uid, error, at).reason != Reason::kNone;
  return out;
}

TEST(CallPacing, NoHoldPacesNothing) {
  CallPacing p({0ms});
  EXPECT_EQ(paced_calls(p, 1000, t0), 0);
  EXPECT_EQ(paced_calls(p, 1000, t0, "10.0.0.1", "filter", "uid-a", true), 0);
  EXPECT_EQ(p.windows(), 0u);
}

TEST(CallPacing, OnePodsCallsOfOneVerbPastTheLimitInASecondAreHeld) {
  CallPacing p(paced());
  EXPECT_EQ(paced_calls(p, 10, t0), 0);
  const CallPacing::Verdict v = p.judge("10.0.0.1", "filter", "uid-a", false, t0 + 10ms);
  EXPECT_EQ(v.reason, Reason::kRepeated);
  EXPECT_EQ(v.repeats, 11);
  EXPECT_EQ(v.answer_at, t0 + 60ms);
  EXPECT_EQ(paced_calls(p, 8, t0 + 20ms), 8);
  // The hold grows with the calls past the limit: from the 20th call twice, and no more.
  EXPECT_EQ(p.judge("10.0.0.1", "filter", "uid-a", false, t0 + 30ms).answer_at, t0 + 30ms + 2 * 50ms);
  EXPECT_EQ(paced_calls(p, 1000, t0 + 60ms), 1000);
  EXPECT_EQ(p.judge("10.0.0.1", "filter", "uid-a", false, t0 + 70ms).answer_at,
            t0 + 70ms + CallPacing::kMostHolds * 50ms);
  EXPECT_EQ(paced_calls(p, 10, t0 + 1s), 0);  // a new window
}

TEST(CallPacing, KubeSchedulersPatternIsNeverPaced) {
  // Each pod's four verbs once per attempt, a retry a second later, 300 pods a second.
  CallPacing p(paced());
  int held = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const TimePoint at = t0 + std::chrono::seconds(attempt);
    for (int pod = 0; pod < 300; ++pod) {
      for (const char* verb : {"filter", "prioritize", "filter-unmanaged", "prioritize-unmanaged"}) {
        held += paced_calls(p, 2, at, "10.0.0.1", verb, "uid-" + std::to_string(pod));
      }
    }
  }
  EXPECT_EQ(held, 0);
}

TEST(CallPacing, WindowsAreApartByCallerVerbAndPod) {
  CallPacing p(paced());
  EXPECT_EQ(paced_calls(p, 100, t0), 90);
  EXPECT_EQ(paced_calls(p, 10, t0, "10.0.0.2"), 0);
  EXPECT_EQ(paced_calls(p, 10, t0, "10.0.0.1", "prioritize"), 0);
  EXPECT_EQ(paced_calls(p, 10, t0, "10.0.0.1", "filter", "uid-b"), 0);
}

TEST(CallPacing, ErrorsPastTheCallersBudgetAreHeld) {
  CallPacing p(paced());
  int held = 0;
  for (int i = 0; i < 100; ++i) {
    const CallPacing::Verdict v = p.judge("10.0.0.1", "filter", "made-up-" + std::to_string(i), true, t0);
    if (v.reason == Reason::kErrors) ++held;
    EXPECT_NE(v.reason, Reason::kRepeated);
  }
  EXPECT_EQ(held, 60);                                                    // bursts of twice the rate
  EXPECT_EQ(paced_calls(p, 1, t0, "10.0.0.1", "filter", "uid-good"), 0);  // right answers are not
  EXPECT_EQ(paced_calls(p, 1, t0, "10.0.0.2", "filter", "made-up-x", true), 0);
  EXPECT_EQ(paced_calls(p, 30, t0 + 1s, "10.0.0.1", "filter", "", true), 10);             // twenty a second
  EXPECT_EQ(p.judge("10.0.0.1", "filter", "", true, t0 + 1s).answer_at, t0 + 1s + 50ms);  // errors: one hold
}

TEST(CallPacing, PastMaxPodsEndedWindowsAreForgottenAndNewOnesGoUncounted) {
  CallPacing p(paced(4));
  for (int i = 0; i < 4; ++i) paced_calls(p, 1, t0, "10.0.0.1", "filter", "uid-" + std::to_string(i));
  EXPECT_EQ(p.windows(), 4u);
  EXPECT_EQ(paced_calls(p, 50, t0 + 10ms, "10.0.0.1", "filter", "uid-new"), 0);  // full: not counted
  EXPECT_EQ(p.windows(), 4u);
  EXPECT_EQ(paced_calls(p, 50, t0 + 10ms, "10.0.0.1", "filter", "uid-0"), 41);  // kept ones still count
  // A second after the last walk, the windows that ended are forgotten.
  EXPECT_EQ(paced_calls(p, 11, t0 + 1010ms, "10.0.0.1", "filter", "uid-new"), 1);
  EXPECT_EQ(p.windows(), 1u);
}

}  // namespace
}  // namespace extender::server
