#include "extender/common/blocking_region.h"

#include <gtest/gtest.h>

#include <thread>

#include "extender/common/clock.h"

namespace extender {
namespace {

using namespace std::chrono_literals;

struct Counting final : BlockingObserver {
  int begins = 0;
  int ends = 0;
  void blocking_begins() override { ++begins; }
  void blocking_ends() override { ++ends; }
};

struct Installed {
  explicit Installed(BlockingObserver* o) : previous(set_blocking_observer(o)) {}
  ~Installed() { set_blocking_observer(previous); }
  BlockingObserver* previous;
};

TEST(BlockingRegion, OnlyTheOutermostRegionIsReported) {
  Counting seen;
  Installed installed(&seen);
  {
    BlockingRegion outer;
    EXPECT_EQ(seen.begins, 1);
    {
      BlockingRegion inner;
      EXPECT_EQ(seen.begins, 1);
    }
    EXPECT_EQ(seen.ends, 0) << "the inner region's end was reported while the outer one is open";
  }
  EXPECT_EQ(seen.ends, 1);
  { BlockingRegion again; }
  EXPECT_EQ(seen.begins, 2);
  EXPECT_EQ(seen.ends, 2);
}

TEST(BlockingRegion, AThreadWithoutAnObserverReportsNothingAndObserversArePerThread) {
  Counting seen;
  Installed installed(&seen);
  std::thread other([] { BlockingRegion unobserved; });
  other.join();
  EXPECT_EQ(seen.begins, 0);
  EXPECT_EQ(set_blocking_observer(&seen), &seen);
}

TEST(BlockingRegion, TheProcessClocksSleepsAndWaitsAreRegions) {
  Counting seen;
  Installed installed(&seen);
  steady_clock().sleep_for(1ms);
  EXPECT_EQ(seen.begins, 1);
  EXPECT_EQ(seen.ends, 1);
  std::mutex mu;
  std::condition_variable cv;
  std::unique_lock lock(mu);
  steady_clock().wait(lock, cv, steady_clock().now() + 1ms);
  EXPECT_EQ(seen.begins, 2);
  EXPECT_EQ(seen.ends, 2);
}

}  // namespace
}  // namespace extender
