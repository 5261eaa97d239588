#include "extender/kube/deadline_watch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>

#include "support/fake_api_server.h"
#include "support/fake_clock.h"

namespace extender::kube {
namespace {

using namespace std::chrono_literals;
using testing::eventually;

TEST(DeadlineWatch, ActsOnAPassedDeadlineAndAgainWhileTheRegistrationLasts) {
  DeadlineWatch watch(1ms);
  std::atomic<int> runs{0};
  auto r = watch.watch(SteadyClock::now() - 1ms, [&] { ++runs; });
  EXPECT_TRUE(eventually([&] { return runs >= 3; }));
  EXPECT_TRUE(r.expired());
}

TEST(DeadlineWatch, ActsWhenItsClockPassesTheDeadline) {
  extender::testing::FakeClock clock;
  DeadlineWatch watch(1h, clock);
  std::atomic<int> runs{0};
  auto r = watch.watch(clock.now() + 10s, [&] { ++runs; });
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(runs, 0) << "acted before its clock reached the deadline";
  clock.advance(10s);
  EXPECT_TRUE(eventually([&] { return runs == 1; }));
  EXPECT_TRUE(r.expired());
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(runs, 1) << "acted again before `repeat` passed on its clock";
}

TEST(DeadlineWatch, NeverActsForARegistrationEndedBeforeItsDeadline) {
  DeadlineWatch watch;
  std::atomic<int> runs{0};
  {
    auto far = watch.watch(SteadyClock::now() + 1h, [&] { ++runs; });
    EXPECT_FALSE(far.expired());
  }
  // A later registration that expires shows the thread is running; the ended one stayed quiet.
  std::atomic<bool> later{false};
  auto r = watch.watch(SteadyClock::now(), [&] { later = true; });
  EXPECT_TRUE(eventually([&] { return later.load(); }));
  EXPECT_EQ(runs, 0);
}

TEST(DeadlineWatch, EndingARegistrationWaitsForItsRunningAction) {
  DeadlineWatch watch;
  std::atomic<bool> started{false}, finished{false};
  std::optional<DeadlineWatch::Registration> r;
  r.emplace(watch.watch(SteadyClock::now(), [&] {
    started = true;
    std::this_thread::sleep_for(100ms);
    finished = true;
  }));
  ASSERT_TRUE(eventually([&] { return started.load(); }));
  r.reset();
  EXPECT_TRUE(finished) << "the action's captures must outlive it";
}

TEST(DeadlineWatch, EachOfManyRegistrationsIsActedOnForItself) {
  DeadlineWatch watch;
  std::atomic<int> expired_runs{0}, live_runs{0};
  std::vector<DeadlineWatch::Registration> regs;
  for (int i = 0; i < 10; ++i) {
    regs.push_back(watch.watch(i % 2 ? SteadyClock::now() + 1h : SteadyClock::now(),
                               [&, i] { ++(i % 2 ? live_runs : expired_runs); }));
  }
  EXPECT_TRUE(eventually([&] { return expired_runs >= 5; }));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(regs[i].expired(), i % 2 == 0) << i;
  EXPECT_EQ(live_runs, 0);
}

}  // namespace
}  // namespace extender::kube
