#include "extender/http/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <string>
#include <vector>

#include "support/fake_clock.h"

namespace extender::http {
namespace {

using namespace std::chrono_literals;

// Records the order tasks ran in.
struct Log {
  std::mutex mu;
  std::vector<std::string> order;
  void add(const std::string& s) {
    std::lock_guard lock(mu);
    order.push_back(s);
  }
};

TEST(WorkerPool, RunsEveryPostedTaskBeforeItIsDestroyed) {
  std::atomic<int> ran{0};
  {
    WorkerPool pool(2);
    for (int i = 0; i < 100; ++i) pool.post(std::to_string(i % 3), [&] { ++ran; });
  }
  EXPECT_EQ(ran, 100);
}

TEST(WorkerPool, TasksOfOneCallerStartInOrderOfArrival) {
  Log log;
  {
    WorkerPool pool(1);
    for (int i = 0; i < 20; ++i) pool.post("peer", [&, i] { log.add(std::to_string(i)); });
  }
  ASSERT_EQ(log.order.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(log.order[i], std::to_string(i));
}

TEST(WorkerPool, AHeavyCallersBacklogDoesNotDelayALightCaller) {
  Log log;
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  {
    WorkerPool pool(1);
    pool.post("heavy", [&] {
      gate.wait();
      std::this_thread::sleep_for(20ms);
      log.add("heavy-running");
    });
    std::this_thread::sleep_for(20ms);
    for (int i = 0; i < 5; ++i) {
      pool.post("heavy", [&, i] {
        std::this_thread::sleep_for(5ms);
        log.add("heavy-" + std::to_string(i));
      });
    }
    pool.post("light", [&] { log.add("light"); });
    release.set_value();
  }
  ASSERT_EQ(log.order.size(), 7u);
  EXPECT_EQ(log.order[0], "heavy-running");
  EXPECT_EQ(log.order[1], "light") << "the light caller waited behind the heavy caller's backlog";
}

// "slow" tasks take a second of the pool's clock and no real time; "quick" ones take real time
// but none of the pool's clock: the pool charges the clock it was given, so after one task each
// the quick caller has received less service and runs again first.
TEST(WorkerPool, ATasksCostIsItsRunTimeOnThePoolsClock) {
  testing::FakeClock clock;
  Log log;
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  {
    WorkerPool pool(1, 1, clock);
    pool.post("gate", [&] { gate.wait(); });
    for (int i = 0; i < 2; ++i) {
      pool.post("slow", [&, i] {
        clock.advance(1s);
        log.add("slow-" + std::to_string(i));
      });
    }
    for (int i = 0; i < 2; ++i) {
      pool.post("quick", [&, i] {
        std::this_thread::sleep_for(5ms);
        log.add("quick-" + std::to_string(i));
      });
    }
    release.set_value();
  }
  EXPECT_EQ(log.order, (std::vector<std::string>{"slow-0", "quick-0", "quick-1", "slow-1"}));
}

// Spins for `d` of real time, counting how many tasks spin at once.
struct Concurrency {
  std::atomic<int> now{0};
  std::atomic<int> most{0};
  void spin(std::chrono::milliseconds d) {
    const int at = ++now;
    for (int seen = most.load(); at > seen && !most.compare_exchange_weak(seen, at);) {
    }
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) {
    }
    --now;
  }
};

TEST(WorkerPool, NoMoreTasksComputeAtOnceThanTheComputeLimit) {
  for (std::size_t limit : {1u, 2u}) {
    Concurrency c;
    {
      WorkerPool pool(4, 4, steady_clock(), limit);
      for (int i = 0; i < 8; ++i) pool.post("peer-" + std::to_string(i % 4), [&] { c.spin(5ms); });
    }
    EXPECT_EQ(c.most.load(), static_cast<int>(limit)) << "compute limit " << limit;
  }
}

// With one task allowed to compute, a task waiting in a BlockingRegion for another task's signal
// lets that task start; were it still counted, the other task could not start before it ended.
TEST(WorkerPool, ATaskInABlockingRegionLetsAnotherTaskCompute) {
  std::promise<void> signalled;
  std::future<void> signal = signalled.get_future();
  std::atomic<bool> heard{false};
  {
    WorkerPool pool(2, 2, steady_clock(), 1);
    pool.post("waiter", [&] {
      const BlockingRegion waiting;
      heard = signal.wait_for(5s) == std::future_status::ready;
    });
    std::this_thread::sleep_for(20ms);
    pool.post("signaller", [&] { signalled.set_value(); });
  }
  EXPECT_TRUE(heard) << "the second task did not start while the first waited in a BlockingRegion";
}

TEST(WorkerPool, ACallerWithATaskRunningYieldsAFreeThreadToAnother) {
  Log log;
  std::promise<void> release_a, release_c;
  std::shared_future<void> gate_a = release_a.get_future().share();
  std::shared_future<void> gate_c = release_c.get_future().share();
  {
    WorkerPool pool(2);
    pool.post("a", [&] { gate_a.wait(); });
    pool.post("c", [&] { gate_c.wait(); });
    std::this_thread::sleep_for(20ms);
    pool.post("a", [&] { log.add("a-2"); });
    pool.post("b", [&] { log.add("b"); });
    release_c.set_value();
    std::this_thread::sleep_for(50ms);
    release_a.set_value();
  }
  ASSERT_EQ(log.order.size(), 2u);
  EXPECT_EQ(log.order[0], "b") << "a second task of a caller already running went first";
}

TEST(WorkerPool, HeavyTasksLeaveOneThreadToLightOnes) {
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<int> heavy_started{0};
  std::promise<void> light_ran;
  auto light_done = light_ran.get_future();
  {
    WorkerPool pool(3, /*heavy_limit=*/2);
    for (int i = 0; i < 5; ++i) {
      pool.post(
          "stranger-" + std::to_string(i),
          [&] {
            ++heavy_started;
            gate.wait();
          },
          /*heavy=*/true);
    }
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(heavy_started, 2) << "heavy tasks took every thread";
    pool.post("scheduler", [&] { light_ran.set_value(); });
    EXPECT_EQ(light_done.wait_for(2s), std::future_status::ready)
        << "a light task found no thread while heavy ones ran";
    release.set_value();
  }
  EXPECT_EQ(heavy_started, 5) << "queued heavy tasks were dropped";
}

TEST(WorkerPool, HeavyTasksByDefaultTakeAllThreadsButOneAndNoMoreThanAllCoresButOne) {
  struct Row {
    std::size_t threads, cores, limit;
  };
  const Row rows[] = {
      {8, 64, 7}, {8, 2, 1}, {8, 4, 3}, {1, 8, 1}, {2, 2, 1}, {3, 0, 1}, {16, 1, 1},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(WorkerPool::default_heavy_limit(r.threads, r.cores), r.limit)
        << r.threads << " threads, " << r.cores << " cores";
  }
}

TEST(WorkerPool, OneThreadRunsHeavyTasksToo) {
  std::atomic<int> ran{0};
  {
    WorkerPool pool(1);
    for (int i = 0; i < 3; ++i)
      pool.post(
          "peer", [&] { ++ran; }, /*heavy=*/true);
  }
  EXPECT_EQ(ran, 3);
}

}  // namespace
}  // namespace extender::http

namespace extender::http {
namespace {

TEST(WorkerPool, WorkIsWeighedByItsSizeSoManyMediumTasksCannotTakeEveryThread) {
  struct Row {
    const char* name;
    std::size_t heavy_limit;
    std::size_t work;  // of each of 7 strangers' tasks
    int at_once;       // how many of them run together
  };
  const std::vector<Row> rows = {
      {"900 KB each, one MiB of room: one at a time", 1, 900 << 10, 1},
      {"900 KB each, three MiB of room: three", 3, 900 << 10, 3},
      {"1.5 MiB each, four threads and four MiB of room: two", 4, 3 << 19, 2},
      {"300 KB each, four threads and four MiB of room: four", 4, 300 << 10, 4},
      {"a large one runs alone", 3, 8 << 20, 1},
      {"small ones are not weighed", 1, 16 << 10, 7},
  };
  for (const Row& r : rows) {
    std::promise<void> release;
    std::shared_future<void> gate = release.get_future().share();
    std::atomic<int> started{0};
    std::promise<void> light_ran;
    auto light_done = light_ran.get_future();
    {
      WorkerPool pool(8, r.heavy_limit);
      for (int i = 0; i < 7; ++i) {
        pool.post_work(
            "stranger-" + std::to_string(i),
            [&] {
              ++started;
              gate.wait();
            },
            r.work);
      }
      std::this_thread::sleep_for(50ms);
      EXPECT_EQ(started, r.at_once) << r.name;
      pool.post("scheduler", [&] { light_ran.set_value(); });
      EXPECT_EQ(light_done.wait_for(2s), std::future_status::ready) << r.name << ": a light task found no thread";
      release.set_value();
    }
    EXPECT_EQ(started, 7) << r.name;
  }
}

}  // namespace
}  // namespace extender::http
