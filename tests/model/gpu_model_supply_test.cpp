#include "extender/model/gpu_model_supply.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace extender::model {
namespace {

NodeSupply node(std::string model, std::int64_t gpus) {
  NodeSupply n;
  n.name = "n-" + model;
  n.gpu_model = std::move(model);
  n.gpu_devices = {"nvidia.com/gpu", gpus, 0};
  return n;
}

TEST(GpuModelSupply, CountsEachNodesDevicesUnderItsModel) {
  GpuModelSupply s;
  s.add(node("T4", 2));
  s.add(node("T4", 4));
  s.add(node("G2", 8));
  s.add(node("", 8));
  s.add(node("A10", 0));
  EXPECT_EQ(s.total, 22) << "a node without a model counts in the total only";
  EXPECT_EQ(s.by_model, (std::map<std::string, std::int64_t, std::less<>>{{"G2", 8}, {"T4", 6}}))
      << "a node without devices counts nowhere";
  struct Case {
    const char* what;
    std::vector<std::string> models;
    std::int64_t gpus;
  };
  const std::vector<Case> cases = {
      {"one model", {"T4"}, 6},
      {"two models add up", {"G2", "T4"}, 14},
      {"a model no node has", {"P100"}, 0},
      {"none named", {}, 0},
  };
  for (const auto& c : cases) EXPECT_EQ(s.of(c.models), c.gpus) << c.what;
}

TEST(GpuModelSupply, GpusAddedByModelCountAsANodesDevicesDo) {
  GpuModelSupply by_node;
  by_node.add(node("T4", 2));
  by_node.add(node("", 8));
  GpuModelSupply by_model;
  by_model.add_gpus("T4", 2);
  by_model.add_gpus("", 8);
  by_model.add_gpus("A10", 0);
  EXPECT_EQ(by_model, by_node);
}

TEST(GpuModelSupply, RemovingANodeUndoesItsAdd) {
  GpuModelSupply s;
  s.add(node("T4", 2));
  const GpuModelSupply one = s;
  s.add(node("G2", 8));
  s.remove(node("G2", 8));
  EXPECT_EQ(s, one) << "a model whose last node goes leaves no zero entry";
  s.remove(node("T4", 2));
  EXPECT_EQ(s, GpuModelSupply{});
  s.remove(node("P100", 2));
  EXPECT_EQ(s.by_model.count("P100"), 0u) << "removing what was never added leaves no entry";
}

}  // namespace
}  // namespace extender::model
