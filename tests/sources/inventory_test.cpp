#include "extender/sources/inventory.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "extender/sources/request_nodes.h"

namespace extender::sources {
namespace {

constexpr std::int64_t GiB = std::int64_t{1} << 30;
constexpr std::int64_t MiB = std::int64_t{1} << 20;

std::vector<model::GpuResourceRule> gpu_rules() {
  return {{"nvidia.com/gpu", "nvidia.com/gpu.memory", MiB}, {"amd.com/gpu", "amd.com/gpu.memory", MiB}};
}

TEST(Inventory, TheExampleLoads) {
  auto nodes = load_inventory(std::string(EXTENDER_SOURCE_DIR) + "/examples/inventory.yaml", gpu_rules());
  ASSERT_TRUE(nodes) << nodes.message();
  ASSERT_EQ(nodes->size(), 4u);
  const model::NodeSupply& a100 = (*nodes)[0];
  EXPECT_EQ(a100.name, "gpu-a100-1");
  EXPECT_EQ(a100.gpus.at("nvidia.com/gpu"), 8);
  EXPECT_EQ(a100.gpu_memory_bytes.at("nvidia.com/gpu"), 40960 * MiB);
  ASSERT_EQ(a100.pools.size(), 1u);
  EXPECT_EQ(a100.pools[0].devices.size(), 2u);
  EXPECT_EQ(a100.pools[0].capacity_bytes, 2048 * GiB);
  EXPECT_EQ((*nodes)[2].gpu_memory_bytes.at("nvidia.com/gpu"), 81559 * MiB);
  EXPECT_TRUE((*nodes)[3].gpus.empty());
}

TEST(Inventory, GpuMemoryEntriesWinOverLabels) {
  auto nodes = parse_inventory(R"(
nodes:
  - name: n
    labels: {nvidia.com/gpu.memory: "1000"}
    gpus: {nvidia.com/gpu: 2, amd.com/gpu: 1}
    gpu_memory: {nvidia.com/gpu: 80Gi, amd.com/gpu: 64Gi}
)",
                               "inv", gpu_rules());
  ASSERT_TRUE(nodes) << nodes.message();
  EXPECT_EQ((*nodes)[0].gpu_memory_bytes.at("nvidia.com/gpu"), 80 * GiB);
  EXPECT_EQ((*nodes)[0].gpu_memory_bytes.at("amd.com/gpu"), 64 * GiB);
  EXPECT_EQ((*nodes)[0].gpus.at("amd.com/gpu"), 1);
}

TEST(Inventory, ErrorsNameFileLineAndKey) {
  struct Case {
    const char* yaml;
    const char* mentions;
  };
  const Case cases[] = {
      {"nodes:\n  - name: a\n    gpu: {x: 1}\n", "inv:3: nodes[0].gpu: unknown key"},
      {"nodes:\n  - gpus: {}\n", "nodes[0].name: is required"},
      {"nodes:\n  - name: a\n  - name: a\n", "listed twice"},
      {"nodes:\n  - name: a\n    gpus: {nvidia.com/gpu: lots}\n", "nodes[0].gpus.nvidia.com/gpu"},
      {"nodes:\n  - name: a\n    pools:\n      - name: p\n", "capacity: is required"},
      {"nodes:\n  - name: a\n    pools:\n      - {name: p, capacity: 1Ti, devices: [{name: d, capacity: 1Ti}]}\n",
       "takes its capacity from them"},
      {"nodes:\n  - name: a\n    pools:\n      - {name: p, devices: [{name: d, capacity: 1Ti}, {name: d, capacity: "
       "1Ti}]}\n",
       "listed twice in this pool"},
      {"nodes:\n  - name: a\n    pools:\n      - {name: p, capacity: 1Ti}\n      - {name: p, capacity: 1Ti}\n",
       "listed twice on this node"},
      {"nodes:\n  - name: a\n    labels: {nvidia.com/gpu.memory: big}\n", "labels.nvidia.com/gpu.memory"},
      {"nodes: {a: 1}\n", "nodes: expected a list"},
      {"nodes:\n  - name: a\n    pools: [{name: p, capacity: -1Gi}]\n", "negative"},
      {"nodes: [", "not valid YAML"},
  };
  for (const auto& c : cases) {
    auto r = parse_inventory(c.yaml, "inv", gpu_rules());
    ASSERT_FALSE(r) << c.yaml;
    EXPECT_NE(r.message().find(c.mentions), std::string::npos) << c.yaml << " -> " << r.message();
  }
  auto missing = load_inventory("/nonexistent/inventory.yaml", gpu_rules());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("/nonexistent/inventory.yaml"), std::string::npos);
}

TEST(Inventory, DraNodesAreReadWithTheirGpusForTheSimulator) {
  struct Case {
    const char* yaml;
    std::vector<DraGpus> dra;
  };
  const Case cases[] = {
      {"nodes:\n  - {name: a, dra: {gpus: 8, gpu_memory: 80Gi}}\n", {{"a", 8, 80 * GiB}}},
      {"nodes:\n  - {name: a, dra: {gpus: 2}}\n", {{"a", 2, 0}}},
      {"nodes:\n  - {name: a, dra: {gpus: 256, gpu_memory: 81559Mi}}\n", {{"a", 256, 81559 * MiB}}},
      {"nodes:\n  - {name: dp, gpus: {nvidia.com/gpu: 4}}\n  - {name: b, dra: {gpus: 4}}\n  - {name: c, dra: ~}\n"
       "  - {name: d, gpus: {nvidia.com/gpu: 0}, dra: {gpus: 1}}\n",
       {{"b", 4, 0}, {"d", 1, 0}}},
      {"nodes:\n  - {name: dp, gpus: {nvidia.com/gpu: 4}}\n", {}},
  };
  for (const auto& c : cases) {
    auto inv = parse_inventory_with_dra(c.yaml, "inv", gpu_rules());
    ASSERT_TRUE(inv) << c.yaml << " -> " << inv.message();
    EXPECT_EQ(inv->dra, c.dra) << c.yaml;
    for (const auto& d : inv->dra) {
      auto node = std::find_if(inv->nodes.begin(), inv->nodes.end(), [&](const auto& n) { return n.name == d.node; });
      ASSERT_NE(node, inv->nodes.end()) << d.node;
      EXPECT_EQ(node->gpu_devices.count, 0) << d.node << ": a DRA node offers no device-plugin GPUs";
    }
  }
}

TEST(Inventory, DraEntriesThatCannotBeServedAreErrorsNamingFileLineAndKey) {
  std::string too_many = "nodes:\n";
  for (int i = 0; i < 400; ++i) too_many += "  - {name: n" + std::to_string(i) + ", dra: {gpus: 256}}\n";
  struct Case {
    std::string yaml;
    const char* mentions;
  };
  const Case cases[] = {
      {"nodes:\n  - name: a\n    dra: 8\n", "inv:3: nodes[0].dra: expected a mapping"},
      {"nodes:\n  - name: a\n    dra: [8]\n", "inv:3: nodes[0].dra: expected a mapping"},
      {"nodes:\n  - name: a\n    dra: {gpus: 8, driver: x}\n", "nodes[0].dra.driver: unknown key"},
      {"nodes:\n  - name: a\n    dra: {gpu_memory: 80Gi}\n", "inv:3: nodes[0].dra.gpus: is required"},
      {"nodes:\n  - name: a\n    dra: {gpus: 0}\n", "nodes[0].dra.gpus: expected 1 to 256 GPUs"},
      {"nodes:\n  - name: a\n    dra: {gpus: 1e15}\n", "nodes[0].dra.gpus: expected 1 to 256 GPUs"},
      {"nodes:\n  - name: a\n    dra: {gpus: 257}\n", "nodes[0].dra.gpus: expected 1 to 256 GPUs"},
      {"nodes:\n  - name: a\n    dra: {gpus: -1}\n", "nodes[0].dra.gpus"},
      {"nodes:\n  - name: a\n    dra: {gpus: lots}\n", "nodes[0].dra.gpus"},
      {"nodes:\n  - name: a\n    dra: {gpus: [1]}\n", "nodes[0].dra.gpus"},
      {"nodes:\n  - name: a\n    dra: {gpus: 8, gpu_memory: big}\n", "nodes[0].dra.gpu_memory"},
      {"nodes:\n  - name: a\n    gpus: {nvidia.com/gpu: 8}\n    dra: {gpus: 8}\n",
       "inv:4: nodes[0].dra: the node also gives gpus.nvidia.com/gpu: a node's GPUs come from a device plugin or from "
       "DRA, not both"},
      {too_many, "nodes[390].dra.gpus: the inventory's DRA GPUs exceed 100000"},
  };
  for (const auto& c : cases) {
    auto r = parse_inventory_with_dra(c.yaml, "inv", gpu_rules());
    ASSERT_FALSE(r) << c.yaml;
    EXPECT_NE(r.message().find(c.mentions), std::string::npos) << c.yaml << " -> " << r.message();
  }
}

TEST(Inventory, StandaloneModeRefusesDraNodes) {
  auto r = parse_inventory("nodes:\n  - name: a\n    dra: {gpus: 8}\n", "inv", gpu_rules());
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("inv:3: nodes[0].dra: DRA nodes are read by the simulator only"), std::string::npos)
      << r.message();
  auto example = load_inventory(std::string(EXTENDER_SOURCE_DIR) + "/examples/mixed-inventory.yaml", gpu_rules());
  ASSERT_FALSE(example);
  EXPECT_NE(example.message().find("standalone mode reads no DRA"), std::string::npos) << example.message();
}

TEST(RequestNodes, TheInventoryWinsOverARequestNodeOfTheSameName) {
  auto inventory = parse_inventory(R"(
nodes:
  - name: n
    gpus: {nvidia.com/gpu: 8}
    gpu_memory: {nvidia.com/gpu: 80Gi}
    pools: [{name: local, capacity: 1Ti}]
)",
                                   "inv", gpu_rules());
  ASSERT_TRUE(inventory);
  state::ClusterState state;
  state.upsert_nodes(*inventory);
  RequestNodes nodes(state, *inventory, model::SupplyRules{gpu_rules(), "pool/", {}}, 100);
  model::Node n;
  n.name = "n";
  n.allocatable["nvidia.com/gpu"] = "1000";
  n.labels["nvidia.com/gpu.memory"] = "1000";
  n.annotations["pool/local"] = "1Gi";
  model::Node other;
  other.name = "m";
  other.allocatable["nvidia.com/gpu"] = "2";
  const model::Node* list[] = {&n, &other};
  nodes.observe(list);
  state::Snapshot snap = state.snapshot();
  const auto& s = snap.find("n")->supply;
  EXPECT_EQ(s.gpus.at("nvidia.com/gpu"), 8);
  EXPECT_EQ(s.gpu_memory_bytes.at("nvidia.com/gpu"), 80 * GiB);
  ASSERT_EQ(s.pools.size(), 1u);
  EXPECT_EQ(s.pools[0].capacity_bytes, std::int64_t{1} << 40);
  EXPECT_EQ(snap.find("m")->supply.gpus.at("nvidia.com/gpu"), 2);
}

TEST(Inventory, AliasesThatMultiplyTheDocumentSpendTheBudget) {
  // Known keys only: 600 nodes sharing one 2,000-label mapping through an alias are 1.2 million
  // visits from a 40 KB file.
  std::string yaml = "nodes:\n  - name: n0\n    labels: &l {";
  for (int i = 0; i < 2000; ++i) yaml += (i ? ", k" : "k") + std::to_string(i) + ": v";
  yaml += "}\n";
  for (int i = 1; i < 600; ++i) yaml += "  - {name: n" + std::to_string(i) + ", labels: *l}\n";
  ASSERT_LT(yaml.size(), 64u << 10);
  auto r = parse_inventory(yaml, "bomb", gpu_rules());
  ASSERT_FALSE(r) << "parsed " << r->size() << " nodes";
  EXPECT_NE(r.message().find("document too large (too many nodes, or aliases expanding)"), std::string::npos)
      << r.message();
  EXPECT_NE(r.message().find("bomb:"), std::string::npos) << r.message();
}

}  // namespace
}  // namespace extender::sources
