#include "extender/model/dra_inventory.h"

#include <gtest/gtest.h>

namespace extender::model {
namespace {

DraDevice device(std::string name, std::string type, std::int64_t index = -1, std::string memory = {}) {
  DraDevice d;
  d.name = std::move(name);
  if (!type.empty()) d.attributes["gpu.nvidia.com/type"] = {DraAttribute::Kind::kString, 0, false, type};
  if (index >= 0) d.attributes["gpu.nvidia.com/index"] = {DraAttribute::Kind::kInt, index, false, {}};
  if (!memory.empty()) d.capacity["gpu.nvidia.com/memory"] = *Quantity::parse(memory);
  return d;
}

ResourceSlice slice(std::string name, std::string node, std::vector<DraDevice> devices, std::int64_t generation = 1,
                    std::int64_t count = 1, std::string pool = {}, std::string driver = kNvidiaGpuDriver) {
  ResourceSlice s;
  s.name = std::move(name);
  s.driver = std::move(driver);
  s.node_name = node;
  s.pool = pool.empty() ? node : pool;
  s.pool_generation = generation;
  s.pool_slice_count = count;
  s.devices = std::move(devices);
  return s;
}

ResourceClaim claim(std::string name, std::vector<DeviceResult> results, std::vector<ClaimConsumer> consumers = {}) {
  ResourceClaim c;
  c.uid = "uid-" + name;
  c.namespace_name = "ml";
  c.name = std::move(name);
  c.allocated = true;
  c.results = std::move(results);
  c.reserved_for = std::move(consumers);
  return c;
}

DeviceResult result(std::string pool, std::string device, bool admin = false) {
  return {"r", kNvidiaGpuDriver, std::move(pool), std::move(device), admin};
}

std::vector<std::string> names(const std::vector<DraNodeDevice>& devices) {
  std::vector<std::string> out;
  for (const auto& d : devices) out.push_back(d.device.name);
  return out;
}

TEST(DraInventory, GpusWithIndexAndMemoryPartitionsApart) {
  auto inv = build_dra_inventory({slice("s1", "n1",
                                        {device("gpu-1", "gpu", 1, "81559Mi"), device("gpu-0", "gpu", 0, "81559Mi"),
                                         device("gpu-1-mig-9-4-2", "mig", -1, "40Gi"), device("plain", "")})},
                                 {});
  const NodeDra* n1 = inv.node("n1");
  ASSERT_NE(n1, nullptr);
  EXPECT_EQ(names(n1->gpus), (std::vector<std::string>{"plain", "gpu-0", "gpu-1"})) << "by index; no index sorts first";
  EXPECT_EQ(n1->gpus[1].index, 0);
  EXPECT_EQ(n1->gpus[1].memory_bytes, 81559ll << 20);
  EXPECT_EQ(n1->gpus[1].type, "gpu");
  EXPECT_EQ(n1->gpus[0].index, -1);
  EXPECT_EQ(n1->gpus[0].memory_bytes, 0);
  EXPECT_EQ(names(n1->partitions), (std::vector<std::string>{"gpu-1-mig-9-4-2"}));
  EXPECT_EQ(n1->partitions[0].type, "mig");
  EXPECT_EQ(n1->allocated_gpus(), 0);
  EXPECT_EQ(inv.node("n2"), nullptr);
}

TEST(DraInventory, NodesOfTheSameHardwareShareASelectorKeyWhateverTheirNamesAndAllocation) {
  auto gpus = [](std::string memory, std::string last_type = "gpu") {
    return std::vector<DraDevice>{device("gpu-0", "gpu", 0, memory), device("gpu-1", last_type, 1, memory)};
  };
  std::vector<DraDevice> renamed = gpus("80Gi");
  renamed[0].name = "other-name";
  const DraInventory inv =
      build_dra_inventory({slice("a", "a", gpus("80Gi")), slice("b", "b", gpus("80Gi")),
                           slice("renamed", "renamed", renamed), slice("smaller", "smaller", gpus("40Gi")),
                           slice("mig", "mig", gpus("80Gi", "mig")), slice("bigger", "bigger", gpus("81920Mi"))},
                          {claim("held", {{"r", kNvidiaGpuDriver, "b", "gpu-0", false}})});
  const auto key = [&](const char* n) { return inv.node(n)->selector_key; };
  EXPECT_EQ(key("a"), key("b")) << "allocation is not read by selectors";
  EXPECT_EQ(key("a"), key("renamed")) << "device names are not read by selectors";
  EXPECT_NE(key("a"), key("smaller")) << "capacity";
  EXPECT_NE(key("a"), key("mig")) << "attributes";
  EXPECT_NE(key("smaller"), key("bigger"));
  EXPECT_EQ(key("a"), key("bigger")) << "80Gi and 81920Mi are one quantity";
}

TEST(DraInventory, OnlyNodeLocalSlicesOfConfiguredDrivers) {
  ResourceSlice network = slice("s2", "", {device("nic", "gpu", 0)});
  network.pool = "fabric";
  auto inv = build_dra_inventory({slice("s1", "n1", {device("gpu-0", "gpu", 0)}),
                                  slice("s3", "n1", {device("x", "gpu", 0)}, 1, 1, "other", "gpu.amd.com"), network},
                                 {});
  EXPECT_EQ(inv.nodes.size(), 1u);
  EXPECT_EQ(names(inv.node("n1")->gpus), (std::vector<std::string>{"gpu-0"}));

  DraRules both;
  both.drivers = {kNvidiaGpuDriver, "gpu.amd.com"};
  inv = build_dra_inventory({slice("s1", "n1", {device("gpu-0", "gpu", 0)}),
                             slice("s3", "n1", {device("x", "", 0)}, 1, 1, "other", "gpu.amd.com")},
                            {}, both);
  EXPECT_EQ(inv.node("n1")->gpus.size(), 2u);
}

TEST(DraInventory, IncompletePoolsAreNotCounted) {
  struct Case {
    const char* what;
    std::vector<ResourceSlice> slices;
    std::size_t gpus;
    bool incomplete;
  };
  const std::vector<Case> table = {
      {"one of two slices", {slice("a", "n1", {device("gpu-0", "gpu", 0)}, 2, 2)}, 0, true},
      {"both slices",
       {slice("a", "n1", {device("gpu-0", "gpu", 0)}, 2, 2), slice("b", "n1", {device("gpu-1", "gpu", 1)}, 2, 2)},
       2,
       false},
      {"an older generation is ignored",
       {slice("a", "n1", {device("gpu-0", "gpu", 0)}, 3, 1), slice("old", "n1", {device("gpu-9", "gpu", 9)}, 2, 1)},
       1,
       false},
      {"the new generation not all seen",
       {slice("a", "n1", {device("gpu-0", "gpu", 0)}, 3, 2), slice("old", "n1", {device("gpu-9", "gpu", 9)}, 2, 1)},
       0,
       true},
      {"more slices than announced",
       {slice("a", "n1", {device("gpu-0", "gpu", 0)}, 1, 1), slice("b", "n1", {device("gpu-1", "gpu", 1)}, 1, 1)},
       0,
       true},
      {"a device listed twice",
       {slice("a", "n1", {device("gpu-0", "gpu", 0)}, 1, 2), slice("b", "n1", {device("gpu-0", "gpu", 0)}, 1, 2)},
       0,
       true},
  };
  for (const auto& c : table) {
    auto inv = build_dra_inventory(c.slices, {});
    const NodeDra* n1 = inv.node("n1");
    ASSERT_NE(n1, nullptr) << c.what;
    EXPECT_EQ(n1->gpus.size(), c.gpus) << c.what;
    EXPECT_EQ(!n1->incomplete_pools.empty(), c.incomplete) << c.what;
  }
  auto inv = build_dra_inventory({slice("a", "n1", {device("gpu-0", "gpu", 0)}, 2, 2)}, {});
  EXPECT_NE(inv.node("n1")->incomplete_pools[0].find("gpu.nvidia.com/n1: 1 of 2 slices"), std::string::npos)
      << inv.node("n1")->incomplete_pools[0];
}

TEST(DraInventory, UsageCountsEachAllocatedDeviceOnce) {
  const std::vector<ResourceSlice> slices = {slice(
      "s1", "n1",
      {device("gpu-0", "gpu", 0), device("gpu-1", "gpu", 1), device("gpu-2", "gpu", 2), device("gpu-3-mig-1", "mig")})};
  auto inv = build_dra_inventory(
      slices, {claim("shared", {result("n1", "gpu-0")}, {{"pods", "a", "1"}, {"pods", "b", "2"}, {"pods", "c", "3"}}),
               claim("again", {result("n1", "gpu-0")}), claim("monitor", {result("n1", "gpu-1", true)}),
               claim("mig", {result("n1", "gpu-3-mig-1")}), claim("gone", {result("n9", "gpu-0")})});
  const NodeDra* n1 = inv.node("n1");
  EXPECT_EQ(n1->allocated_gpus(), 1)
      << "one device, however many claims and consumers name it; admin access holds nothing";
  EXPECT_TRUE(n1->gpus[0].allocated);
  EXPECT_FALSE(n1->gpus[1].allocated);
  EXPECT_TRUE(n1->partitions[0].allocated) << "a partition is marked, never counted as a GPU";
  EXPECT_EQ(inv.unmatched_results, (std::vector<std::string>{"ml/gone: gpu.nvidia.com/n9/gpu-0"}));

  ResourceClaim pending = claim("pending", {});
  pending.allocated = false;
  ResourceClaim terminating = claim("terminating", {result("n1", "gpu-2")});
  terminating.terminating = true;
  inv = build_dra_inventory(slices, {pending, terminating});
  EXPECT_EQ(inv.node("n1")->allocated_gpus(), 1) << "a terminating claim still holds its device";
  EXPECT_TRUE(inv.node("n1")->gpus[2].allocated);
}

TEST(DraInventory, ResultsOfOtherDriversAndIncompletePools) {
  ResourceClaim other = claim("other", {{"r", "gpu.amd.com", "n1", "gpu-0", false}});
  auto inv = build_dra_inventory({slice("s1", "n1", {device("gpu-0", "gpu", 0)})}, {other});
  EXPECT_EQ(inv.node("n1")->allocated_gpus(), 0);
  EXPECT_TRUE(inv.unmatched_results.empty()) << "other drivers' results are not ours to match";
  inv = build_dra_inventory({slice("s1", "n1", {device("gpu-0", "gpu", 0)}, 1, 2)},
                            {claim("c", {result("n1", "gpu-0")})});
  EXPECT_EQ(inv.unmatched_results.size(), 1u) << "a device of an incomplete pool is not counted";
}

}  // namespace
}  // namespace extender::model
