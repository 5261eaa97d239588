// ChangeSignal: a waiter wakes on the first change after the version it read (one made before
// it waits included), or when its clock reaches the end of the wait; never on the real clock.
#include "extender/common/change_signal.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "support/fake_clock.h"

namespace extender {
namespace {

using namespace std::chrono_literals;

TEST(ChangeSignal, AWaiterWakesOnAChangeAfterTheVersionItRead) {
  testing::FakeClock clock;  // never moves here: only the change can end the wait
  ChangeSignal signal;
  const std::uint64_t seen = signal.version();
  std::thread writer([&] {
    std::this_thread::sleep_for(20ms);
    signal.notify();
  });
  EXPECT_TRUE(signal.await(seen, clock.now() + 1h, clock));
  writer.join();
  EXPECT_NE(signal.version(), seen);
}

TEST(ChangeSignal, AChangeBeforeTheWaitIsNotMissed) {
  testing::FakeClock clock;
  ChangeSignal signal;
  const std::uint64_t seen = signal.version();
  signal.notify();
  EXPECT_TRUE(signal.await(seen, clock.now() + 1h, clock));
}

TEST(ChangeSignal, WithoutAChangeTheWaitEndsWhenItsClockDoes) {
  testing::FakeClock clock;
  ChangeSignal signal;
  const auto until = clock.now() + 10s;
  std::atomic<bool> advanced{false};
  std::thread mover([&] {
    std::this_thread::sleep_for(30ms);
    advanced = true;
    clock.advance(10s);
  });
  const auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(signal.await(signal.version(), until, clock));
  EXPECT_TRUE(advanced.load()) << "returned before its clock reached the end of the wait";
  mover.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_FALSE(signal.await(signal.version(), until, clock)) << "a wait already over returns at once";
}

TEST(ChangeSignal, TheProcessClockBoundsTheWaitInRealTime) {
  ChangeSignal signal;
  const auto started = steady_clock().now();
  EXPECT_FALSE(signal.await(signal.version(), started + 20ms, steady_clock()));
  EXPECT_GE(steady_clock().now() - started, 20ms);
}

}  // namespace
}  // namespace extender
