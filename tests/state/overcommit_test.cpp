#include "extender/state/overcommit.h"

#include <gtest/gtest.h>

namespace extender::state {
namespace {

using namespace std::chrono_literals;

constexpr std::int64_t kGi = std::int64_t{1} << 30;

model::NodeSupply node(const std::string& name, std::int64_t gpus) {
  model::NodeSupply n;
  n.name = name;
  n.gpus["nvidia.com/gpu"] = gpus;
  return n;
}

Claim gpu_claim(const std::string& node_name, std::int64_t gpus) {
  Claim c;
  c.owner = "ns/p";
  c.node = node_name;
  c.allocation.gpus["nvidia.com/gpu"] = gpus;
  return c;
}

Claim volume_claim(const std::string& node_name, const std::string& pool, const std::string& device,
                   std::int64_t bytes) {
  Claim c;
  c.owner = "ns/v";
  c.source = "volume";
  c.node = node_name;
  model::VolumePlacement v;
  v.volume = "ns/v";
  v.pool = pool;
  v.device = device;
  v.bytes = bytes;
  c.allocation.volumes.push_back(v);
  return c;
}

TEST(Overcommit, GpusBoundBeyondAllocatableAreFoundWithTheirPods) {
  ClusterState s;
  s.upsert_nodes({node("a", 8), node("b", 8)});
  for (int i = 0; i < 11; ++i) s.place("a" + std::to_string(i), gpu_claim("a", 1));
  for (int i = 0; i < 8; ++i) s.place("b" + std::to_string(i), gpu_claim("b", 1));
  const Snapshot snap = s.snapshot();
  auto a = find_overcommit(*snap.find("a"));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0], (Overcommit{"a", Overcommit::Kind::kGpu, "nvidia.com/gpu", 11, 8, 11}));
  EXPECT_TRUE(find_overcommit(*snap.find("b")).empty()) << "exactly full is not overcommitted";
}

TEST(Overcommit, ReservationsNeverCount) {
  ClusterState s;
  s.upsert_nodes({node("a", 2)});
  s.place("p1", gpu_claim("a", 2));
  s.reserve("p2", gpu_claim("a", 1), 30s, SteadyClock::now());
  EXPECT_TRUE(find_overcommit(*s.snapshot().find("a")).empty());
}

TEST(Overcommit, AResourceTheNodeNoLongerOffersIsOvercommitted) {
  ClusterState s;
  s.upsert_nodes({node("a", 4)});
  s.place("p1", gpu_claim("a", 2));
  model::NodeSupply shrunk = node("a", 0);
  shrunk.gpus.clear();
  s.upsert_nodes({shrunk});
  auto found = find_overcommit(*s.snapshot().find("a"));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].capacity, 0);
  EXPECT_EQ(found[0].bound, 2);
}

TEST(Overcommit, UnreadableSupplyIsNotJudged) {
  ClusterState s;
  model::NodeSupply n = node("a", 1);
  n.problems["nvidia.com/gpu"] = "allocatable is not a number";
  s.upsert_nodes({n});
  s.place("p1", gpu_claim("a", 2));
  EXPECT_TRUE(find_overcommit(*s.snapshot().find("a")).empty());
}

TEST(Overcommit, PoolsAndDevicesBeyondCapacity) {
  ClusterState s;
  model::NodeSupply n = node("a", 0);
  n.pools.push_back({"fast", 2 * kGi, {{"nvme0", kGi}, {"nvme1", kGi}}});
  n.pools.push_back({"bulk", 10 * kGi, {}});
  s.upsert_nodes({n});
  s.place("v1", volume_claim("a", "fast", "nvme0", kGi));
  s.place("v2", volume_claim("a", "fast", "nvme0", kGi));
  s.place("v3", volume_claim("a", "bulk", "", 10 * kGi));
  auto found = find_overcommit(*s.snapshot().find("a"));
  ASSERT_EQ(found.size(), 1u) << "the pool fits (2 GiB of 2), its device does not (2 GiB of 1)";
  EXPECT_EQ(found[0].kind, Overcommit::Kind::kPool);
  EXPECT_EQ(found[0].subject, "fast/nvme0");
  EXPECT_EQ(found[0].bound, 2 * kGi);
  EXPECT_EQ(found[0].pods, 2u);
  s.place("v4", volume_claim("a", "bulk", "", 1));
  found = find_overcommit(*s.snapshot().find("a"));
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[1].subject, "bulk");
}

TEST(Overcommit, DescriptionNamesTheNodeFiguresAndTheFix) {
  const std::string d = describe({"gpu-3", Overcommit::Kind::kGpu, "nvidia.com/gpu", 11, 8, 11});
  for (const char* want : {"node gpu-3", "11 nvidia.com/gpu", "8 allocatable", "ignoredByScheduler: true",
                           "bindVerb: bind", "another scheduler", "resize"}) {
    EXPECT_NE(d.find(want), std::string::npos) << want << " in: " << d;
  }
}

TEST(OvercommitTracker, ReportsEachEpisodeOnceAndAgainAfterItEnds) {
  ClusterState s;
  s.upsert_nodes({node("a", 2), node("b", 2)});
  OvercommitTracker t;
  EXPECT_TRUE(t.update(s.snapshot()).empty());
  s.place("p1", gpu_claim("a", 2));
  s.place("p2", gpu_claim("a", 1));
  auto started = t.update(s.snapshot());
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].node, "a");
  EXPECT_EQ(t.open_episodes(), 1u);
  s.place("p3", gpu_claim("a", 1));  // worse, same episode
  s.place("p4", gpu_claim("b", 1));  // another node changes, still fits
  EXPECT_TRUE(t.update(s.snapshot()).empty());
  EXPECT_TRUE(t.update(s.snapshot()).empty());
  s.drop("p2");
  s.drop("p3");
  EXPECT_TRUE(t.update(s.snapshot()).empty());
  EXPECT_EQ(t.open_episodes(), 0u) << "back within capacity: the episode ends";
  s.place("p5", gpu_claim("a", 1));
  EXPECT_EQ(t.update(s.snapshot()).size(), 1u) << "a new episode is reported again";
}

TEST(OvercommitTracker, ARemovedNodeEndsItsEpisode) {
  ClusterState s;
  s.upsert_nodes({node("a", 1)});
  s.place("p1", gpu_claim("a", 2));
  OvercommitTracker t;
  EXPECT_EQ(t.update(s.snapshot()).size(), 1u);
  s.remove_node("a");
  EXPECT_TRUE(t.update(s.snapshot()).empty());
  EXPECT_EQ(t.open_episodes(), 0u);
  s.upsert_nodes({node("a", 1)});
  EXPECT_EQ(t.update(s.snapshot()).size(), 1u) << "the claim is still there when the node comes back";
}

}  // namespace
}  // namespace extender::state
