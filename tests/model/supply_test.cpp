#include "extender/model/supply.h"

#include <gtest/gtest.h>

#include "extender/model/usage.h"

namespace extender::model {
namespace {

SupplyRules rules() {
  return {{{"nvidia.com/gpu", "nvidia.com/gpu.memory", 1 << 20}, {"amd.com/gpu", "amd.com/gpu.vram", 1}},
          "scheduler-extender.io/pool.",
          {}};
}

TEST(SupplyFromNode, ReadsGpusMemoryAndPools) {
  Node node;
  node.name = "n1";
  node.allocatable = {{"nvidia.com/gpu", "8"}, {"amd.com/gpu", "2"}, {"cpu", "95500m"}};
  node.labels = {{"nvidia.com/gpu.memory", "81559"}, {"amd.com/gpu.vram", "64Gi"}};
  node.annotations = {{"scheduler-extender.io/pool.nvme", "nvme0=1Ti,nvme1=500Gi"},
                      {"scheduler-extender.io/pool.hdd", "4Ti"},
                      {"other", "x"}};
  NodeSupply s = supply_from_node(node, rules());
  EXPECT_EQ(s.gpus.at("nvidia.com/gpu"), 8);
  EXPECT_EQ(s.gpus.at("amd.com/gpu"), 2);
  EXPECT_EQ(s.gpu_memory_bytes.at("nvidia.com/gpu"), std::int64_t{81559} << 20);
  EXPECT_EQ(s.gpu_memory_bytes.at("amd.com/gpu"), std::int64_t{64} << 30);
  ASSERT_EQ(s.pools.size(), 2u);
  const Pool* nvme = s.find_pool("nvme");
  ASSERT_NE(nvme, nullptr);
  EXPECT_EQ(nvme->capacity_bytes, (std::int64_t{1} << 40) + (std::int64_t{500} << 30));
  ASSERT_EQ(nvme->devices.size(), 2u);
  EXPECT_EQ(nvme->devices[1].name, "nvme1");
  EXPECT_EQ(s.find_pool("hdd")->capacity_bytes, std::int64_t{4} << 40);
  EXPECT_TRUE(s.find_pool("hdd")->devices.empty());
  EXPECT_TRUE(s.problems.empty());
}

TEST(SupplyFromNode, ReadsWhatKubeSchedulersNodeFiltersRead) {
  Node node;
  node.name = "n1";
  node.allocatable = {{"cpu", "95500m"}, {"memory", "512Gi"}, {"pods", "110"}};
  node.labels = {{"team", "a"}};
  node.taints = {{"team", "a", "NoSchedule"}};
  node.unschedulable = true;
  NodeSupply s = supply_from_node(node, rules());
  EXPECT_EQ(s.cpu_milli, 95500);
  EXPECT_EQ(s.memory_bytes, std::int64_t{512} << 30);
  EXPECT_EQ(s.pods, 110);
  EXPECT_EQ(s.labels, node.labels);
  EXPECT_EQ(s.taints, node.taints);
  EXPECT_TRUE(s.unschedulable);
  EXPECT_TRUE(s.taints_known);
  EXPECT_TRUE(s.labels_known);

  node.labels_complete = false;
  node.allocatable["pods"] = "many";
  s = supply_from_node(node, rules());
  EXPECT_FALSE(s.labels_known) << "a decoder kept only some labels";
  EXPECT_EQ(s.pods, 0) << "unreadable: unknown";
  EXPECT_FALSE(NodeSupply{}.taints_known) << "an inventory node's taints are not known";
}

TEST(SupplyFromNode, UnreadableValuesBecomeProblemsOfTheirSubject) {
  Node node;
  node.name = "n1";
  node.allocatable = {{"nvidia.com/gpu", "eight"}};
  node.labels = {{"amd.com/gpu.vram", "-1"}};
  node.annotations = {{"scheduler-extender.io/pool.nvme", "nvme0=,nvme1=1Ti"}};
  NodeSupply s = supply_from_node(node, rules());
  EXPECT_TRUE(s.gpus.empty());
  EXPECT_TRUE(s.problems.count("nvidia.com/gpu"));
  EXPECT_TRUE(s.problems.count("amd.com/gpu"));
  EXPECT_TRUE(s.problems.count(std::string(kStorageSubject)));
  EXPECT_TRUE(s.pools.empty());
}

TEST(ParsePoolSpec, Table) {
  struct Case {
    const char* spec;
    bool ok;
    std::int64_t capacity;
    std::size_t devices;
  };
  const Case cases[] = {
      {"2Ti", true, std::int64_t{2} << 40, 0},
      {"a=1Gi", true, std::int64_t{1} << 30, 1},
      {"a=1Gi,b=2Gi", true, std::int64_t{3} << 30, 2},
      {"=1Gi", false, 0, 0},
      {"a=1Gi,", false, 0, 0},
      {"a", false, 0, 0},
      {"a=x", false, 0, 0},
      {"a=7Ei,b=7Ei", false, 0, 0},
  };
  for (const auto& c : cases) {
    auto p = parse_pool_spec("p", c.spec);
    ASSERT_EQ(static_cast<bool>(p), c.ok) << c.spec;
    if (!c.ok) continue;
    EXPECT_EQ(p->capacity_bytes, c.capacity) << c.spec;
    EXPECT_EQ(p->devices.size(), c.devices) << c.spec;
  }
}

TEST(NodeUsage, AddsAndSubtractsAllocations) {
  Allocation a;
  a.gpus["nvidia.com/gpu"] = 2;
  a.volumes = {{"v1", "nvme", "d0", 100, "", ""}, {"v2", "hdd", "", 50, "", ""}};
  NodeUsage u;
  u.add(a);
  u.add(a);
  EXPECT_EQ(u.gpus_used("nvidia.com/gpu"), 4);
  EXPECT_EQ(u.pool_used("nvme"), 200);
  EXPECT_EQ(u.device_used("nvme", "d0"), 200);
  EXPECT_EQ(u.pool_used("hdd"), 100);
  EXPECT_EQ(u.volumes, 4);
  u.subtract(a);
  u.subtract(a);
  EXPECT_EQ(u, NodeUsage{});
}

// A pool's devices read in one walk give each device what a lookup of it gives, among pools whose
// names share a prefix and devices that hold nothing.
TEST(PoolDeviceUse, GivesWhatALookupOfEachDeviceGives) {
  Allocation a;
  a.volumes = {{"v1", "csi-baremetal:SSD", "ac-2", 100, "", ""},   {"v2", "csi-baremetal:SSD", "ac-10", 7, "", ""},
               {"v3", "csi-baremetal:SSDLVG", "ac-3", 50, "", ""}, {"v4", "csi-baremetal:SS", "ac-2", 9, "", ""},
               {"v5", "csi-baremetal:SSD", "ac-2", 1, "", ""},     {"v6", "hdd", "", 5, "", ""}};
  NodeUsage u;
  u.add(a);
  std::size_t held = 0;
  for (const char* pool :
       {"csi-baremetal:SSD", "csi-baremetal:SSDLVG", "csi-baremetal:SS", "csi-baremetal", "hdd", "none"}) {
    const PoolDeviceUse on_devices(u, pool);
    for (const char* device : {"ac-2", "ac-10", "ac-3", "ac-1", "", "ac-20"}) {
      EXPECT_EQ(on_devices.used(device), u.device_used(pool, device)) << pool << " " << device;
      if (on_devices.used(device) > 0) ++held;
    }
  }
  EXPECT_EQ(held, 4u) << "every device that holds bytes is found";
  EXPECT_EQ(PoolDeviceUse(u, "csi-baremetal:SSD").used("ac-2"), 101);
}

}  // namespace
}  // namespace extender::model
