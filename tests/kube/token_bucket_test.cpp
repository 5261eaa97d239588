#include "extender/kube/token_bucket.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "support/fake_clock.h"

namespace extender::kube {
namespace {

using namespace std::chrono_literals;

const TimePoint T0 = TimePoint(1h);

// One write asking for a token at `at` with `wait` to its deadline, and when it may go (offsets
// from T0), nullopt: refused.
struct Ask {
  Duration at;
  Duration wait;
  std::optional<Duration> goes;
};

TEST(TokenBucket, Table) {
  struct Case {
    const char* what;
    std::int64_t qps, burst;
    std::vector<Ask> asks;
  };
  const Case cases[] = {
      {"a full bucket lets a burst through at once, then one write every 1/qps",
       10,
       3,
       {{0ms, 1s, 0ms}, {0ms, 1s, 0ms}, {0ms, 1s, 0ms}, {0ms, 1s, 100ms}, {0ms, 1s, 200ms}}},
      {"waiting writes queue in the order they asked",
       2,
       1,
       {{0ms, 5s, 0ms}, {0ms, 5s, 500ms}, {100ms, 5s, 1000ms}, {200ms, 5s, 1500ms}}},
      {"a write whose turn is past its deadline is refused and takes nothing",
       10,
       1,
       {{0ms, 1s, 0ms},
        {0ms, 50ms, std::nullopt},
        {0ms, 100ms, 100ms},
        {0ms, 150ms, std::nullopt},
        {0ms, 200ms, 200ms}}},
      {"a deadline exactly at the turn is met", 10, 1, {{0ms, 0ms, 0ms}, {0ms, 100ms, 100ms}}},
      {"the bucket refills at qps",
       10,
       3,
       {{0ms, 0ms, 0ms},
        {0ms, 0ms, 0ms},
        {0ms, 0ms, 0ms},
        {0ms, 0ms, std::nullopt},
        {100ms, 0ms, 100ms},
        {150ms, 0ms, std::nullopt},
        {300ms, 0ms, 300ms}}},
      {"an idle bucket holds no more than its burst", 10, 2, {{1h, 0ms, 1h}, {1h, 0ms, 1h}, {1h, 0ms, std::nullopt}}},
      {"qps 0 is no limit", 0, 1, {{0ms, 0ms, 0ms}, {0ms, 0ms, 0ms}, {0ms, 0ms, 0ms}, {0ms, 0ms, 0ms}}},
      {"a burst below 1 is 1", 1, 0, {{0ms, 0ms, 0ms}, {0ms, 0ms, std::nullopt}, {1s, 0ms, 1s}}},
      {"a clock read out of order takes nothing back", 10, 1, {{500ms, 1s, 500ms}, {400ms, 1s, 600ms}}},
  };
  for (const auto& c : cases) {
    TokenBucket bucket(c.qps, c.burst, T0);
    for (std::size_t i = 0; i < c.asks.size(); ++i) {
      const Ask& a = c.asks[i];
      const auto got = bucket.reserve(T0 + a.at, T0 + a.at + a.wait);
      ASSERT_EQ(got.has_value(), a.goes.has_value()) << c.what << ", write " << i;
      if (got) {
        EXPECT_EQ(std::chrono::round<std::chrono::microseconds>(*got - T0), *a.goes) << c.what << ", write " << i;
      }
    }
  }
}

TEST(RateLimiter, RefusesAtOnceAWriteThatCannotGoByItsDeadline) {
  RateLimiter limiter(1, 1);
  ASSERT_TRUE(limiter.wait(SteadyClock::now() + 100ms));
  auto refused = limiter.wait(SteadyClock::now() + 100ms);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.message(),
            "the client-side limit of API writes (kubernetes.api_qps 1, api_burst 1) allows none before the deadline");
}

TEST(RateLimiter, AWriteWaitsForItsTokenOnTheInjectedClock) {
  extender::testing::FakeClock clock;  // a sleep on it moves it to the sleeper's wake-up
  const auto t0 = clock.now();
  RateLimiter limiter(2, 1, clock);
  ASSERT_TRUE(limiter.wait(t0 + 1s));
  EXPECT_EQ(clock.now(), t0) << "the burst's token is taken at once";
  ASSERT_TRUE(limiter.wait(t0 + 1s));
  EXPECT_EQ(std::chrono::round<std::chrono::milliseconds>(clock.now() - t0), 500ms)
      << "the second write waits for the refill at 2 per second";
}

}  // namespace
}  // namespace extender::kube
