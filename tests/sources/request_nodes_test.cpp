#include "extender/sources/request_nodes.h"

#include <gtest/gtest.h>

#include "extender/config/config.h"

namespace extender::sources {
namespace {

model::Node node(const std::string& name, const std::string& gpus) {
  model::Node n;
  n.name = name;
  n.allocatable["nvidia.com/gpu"] = gpus;
  return n;
}

std::vector<const model::Node*> pointers(const std::vector<model::Node>& nodes) {
  std::vector<const model::Node*> out;
  for (const auto& n : nodes) out.push_back(&n);
  return out;
}

TEST(RequestNodes, NodesThatDidNotChangeDoNotRebuildTheState) {
  state::ClusterState state;
  RequestNodes request_nodes(state, {}, config::Config{}.supply_rules(), 100);
  std::vector<model::Node> nodes;
  for (int i = 0; i < 50; ++i) nodes.push_back(node(std::string("n").append(std::to_string(i)), "8"));
  request_nodes.observe(pointers(nodes));
  const state::Snapshot first = state.snapshot();
  ASSERT_EQ(first.nodes().size(), 50u);

  request_nodes.observe(pointers(nodes));
  const state::Snapshot same = state.snapshot();
  EXPECT_EQ(&same.nodes(), &first.nodes()) << "an unchanged request publishes no new snapshot";

  nodes[7].allocatable["nvidia.com/gpu"] = "4";
  request_nodes.observe(pointers(nodes));
  const state::Snapshot changed = state.snapshot();
  EXPECT_EQ(changed.find("n7")->supply.gpus.at("nvidia.com/gpu"), 4);
  for (const auto& [name, entry] : changed.nodes()) {
    if (name == "n7") {
      EXPECT_NE(entry, first.nodes().find(name)->second);
    } else {
      EXPECT_EQ(entry, first.nodes().find(name)->second) << name << " did not change and must keep its entry";
    }
  }
}

TEST(RequestNodes, ARequestNodeNamedLikeAnInventoryNodeIsIgnored) {
  state::ClusterState state;
  model::NodeSupply inv;
  inv.name = "a";
  inv.gpus["nvidia.com/gpu"] = 4;
  inv.pools.push_back({"local", 1000, {}});
  state.upsert_nodes({inv});
  RequestNodes request_nodes(state, {inv}, config::Config{}.supply_rules(), 100);
  const std::vector<model::Node> nodes = {node("a", "1000"), node("b", "2")};
  EXPECT_EQ(request_nodes.observe(pointers(nodes)), 0u);
  const state::Snapshot snap = state.snapshot();
  EXPECT_EQ(snap.find("a")->supply.gpus.at("nvidia.com/gpu"), 4) << "the inventory is what the operator declared";
  ASSERT_EQ(snap.find("a")->supply.pools.size(), 1u);
  EXPECT_EQ(snap.find("b")->supply.gpus.at("nvidia.com/gpu"), 2);
}

TEST(RequestNodes, PastTheCapNewNamesAreNotRememberedAndRememberedOnesStillUpdate) {
  state::ClusterState state;
  model::NodeSupply inv;
  inv.name = "inv";
  state.upsert_nodes({inv});
  RequestNodes request_nodes(state, {inv}, config::Config{}.supply_rules(), 3);
  std::vector<model::Node> nodes = {node("inv", "1"), node("n0", "1"), node("n1", "1"),
                                    node("n2", "1"),  node("n3", "1"), node("n4", "1")};
  EXPECT_EQ(request_nodes.observe(pointers(nodes)), 2u) << "the inventory node does not count";
  state::Snapshot snap = state.snapshot();
  EXPECT_EQ(snap.nodes().size(), 4u);
  EXPECT_TRUE(snap.find("n2"));
  EXPECT_FALSE(snap.find("n3"));

  nodes = {node("n1", "8"), node("n5", "8")};
  EXPECT_EQ(request_nodes.observe(pointers(nodes)), 1u);
  snap = state.snapshot();
  EXPECT_EQ(snap.find("n1")->supply.gpus.at("nvidia.com/gpu"), 8) << "a remembered node is still updated";
  EXPECT_FALSE(snap.find("n5"));
  EXPECT_EQ(snap.nodes().size(), 4u);
}

}  // namespace
}  // namespace extender::sources
