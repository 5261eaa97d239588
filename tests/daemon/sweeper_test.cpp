#include "extender/daemon/sweeper.h"

#include <gtest/gtest.h>

#include <thread>

#include "support/dra_slices.h"
#include "support/engine_harness.h"
#include "support/fake_clock.h"

namespace extender::daemon {
namespace {

using namespace std::chrono_literals;

model::NodeSupply gpu_node(const std::string& name, std::int64_t gpus) {
  model::NodeSupply n;
  n.name = name;
  n.gpus["nvidia.com/gpu"] = gpus;
  return n;
}

state::Claim gpu_claim(const std::string& node, std::int64_t gpus) {
  state::Claim c;
  c.owner = "ml/p";
  c.node = node;
  c.allocation.gpus["nvidia.com/gpu"] = gpus;
  return c;
}

TEST(Sweeper, DropsAReservationOnceItsClockPassesItsExpiry) {
  testing::FakeClock clock;
  state::ClusterState state;
  state.upsert_nodes({gpu_node("n", 4)});
  state.reserve("u1", gpu_claim("n", 1), 30s, clock.now());
  state.reserve("u2", gpu_claim("n", 1), 90s, clock.now());
  server::Metrics metrics({"nvidia.com/gpu"});
  Sweeper sweeper(state, metrics, clock, 0ms);

  EXPECT_EQ(sweeper.sweep().expired, 0u);
  clock.advance(29s);
  EXPECT_EQ(sweeper.sweep().expired, 0u) << "not before its expiry";
  clock.advance(2s);
  EXPECT_EQ(sweeper.sweep().expired, 1u);
  EXPECT_FALSE(state.claim_of("u1"));
  EXPECT_TRUE(state.claim_of("u2"));
  clock.advance(60s);
  EXPECT_EQ(sweeper.sweep().expired, 1u);
  EXPECT_FALSE(state.claim_of("u2"));
  EXPECT_EQ(sweeper.sweep().expired, 0u);
}

TEST(Sweeper, ReportsAnOvercommittedNodeOncePerEpisode) {
  testing::FakeClock clock;
  state::ClusterState state;
  state.upsert_nodes({gpu_node("n", 2)});
  server::Metrics metrics({"nvidia.com/gpu"});
  Sweeper sweeper(state, metrics, clock, 0ms);
  state.place("p1", gpu_claim("n", 2));
  EXPECT_TRUE(sweeper.sweep().overcommits.empty()) << "exactly full";
  state.place("p2", gpu_claim("n", 1));
  auto pass = sweeper.sweep();
  ASSERT_EQ(pass.overcommits.size(), 1u);
  EXPECT_EQ(pass.overcommits[0].node, "n");
  EXPECT_TRUE(sweeper.sweep().overcommits.empty()) << "the same episode is reported once";
  state.drop("p2");
  EXPECT_TRUE(sweeper.sweep().overcommits.empty());
  state.place("p3", gpu_claim("n", 1));
  EXPECT_EQ(sweeper.sweep().overcommits.size(), 1u) << "a new episode";
}

std::shared_ptr<const model::DraInventory> dra_gpus_on(const std::string& node, int gpus) {
  return std::make_shared<const model::DraInventory>(
      model::build_dra_inventory({testing::nvidia_gpu_slice(node, gpus)}, {}));
}

TEST(Sweeper, ReportsANodeWithDevicePluginAndDraGpusOncePerEpisode) {
  testing::FakeClock clock;
  state::ClusterState state;
  state.upsert_nodes({gpu_node("n", 2), gpu_node("other", 4)});
  server::Metrics metrics({"nvidia.com/gpu"});
  testing::FakeDra dra;
  Sweeper sweeper(state, metrics, clock, 0ms, &dra);
  EXPECT_TRUE(sweeper.sweep().mixed.empty()) << "DRA not served";
  dra.inventory = dra_gpus_on("n", 2);
  auto pass = sweeper.sweep();
  ASSERT_EQ(pass.mixed.size(), 1u);
  EXPECT_EQ(pass.mixed[0], (state::MixedGpuSources{"n", "nvidia.com/gpu", 2, 2}));
  EXPECT_TRUE(sweeper.sweep().mixed.empty()) << "the same episode is reported once";
  dra.inventory = dra_gpus_on("elsewhere", 2);
  EXPECT_TRUE(sweeper.sweep().mixed.empty()) << "ended";
  dra.inventory = dra_gpus_on("n", 2);
  EXPECT_EQ(sweeper.sweep().mixed.size(), 1u) << "a new episode";
}

TEST(Sweeper, ItsThreadSweepsEveryIntervalUntilDestroyed) {
  testing::FakeClock clock;
  state::ClusterState state;
  state.upsert_nodes({gpu_node("n", 4)});
  state.reserve("u1", gpu_claim("n", 1), 30s, clock.now());
  server::Metrics metrics({"nvidia.com/gpu"});
  {
    Sweeper sweeper(state, metrics, clock, 5ms);
    std::this_thread::sleep_for(50ms);
    EXPECT_TRUE(state.claim_of("u1")) << "the fake clock has not moved";
    clock.advance(31s);
    for (int i = 0; i < 400 && state.claim_of("u1"); ++i) std::this_thread::sleep_for(5ms);
    EXPECT_FALSE(state.claim_of("u1"));
  }
  state.reserve("u2", gpu_claim("n", 1), 1s, clock.now());
  clock.advance(2s);
  std::this_thread::sleep_for(30ms);
  EXPECT_TRUE(state.claim_of("u2")) << "a destroyed sweeper sweeps no more";
}

}  // namespace
}  // namespace extender::daemon
