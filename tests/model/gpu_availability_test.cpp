#include "extender/model/gpu_availability.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace extender::model {
namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

NodeSupply eight_gpu_node() {
  NodeSupply n;
  n.name = "gpu-a";
  n.gpus["nvidia.com/gpu"] = 8;
  n.gpu_memory_bytes["nvidia.com/gpu"] = 80 * kGiB;
  n.gpu_devices = {"nvidia.com/gpu", 8, 80 * kGiB};
  return n;
}

TEST(GpuAvailability, FreeIsWhatIsNotInUseAndNoMoreThanTheDevicesWithNothingOnThem) {
  struct Row {
    std::string name;
    NodeUsage usage;
    std::int64_t free;
  };
  NodeUsage whole_recorded;
  whole_recorded.gpus["nvidia.com/gpu"] = 2;
  whole_recorded.gpu_devices = {{0, {1, 0, 0}}, {5, {1, 0, 0}}};
  NodeUsage whole_unrecorded;
  whole_unrecorded.gpus["nvidia.com/gpu"] = 3;
  NodeUsage a_share;
  a_share.gpu_devices = {{2, {0, 10 * kGiB, 1}}};
  NodeUsage over;
  over.gpus["nvidia.com/gpu"] = 11;
  const std::vector<Row> rows = {
      {"nothing in use", {}, 8},
      {"whole GPUs on recorded devices", whole_recorded, 6},
      {"whole GPUs without a device", whole_unrecorded, 5},
      {"a share takes its device from whole use", a_share, 7},
      {"more in use than allocatable", over, -3},
  };
  const NodeSupply node = eight_gpu_node();
  for (const Row& r : rows) {
    const GpuAvailability got = gpu_availability(node, r.usage);
    ASSERT_EQ(got.size(), 1u) << r.name;
    EXPECT_EQ(got[0].resource, "nvidia.com/gpu") << r.name;
    EXPECT_EQ(got[0].allocatable, 8) << r.name;
    EXPECT_EQ(got[0].free, r.free) << r.name;
    EXPECT_EQ(got[0].memory_bytes, 80 * kGiB) << r.name;
    EXPECT_FALSE(got[0].problem) << r.name;
  }
}

TEST(GpuAvailability, EveryResourceOfferedOrReportedOnInNameOrder) {
  NodeSupply n = eight_gpu_node();
  n.gpus["amd.com/gpu"] = 2;  // not the device resource: free is allocatable less used
  n.gpu_memory_bytes["example.com/gpu"] = 16 * kGiB;
  n.problems["vendor.io/gpu"] = "allocatable \"x\"";
  n.problems[std::string(kStorageSubject)] = "pool annotation";
  NodeUsage u;
  u.gpus["amd.com/gpu"] = 1;
  const GpuAvailability got = gpu_availability(n, u);
  ASSERT_EQ(got.size(), 4u) << "storage problems are not GPU figures";
  EXPECT_EQ(got[0].resource, "amd.com/gpu");
  EXPECT_EQ(got[0].free, 1);
  EXPECT_FALSE(got[0].memory_bytes);
  EXPECT_EQ(got[1].resource, "example.com/gpu");
  EXPECT_EQ(got[1].allocatable, 0);
  EXPECT_EQ(got[1].memory_bytes, 16 * kGiB);
  EXPECT_EQ(got[2].resource, "nvidia.com/gpu");
  EXPECT_EQ(got[2].free, 8);
  EXPECT_EQ(got[3].resource, "vendor.io/gpu");
  EXPECT_EQ(got[3].problem, "allocatable \"x\"");
  EXPECT_EQ(find_gpu_resource(got, "vendor.io/gpu"), &got[3]);
  EXPECT_EQ(find_gpu_resource(got, "intel.com/gpu"), nullptr);
  const NodeSupply no_gpus;
  EXPECT_TRUE(gpu_availability(no_gpus, u).empty()) << "a node without GPUs";
}

}  // namespace
}  // namespace extender::model
