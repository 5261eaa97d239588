#include "extender/state/filter_verdicts.h"

#include <gtest/gtest.h>

#include <chrono>

namespace extender::state {
namespace {

using namespace std::chrono_literals;

TEST(FilterVerdicts, BoundedInNamesAndAge) {
  using V = FilterVerdicts::Verdict;
  FilterVerdicts v(5, 10s);
  const auto t0 = Clock::time_point{} + 1h;
  v.record("p1", {"a", "b", "c"}, t0);
  v.record("p2", {"d", "e"}, t0 + 1s);
  EXPECT_EQ(v.names(), 5u);
  EXPECT_EQ(v.verdict("p1", "b", t0 + 2s), V::kPassed);
  EXPECT_EQ(v.verdict("p1", "d", t0 + 2s), V::kNotPassed);
  EXPECT_EQ(v.verdict("p9", "a", t0 + 2s), V::kNotFiltered);
  v.record("p3", {"f"}, t0 + 3s);  // past 5 names: the least recently filtered pod goes
  EXPECT_EQ(v.verdict("p1", "a", t0 + 3s), V::kNotFiltered);
  EXPECT_EQ(v.verdict("p2", "d", t0 + 3s), V::kPassed);
  EXPECT_EQ(v.names(), 3u);
  EXPECT_EQ(v.verdict("p2", "d", t0 + 12s), V::kNotFiltered) << "older than max_age";
  v.record("p2", {}, t0 + 13s);  // filtered again, nothing passed
  EXPECT_EQ(v.verdict("p2", "d", t0 + 13s), V::kNotPassed);
  v.record("huge", {"1", "2", "3", "4", "5", "6"}, t0 + 14s);  // more than the bound: not kept
  EXPECT_EQ(v.verdict("huge", "1", t0 + 14s), V::kNotFiltered);
  EXPECT_LE(v.names(), 5u);
}

}  // namespace
}  // namespace extender::state
