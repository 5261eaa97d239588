#include "extender/server/dra_view.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace extender::server {
namespace {

using model::DraAttribute;
using nlohmann::json;

model::DraDevice device(const std::string& name, const std::string& type, std::int64_t index) {
  model::DraDevice d;
  d.name = name;
  d.attributes["gpu.nvidia.com/type"] = {DraAttribute::Kind::kString, 0, false, type};
  d.attributes["gpu.nvidia.com/index"] = {DraAttribute::Kind::kInt, index, false, {}};
  d.capacity["gpu.nvidia.com/memory"] = *Quantity::parse("80Gi");
  return d;
}

model::ResourceSlice slice(const std::string& node, std::vector<model::DraDevice> devices, std::int64_t count = 1) {
  model::ResourceSlice s;
  s.name = node + "-slice";
  s.driver = model::kNvidiaGpuDriver;
  s.node_name = node;
  s.pool = node;
  s.pool_generation = 1;
  s.pool_slice_count = count;
  s.devices = std::move(devices);
  return s;
}

TEST(DraView, NamesDevicesPartitionsIncompletePoolsMixedNodesAndUnjudgedSelectors) {
  model::ResourceClaim held;
  held.uid = "c";
  held.namespace_name = "ml";
  held.name = "held";
  held.allocated = true;
  held.results = {{"gpus", model::kNvidiaGpuDriver, "dra", "gpu-1", false},
                  {"gpus", model::kNvidiaGpuDriver, "dra", "gone", false}};
  const model::DraInventory inv = model::build_dra_inventory(
      {slice("dra", {device("gpu-0", "gpu", 0), device("gpu-1", "gpu", 1), device("mig-0", "mig", 0)}),
       slice("half", {device("gpu-0", "gpu", 0)}, 2), slice("both", {device("gpu-0", "gpu", 0)})},
      {held});
  state::ClusterState st;
  model::NodeSupply both;
  both.name = "both";
  both.gpus["nvidia.com/gpu"] = 1;
  st.upsert_nodes({both});
  const std::vector<model::DeviceClass> classes{
      {"gpu.nvidia.com", {"device.driver == 'gpu.nvidia.com'"}, "nvidia.com/gpu"},
      {"odd", {"device.attributes['gpu.nvidia.com'].productName.matches('H100')"}, ""}};

  const json j = json::parse(render_dra(&inv, classes, st.snapshot()));
  EXPECT_TRUE(j.at("served").get<bool>());
  std::map<std::string, json> nodes;
  for (const auto& n : j.at("nodes")) nodes[n.at("name").get<std::string>()] = n;
  ASSERT_TRUE(nodes.contains("dra")) << j.dump(2);
  EXPECT_EQ(nodes["dra"].at("gpus"), 2);
  EXPECT_EQ(nodes["dra"].at("allocated"), 1);
  EXPECT_EQ(nodes["dra"].at("devices")[1].at("device"), "gpu-1");
  EXPECT_TRUE(nodes["dra"].at("devices")[1].at("allocated").get<bool>());
  EXPECT_EQ(nodes["dra"].at("devices")[0].at("memory"), "80 GiB");
  ASSERT_EQ(nodes["dra"].at("partitions_not_counted").size(), 1u);
  EXPECT_EQ(nodes["dra"].at("partitions_not_counted")[0].at("type"), "mig");
  EXPECT_FALSE(nodes["dra"].contains("mixed_gpu_sources"));
  ASSERT_TRUE(nodes.contains("half")) << j.dump(2);
  EXPECT_EQ(nodes["half"].at("incomplete_pools_not_counted").size(), 1u);
  ASSERT_EQ(nodes["both"].at("mixed_gpu_sources").size(), 1u);
  EXPECT_NE(nodes["both"].at("mixed_gpu_sources")[0].get<std::string>().find("two sources"), std::string::npos);
  ASSERT_EQ(j.at("device_classes").size(), 2u);
  EXPECT_FALSE(j.at("device_classes")[0].contains("unjudged_selectors"));
  ASSERT_EQ(j.at("device_classes")[1].at("unjudged_selectors").size(), 1u);
  EXPECT_EQ(j.at("results_naming_no_counted_device").size(), 1u);
}

TEST(DraView, SaysWhenDraIsNotServed) {
  const json j = json::parse(render_dra(nullptr, {}, state::Snapshot()));
  EXPECT_FALSE(j.at("served").get<bool>());
  EXPECT_FALSE(j.contains("nodes"));
}

}  // namespace
}  // namespace extender::server
