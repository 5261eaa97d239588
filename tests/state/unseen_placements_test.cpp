#include "extender/state/unseen_placements.h"

#include <gtest/gtest.h>

#include <set>

namespace extender::state {
namespace {

using namespace std::chrono_literals;

const std::string kScheduler = "10.0.0.7";  // kube-scheduler's address
const std::string kStranger = "10.0.9.9";

TEST(UnseenPlacements, WaitsForOtherPodsUntilTheirClaimsArePlacedOrTheirWaitEnds) {
  const TimePoint t0{};
  struct Case {
    const char* name;
    std::set<std::string> placed;  // claims that show a placement
    Duration since;                // how long after the filter `wait_ends` is asked
    const char* asking;            // the pod asking
    Duration want_wait;            // from the time asked; 0: no wait
  };
  const Case cases[] = {
      {"nothing placed: wait out the rest of the earlier pod's wait", {}, 100ms, "u2", 400ms},
      {"one claim of two placed: still wait", {"ml/a-0"}, 100ms, "u2", 400ms},
      {"both claims placed: no wait", {"ml/a-0", "ml/a-1"}, 100ms, "u2", 0ms},
      {"the wait has passed: no wait", {}, 500ms, "u2", 0ms},
      {"a pod never waits for itself", {}, 100ms, "u1", 0ms},
  };
  for (const Case& c : cases) {
    UnseenPlacements unseen(500ms);
    unseen.record(kScheduler, "u1", {"ml/a-0", "ml/a-1"}, t0);
    const auto asked = t0 + c.since;
    const auto until = unseen.wait_ends(
        kScheduler, c.asking, [&](const std::string& claim) { return c.placed.count(claim) > 0; }, asked);
    EXPECT_EQ(until - asked, c.want_wait) << c.name;
  }
}

TEST(UnseenPlacements, ForgetsWhatIsPlacedOrExpiredAndKeepsTheRest) {
  const TimePoint t0{};
  UnseenPlacements unseen(500ms);
  unseen.record(kScheduler, "u1", {"ml/one"}, t0);
  unseen.record(kScheduler, "u2", {"ml/two"}, t0 + 100ms);
  unseen.record(kScheduler, "u3", {"ml/three"}, t0 + 200ms);
  const auto until = unseen.wait_ends(
      kScheduler, "u9", [](const std::string& c) { return c == "ml/two"; }, t0 + 550ms);
  EXPECT_EQ(until, t0 + 700ms) << "u1 expired, u2 placed, u3 waited for until its own end";
  EXPECT_EQ(unseen.size(), 1u);
}

TEST(UnseenPlacements, ARecordReplacesThePodsEarlierOneAndNoClaimsForgetsIt) {
  const TimePoint t0{};
  UnseenPlacements unseen(500ms);
  unseen.record(kScheduler, "u1", {"ml/one"}, t0);
  unseen.record(kScheduler, "u1", {"ml/one"}, t0 + 300ms);
  EXPECT_EQ(unseen.size(), 1u);
  EXPECT_EQ(unseen.wait_ends(
                kScheduler, "u2", [](const std::string&) { return false; }, t0 + 400ms),
            t0 + 500ms)
      << "filtered again, its wait still ends 500ms after its first filter";
  unseen.record(kScheduler, "u1", {}, t0 + 400ms);
  EXPECT_EQ(unseen.size(), 0u);
}

TEST(UnseenPlacements, APodReSentToStallTheOthersMakesThemWaitOncePerWindow) {
  const TimePoint t0{};
  UnseenPlacements unseen(100ms);
  const auto nothing_placed = [](const std::string&) { return false; };
  int stalled = 0;
  for (auto t = t0; t < t0 + 1900ms; t += 10ms) {  // re-sent every 10ms, a window less a wait
    unseen.record(kScheduler, "stall", {"ml/never-placed"}, t);
    if (unseen.wait_ends(kScheduler, "other", nothing_placed, t + 5ms) > t + 5ms) ++stalled;
  }
  EXPECT_EQ(stalled, 10) << "the others waited only within its first 100ms";
  unseen.record(kScheduler, "stall", {"ml/never-placed"}, t0 + 2000ms);
  EXPECT_EQ(unseen.wait_ends(kScheduler, "other", nothing_placed, t0 + 2001ms), t0 + 2100ms)
      << "a new window, a new wait";
}

TEST(UnseenPlacements, AFilterWaitsOnlyForThePodsItsOwnCallerFiltered) {
  const TimePoint t0{};
  const auto nothing_placed = [](const std::string&) { return false; };
  UnseenPlacements unseen(100ms);
  unseen.record(kStranger, "replayed", {"ml/replayed-data"}, t0);
  EXPECT_EQ(unseen.wait_ends(kScheduler, "next", nothing_placed, t0 + 5ms), t0 + 5ms)
      << "kube-scheduler's next pod does not wait for a pod a stranger filtered";
  EXPECT_EQ(unseen.wait_ends(kStranger, "own", nothing_placed, t0 + 5ms), t0 + 100ms)
      << "the stranger's own filters do";

  unseen.record(kScheduler, "placing", {"ml/placing-data"}, t0 + 10ms);
  unseen.record(kStranger, "placing", {}, t0 + 20ms);
  EXPECT_EQ(unseen.wait_ends(kScheduler, "next", nothing_placed, t0 + 30ms), t0 + 110ms)
      << "a stranger's filter of the same pod neither replaces nor ends kube-scheduler's record";
}

TEST(UnseenPlacements, AStrangersRecordsDoNotPushOutKubeSchedulers) {
  const TimePoint t0{};
  const auto nothing_placed = [](const std::string&) { return false; };
  UnseenPlacements unseen(500ms, 2);
  unseen.record(kScheduler, "placing", {"ml/placing-data"}, t0);
  for (int i = 0; i < 20; ++i) unseen.record(kStranger, "replayed-" + std::to_string(i), {"ml/x"}, t0 + 1ms);
  EXPECT_EQ(unseen.size(), 3u) << "the stranger keeps its capacity, 2";
  EXPECT_EQ(unseen.wait_ends(kScheduler, "next", nothing_placed, t0 + 10ms), t0 + 500ms);
  for (int a = 0; a < 20; ++a) unseen.record("10.1.0." + std::to_string(a), "p", {"ml/x"}, t0 + 2ms);
  EXPECT_EQ(unseen.size(), 8u) << "4 x capacity in all, however many addresses";
}

TEST(UnseenPlacements, KeepsAtMostItsCapacityOldestFirstOut) {
  const TimePoint t0{};
  UnseenPlacements unseen(500ms, 2);
  unseen.record(kScheduler, "u1", {"ml/one"}, t0 + 300ms);
  unseen.record(kScheduler, "u2", {"ml/two"}, t0);
  unseen.record(kScheduler, "u3", {"ml/three"}, t0);
  EXPECT_EQ(unseen.size(), 2u);
  EXPECT_EQ(unseen.wait_ends(
                kScheduler, "u9", [](const std::string&) { return false; }, t0 + 100ms),
            t0 + 500ms)
      << "u1, recorded first, was forgotten first";
}

}  // namespace
}  // namespace extender::state
