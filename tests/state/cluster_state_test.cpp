#include "extender/state/cluster_state.h"

#include <gtest/gtest.h>

#include "extender/state/demand_cache.h"

namespace extender::state {
namespace {

using namespace std::chrono_literals;

model::NodeSupply node(const std::string& name, std::int64_t gpus) {
  model::NodeSupply n;
  n.name = name;
  n.gpus["nvidia.com/gpu"] = gpus;
  return n;
}

Claim claim(const std::string& node_name, std::int64_t gpus) {
  Claim c;
  c.owner = "ns/p";
  c.node = node_name;
  c.allocation.gpus["nvidia.com/gpu"] = gpus;
  return c;
}

std::int64_t used(const ClusterState& s, const std::string& node_name, std::string_view exclude, TimePoint now) {
  const Snapshot snap = s.snapshot();
  return snap.find(node_name)->usage_excluding(exclude, now).gpus_used("nvidia.com/gpu");
}

TEST(ClusterState, SnapshotsCountTheClustersGpusByModelAsNodesChange) {
  auto gpu_node = [](const std::string& name, const std::string& gpu_model, std::int64_t gpus) {
    model::NodeSupply n = node(name, gpus);
    n.gpu_devices = {"nvidia.com/gpu", gpus, 0};
    n.gpu_model = gpu_model;
    return n;
  };
  using ByModel = std::map<std::string, std::int64_t, std::less<>>;
  ClusterState s;
  s.upsert_nodes({gpu_node("a", "T4", 2), gpu_node("b", "G2", 8), gpu_node("c", "", 4)});
  const Snapshot first = s.snapshot();
  EXPECT_EQ(first.gpu_models().total, 14);
  EXPECT_EQ(first.gpu_models().by_model, (ByModel{{"G2", 8}, {"T4", 2}}));
  s.place("p1", claim("a", 1));
  EXPECT_EQ(&s.snapshot().gpu_models(), &first.gpu_models()) << "a pod event shares the count";
  s.upsert_nodes({gpu_node("a", "T4", 4)});
  EXPECT_EQ(s.snapshot().gpu_models().by_model, (ByModel{{"G2", 8}, {"T4", 4}})) << "a node's devices changed";
  s.upsert_nodes({gpu_node("b", "G3", 8)});
  EXPECT_EQ(s.snapshot().gpu_models().by_model, (ByModel{{"G3", 8}, {"T4", 4}})) << "relabelled: its old model gone";
  s.remove_node("a");
  EXPECT_EQ(s.snapshot().gpu_models().by_model, (ByModel{{"G3", 8}}));
  EXPECT_EQ(s.snapshot().gpu_models().total, 12);
  s.replace_nodes({gpu_node("d", "T4", 2)});
  EXPECT_EQ(s.snapshot().gpu_models().by_model, (ByModel{{"T4", 2}})) << "a relist counts afresh";
  EXPECT_EQ(first.gpu_models().total, 14) << "an earlier snapshot keeps its count";
}

TEST(ClusterState, SnapshotsAreImmutable) {
  ClusterState s;
  s.upsert_nodes({node("a", 4)});
  Snapshot before = s.snapshot();
  s.place("p1", claim("a", 2));
  s.upsert_nodes({node("b", 8)});
  EXPECT_EQ(before.find("a")->claims.size(), 0u);
  EXPECT_EQ(before.find("b"), nullptr);
  Snapshot after = s.snapshot();
  EXPECT_EQ(after.find("a")->placed.gpus_used("nvidia.com/gpu"), 2);
  EXPECT_NE(after.find("b"), nullptr);
}

TEST(ClusterState, PlacingTheSameClaimAgainPublishesNothing) {
  ClusterState s;
  s.upsert_nodes({node("a", 4)});
  s.place("p", claim("a", 1));
  Snapshot before = s.snapshot();
  s.place("p", claim("a", 1));
  EXPECT_EQ(s.snapshot().find("a"), before.find("a"));
  s.place("p", claim("a", 2));
  EXPECT_NE(s.snapshot().find("a"), before.find("a"));
}

TEST(ClusterState, UpsertingAnUnchangedNodeKeepsTheEntry) {
  ClusterState s;
  s.upsert_nodes({node("a", 4)});
  const NodeState* first = s.snapshot().find("a");
  Snapshot keep = s.snapshot();
  s.upsert_nodes({node("a", 4)});
  EXPECT_EQ(s.snapshot().find("a"), keep.find("a"));
  s.upsert_nodes({node("a", 6)});
  EXPECT_EQ(s.snapshot().find("a")->supply.gpus.at("nvidia.com/gpu"), 6);
  (void)first;
}

TEST(ClusterState, DerivedPoolsJoinTheNodesOwnUnlessItNamesThemItself) {
  ClusterState s;
  model::NodeSupply a = node("a", 0);
  a.pools.push_back({"local", 100, {}});
  s.upsert_nodes({a, node("b", 0)});
  s.set_derived_pools(
      {{"a", {{"local", 5, {}}, {"topolvm", 50, {}}}}, {"b", {{"topolvm", 70, {}}}}, {"gone", {{"x", 1, {}}}}});
  Snapshot snap = s.snapshot();
  ASSERT_EQ(snap.find("a")->supply.pools.size(), 2u);
  EXPECT_EQ(snap.find("a")->supply.find_pool("local")->capacity_bytes, 100) << "the node's own pool wins";
  EXPECT_EQ(snap.find("a")->supply.find_pool("topolvm")->capacity_bytes, 50);
  EXPECT_EQ(snap.find("b")->supply.find_pool("topolvm")->capacity_bytes, 70);
  EXPECT_EQ(snap.find("gone"), nullptr) << "pools alone make no node";

  const NodeState* b_before = snap.find("b");
  s.set_derived_pools({{"a", {{"topolvm", 40, {}}}}, {"b", {{"topolvm", 70, {}}}}});
  snap = s.snapshot();
  EXPECT_EQ(snap.find("b"), b_before) << "unchanged pools publish nothing";
  EXPECT_EQ(snap.find("a")->supply.find_pool("topolvm")->capacity_bytes, 40);
  s.upsert_nodes({node("b", 2)});
  EXPECT_EQ(s.snapshot().find("b")->supply.find_pool("topolvm")->capacity_bytes, 70) << "kept across node updates";
  s.set_derived_pools({});
  EXPECT_EQ(s.snapshot().find("a")->supply.find_pool("topolvm"), nullptr);
}

TEST(ClusterState, DerivedPoolsOfSomeNodesLeaveTheOthersUntouched) {
  ClusterState s;
  s.upsert_nodes({node("a", 0), node("b", 0), node("c", 0)});
  s.set_derived_pools({{"a", {{"topolvm", 50, {}}}}, {"b", {{"topolvm", 70, {}}}}});
  const Snapshot before = s.snapshot();
  s.set_derived_pools_of({{"a", {{"topolvm", 40, {}}}}, {"c", {{"topolvm", 10, {}}}}});
  Snapshot snap = s.snapshot();
  EXPECT_EQ(snap.find("a")->supply.find_pool("topolvm")->capacity_bytes, 40);
  EXPECT_EQ(snap.find("b"), before.find("b")) << "a node not named is not republished";
  EXPECT_EQ(snap.find("c")->supply.find_pool("topolvm")->capacity_bytes, 10);
  const NodeState* c_before = snap.find("c");
  s.set_derived_pools_of({{"a", {}}, {"c", {{"topolvm", 10, {}}}}, {"gone", {}}});
  snap = s.snapshot();
  EXPECT_EQ(snap.find("a")->supply.find_pool("topolvm"), nullptr) << "an empty list removes the node's pools";
  EXPECT_EQ(snap.find("c"), c_before) << "unchanged pools publish nothing";
  EXPECT_EQ(snap.find("b")->supply.find_pool("topolvm")->capacity_bytes, 70);
  EXPECT_EQ(snap.find("gone"), nullptr);
}

TEST(ClusterState, UsageExcludesThePodItselfAndExpiredReservations) {
  ClusterState s;
  s.upsert_nodes({node("a", 8)});
  const auto t0 = SteadyClock::now();
  s.place("placed", claim("a", 2));
  s.reserve("reserved", claim("a", 3), 30s, t0);
  EXPECT_EQ(used(s, "a", "", t0), 5);
  EXPECT_EQ(used(s, "a", "placed", t0), 3) << "re-filtering a placed pod ignores its own claim";
  EXPECT_EQ(used(s, "a", "reserved", t0), 2) << "re-filtering a reserved pod ignores its own reservation";
  EXPECT_EQ(used(s, "a", "", t0 + 31s), 2) << "an expired reservation holds nothing";
  EXPECT_EQ(s.sweep_expired(t0 + 29s), 0u);
  EXPECT_EQ(s.sweep_expired(t0 + 31s), 1u);
  EXPECT_FALSE(s.claim_of("reserved"));
}

TEST(ClusterState, OneClaimPerPod) {
  ClusterState s;
  s.upsert_nodes({node("a", 8), node("b", 8)});
  const auto t0 = SteadyClock::now();
  s.reserve("p", claim("a", 3), 30s, t0);
  s.place("p", claim("b", 3));  // the watch saw the pod bound elsewhere
  EXPECT_EQ(used(s, "a", "", t0), 0);
  EXPECT_EQ(used(s, "b", "", t0), 3);
  s.drop_reservation("p");
  EXPECT_TRUE(s.claim_of("p")) << "drop_reservation leaves a placement alone";
  s.drop("p");
  EXPECT_FALSE(s.claim_of("p"));
  EXPECT_EQ(used(s, "b", "", t0), 0);
}

TEST(ClusterState, ClaimsSurviveTheirNodeComingAndGoing) {
  ClusterState s;
  s.place("p", claim("late", 2));
  EXPECT_EQ(s.snapshot().find("late"), nullptr);
  s.upsert_nodes({node("late", 4)});
  EXPECT_EQ(used(s, "late", "", SteadyClock::now()), 2) << "a pod seen before its node counts once the node appears";
  s.remove_node("late");
  EXPECT_EQ(s.snapshot().find("late"), nullptr);
  EXPECT_TRUE(s.claim_of("p"));
}

TEST(ClusterState, ReplacingPlacementsKeepsReservations) {
  ClusterState s;
  s.upsert_nodes({node("a", 8)});
  const auto t0 = SteadyClock::now();
  s.place("old", claim("a", 1));
  s.reserve("inflight", claim("a", 2), 30s, t0);
  Claim volume = claim("a", 0);
  volume.source = "volume";
  s.place("pvc/1", volume);
  s.replace_placements("pod", {{"new", claim("a", 4)}});
  EXPECT_FALSE(s.claim_of("old"));
  EXPECT_TRUE(s.claim_of("inflight"));
  EXPECT_TRUE(s.claim_of("pvc/1")) << "another source's claims stay";
  EXPECT_EQ(used(s, "a", "", t0), 6);
}

TEST(ClusterState, ReplacingThePlacementsUnderAPrefixTouchesThoseOnlyAndRepublishesOnlyWhatChanged) {
  const auto hold = [](const std::string& node_name, std::int64_t gpus) {
    Claim c = claim(node_name, gpus);
    c.source = "hold";
    return c;
  };
  ClusterState s;
  s.upsert_nodes({node("a", 8), node("b", 8)});
  const auto t0 = SteadyClock::now();
  s.replace_placements("hold", {{"acr/x/a", hold("a", 1)}, {"acr/x/b", hold("b", 1)}, {"acr/xy/a", hold("a", 2)}});
  const Snapshot before = s.snapshot();
  s.replace_placements("hold", {{"acr/x/a", hold("a", 3)}}, "acr/x/");
  EXPECT_FALSE(s.claim_of("acr/x/b")) << "under the prefix and not listed: dropped";
  EXPECT_TRUE(s.claim_of("acr/xy/a")) << "another prefix's claim stays";
  EXPECT_EQ(used(s, "a", "", t0), 5);
  EXPECT_EQ(used(s, "b", "", t0), 0);

  const Snapshot changed = s.snapshot();
  s.replace_placements("hold", {{"acr/x/a", hold("a", 3)}}, "acr/x/");
  EXPECT_EQ(s.snapshot().find("a"), changed.find("a")) << "nothing changed: the node is not published again";
  EXPECT_NE(changed.find("a"), before.find("a"));
}

TEST(ClusterState, ReplaceNodesRemovesTheUnlisted) {
  ClusterState s;
  s.upsert_nodes({node("a", 1), node("b", 1)});
  s.replace_nodes({node("b", 2), node("c", 3)});
  Snapshot snap = s.snapshot();
  EXPECT_EQ(snap.find("a"), nullptr);
  EXPECT_EQ(snap.find("b")->supply.gpus.at("nvidia.com/gpu"), 2);
  EXPECT_NE(snap.find("c"), nullptr);
  EXPECT_EQ(snap.nodes().size(), 2u);
}

TEST(DemandCache, BoundedByCountAndAge) {
  DemandCache cache(2, 60s);
  const auto t0 = SteadyClock::now();
  auto demand = [](const char* uid) {
    model::PodDemand d;
    d.uid = uid;
    return d;
  };
  cache.remember(demand("a"), t0);
  cache.remember(demand("b"), t0);
  cache.remember(demand("c"), t0);
  EXPECT_FALSE(cache.find("a", t0)) << "the least recently stored goes first";
  EXPECT_TRUE(cache.find("b", t0));
  EXPECT_TRUE(cache.find("c", t0));
  EXPECT_FALSE(cache.find("c", t0 + 61s)) << "too old";
  cache.remember(demand("b"), t0 + 10s);  // refreshed
  cache.remember(demand("d"), t0 + 10s);
  EXPECT_TRUE(cache.find("b", t0 + 10s));
  EXPECT_FALSE(cache.find("c", t0 + 10s));
  EXPECT_EQ(cache.size(), 2u);
}

}  // namespace
}  // namespace extender::state
