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
  RequestNodes request_nodes(state, {}, config::Config{}.supply_rules());
  std::vector<model::Node> nodes;
  for (int i = 0; i < 50; ++i) nodes.push_back(node("n" + std::to_string(i), "8"));
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
      EXPECT_NE(entry, first.nodes().at(name));
    } else {
      EXPECT_EQ(entry, first.nodes().at(name)) << name << " did not change and must keep its entry";
    }
  }
}

TEST(RequestNodes, TheInventoryWinsForPoolsAndGpuMemory) {
  state::ClusterState state;
  model::NodeSupply inv;
  inv.name = "a";
  inv.pools.push_back({"local", 1000, {}});
  inv.gpu_memory_bytes["nvidia.com/gpu"] = 40;
  RequestNodes request_nodes(state, {inv}, config::Config{}.supply_rules());
  model::Node a = node("a", "2");
  a.labels["nvidia.com/gpu.memory"] = "81920";
  const model::NodeSupply merged = request_nodes.merged(a);
  EXPECT_EQ(merged.gpus.at("nvidia.com/gpu"), 2) << "the request wins for GPU counts";
  EXPECT_EQ(merged.gpu_memory_bytes.at("nvidia.com/gpu"), 40);
  ASSERT_EQ(merged.pools.size(), 1u);
  EXPECT_EQ(merged.pools[0].name, "local");
}

}  // namespace
}  // namespace extender::sources
