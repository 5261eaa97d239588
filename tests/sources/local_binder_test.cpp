#include "extender/sources/local_binder.h"

#include <gtest/gtest.h>

namespace extender::sources {
namespace {

using namespace std::chrono_literals;

state::Claim gpu_claim(const std::string& node) {
  state::Claim c;
  c.owner = "ml/p";
  c.node = node;
  c.allocation.gpus["nvidia.com/gpu"] = 1;
  return c;
}

TEST(LocalBinder, TurnsTheReservationOnTheNodeIntoAPlacement) {
  state::ClusterState state;
  model::NodeSupply n;
  n.name = "n";
  n.gpus["nvidia.com/gpu"] = 2;
  model::NodeSupply m = n;
  m.name = "m";
  state.upsert_nodes({n, m});
  LocalBinder binder(state);
  const engine::Deadline deadline = SteadyClock::now() + 1s;

  EXPECT_NE(binder.bind({"p", "ml", "u1", "n"}, deadline), "") << "no reservation: nothing to bind";
  EXPECT_FALSE(state.claim_of("u1"));

  state.reserve("u1", gpu_claim("n"), 30s, SteadyClock::now());
  EXPECT_NE(binder.bind({"p", "ml", "u1", "m"}, deadline), "") << "reserved on another node";
  EXPECT_EQ(state.claim_of("u1")->kind, state::Claim::Kind::kReserved);
  EXPECT_EQ(binder.bind({"p", "ml", "u1", "n"}, deadline), "");
  auto claim = state.claim_of("u1");
  ASSERT_TRUE(claim);
  EXPECT_EQ(claim->kind, state::Claim::Kind::kPlaced);
  EXPECT_EQ(claim->node, "n");
  EXPECT_EQ(state.sweep_expired(SteadyClock::now() + 1h), 0u) << "a placement never expires";
  EXPECT_EQ(binder.bind({"p", "ml", "u1", "n"}, deadline), "") << "binding again where it is succeeds";

  EXPECT_EQ(binder.wait_turn(deadline), "");
  EXPECT_EQ(binder.record_devices({{"ml/c", "d0"}}, deadline), "");
  EXPECT_EQ(binder.record_gpu_share({"p", "ml", "u1", "n"}, {0, 4, 16}, deadline), "");
}

}  // namespace
}  // namespace extender::sources
