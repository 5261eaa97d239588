#include "extender/server/log_budget.h"

#include <gtest/gtest.h>

#include <string>

namespace extender::server {
namespace {

using namespace std::chrono_literals;

const TimePoint t0 = TimePoint{} + 1000s;

// Admits `n` calls of `caller` at `at`; returns how many were written.
int written(LogBudget& b, const std::string& caller, int n, TimePoint at) {
  int out = 0;
  for (int i = 0; i < n; ++i) out += b.admit(caller, at).write;
  return out;
}

TEST(LogBudget, NoBudgetWritesEveryLine) {
  LogBudget b({0});
  EXPECT_EQ(written(b, "10.0.0.1", 10'000, t0), 10'000);
  EXPECT_EQ(b.callers(), 0u);
}

TEST(LogBudget, ACallerWritesItsBurstThenItsRate) {
  LogBudget b({10});
  EXPECT_EQ(written(b, "10.0.0.1", 50, t0), 20);  // bursts of twice the rate
  EXPECT_EQ(written(b, "10.0.0.1", 50, t0 + 1s), 10);
  EXPECT_EQ(written(b, "10.0.0.1", 50, t0 + 1500ms), 5);
}

TEST(LogBudget, CallersHaveBudgetsOfTheirOwn) {
  LogBudget b({10});
  EXPECT_EQ(written(b, "10.0.0.1", 1000, t0), 20);
  EXPECT_EQ(written(b, "10.0.0.2", 5, t0), 5);
}

TEST(LogBudget, TheNextWrittenLineCarriesTheCallsNotWritten) {
  LogBudget b({10});
  written(b, "10.0.0.1", 20, t0);
  EXPECT_EQ(written(b, "10.0.0.1", 7, t0 + 10ms), 0);
  const LogBudget::Verdict v = b.admit("10.0.0.1", t0 + 500ms);
  EXPECT_TRUE(v.write);
  EXPECT_FALSE(v.shared);
  EXPECT_EQ(v.unlogged, 7u);
  EXPECT_EQ(v.span, 490ms);
  EXPECT_EQ(b.admit("10.0.0.1", t0 + 2s).unlogged, 0u);  // counted once
}

TEST(LogBudget, AFloodIsWrittenAtTheRateWithEveryCallCounted) {
  LogBudget b({5});
  int lines = 0;
  std::uint64_t counted = 0;
  // A call every millisecond for 10 s.
  for (int ms = 0; ms < 10'000; ++ms) {
    const LogBudget::Verdict v = b.admit("10.0.0.1", t0 + std::chrono::milliseconds(ms));
    EXPECT_LE(v.span, 1s);
    if (v.write) ++lines, counted += 1 + v.unlogged;
  }
  EXPECT_EQ(lines, 10 + 5 * 10 - 1);  // the burst, then five a second
  EXPECT_GT(counted, 9'700u);         // all but those after the last line
}

TEST(LogBudget, PastMaxCallersIdleCallersAreForgottenAndBusyOnesKept) {
  LogBudget b({10, 4});
  for (int i = 0; i < 4; ++i) written(b, "10.0.0." + std::to_string(i), i < 2 ? 100 : 1, t0);
  EXPECT_EQ(b.callers(), 4u);
  // By t0 + 1 s the two light callers' buckets are full again, the two heavy ones owe counts.
  const LogBudget::Verdict v = b.admit("10.0.1.1", t0 + 1s);
  EXPECT_TRUE(v.write);
  EXPECT_FALSE(v.shared);
  EXPECT_EQ(b.callers(), 3u);
  const LogBudget::Verdict heavy = b.admit("10.0.0.0", t0 + 1s);
  EXPECT_TRUE(heavy.write);
  EXPECT_EQ(heavy.unlogged, 80u);  // the heavy caller was kept with its count
}

TEST(LogBudget, CallersAreWalkedForIdleOnesAtMostOnceASecond) {
  LogBudget b({10, 2});
  written(b, "10.0.0.1", 1, t0);    // light: full again 100 ms later
  written(b, "10.0.0.2", 100, t0);  // heavy: owes counts
  EXPECT_TRUE(b.admit("10.0.9.1", t0).shared) << "the walk at t0 finds the light caller busy";
  EXPECT_TRUE(b.admit("10.0.9.2", t0 + 500ms).shared) << "no second walk within the second";
  EXPECT_FALSE(b.admit("10.0.9.3", t0 + 1s).shared) << "a walk a second later forgets the light caller";
}

TEST(LogBudget, WhenEveryRememberedCallerIsBusyNewcomersShareOneBucket) {
  LogBudget b({10, 2});
  written(b, "10.0.0.1", 100, t0);
  written(b, "10.0.0.2", 100, t0);
  int shared_written = 0;
  for (int i = 0; i < 100; ++i) {
    const LogBudget::Verdict v = b.admit("10.0.9." + std::to_string(i), t0);
    EXPECT_TRUE(v.shared);
    shared_written += v.write;
  }
  EXPECT_EQ(shared_written, 20);
  EXPECT_EQ(b.callers(), 3u);
}

}  // namespace
}  // namespace extender::server
