#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "extender/model/gpu_devices.h"

namespace extender::model {
namespace {

struct Row {
  std::string name;
  std::int64_t count, memory;
  GpuDeviceUsage use;
  std::int64_t unplaced;
  std::int64_t wholly_free;
};

TEST(WholeFreeDevices, CountsTheDevicesTheFreeListLeavesAtFullCapacity) {
  constexpr std::int64_t kGiB = std::int64_t{1} << 30;
  const std::vector<Row> rows = {
      {"nothing used", 8, 80 * kGiB, {}, 0, 8},
      {"one held whole", 8, 80 * kGiB, {{3, {1, 0, 0}}}, 0, 7},
      {"a share takes the device from whole use", 8, 80 * kGiB, {{0, {0, 10 * kGiB, 1}}}, 0, 7},
      {"a recorded device with nothing on it is free", 8, 80 * kGiB, {{2, {0, 0, 0}}}, 0, 8},
      {"unplaced whole GPUs take free devices", 8, 80 * kGiB, {{0, {1, 0, 0}}}, 3, 4},
      {"more unplaced than free devices", 4, 80 * kGiB, {{0, {1, 0, 0}}}, 9, 0},
      {"indices outside the node are ignored", 4, 80 * kGiB, {{-1, {1, 0, 0}}, {4, {1, 0, 0}}, {9, {1, 0, 0}}}, 0, 4},
      {"unknown memory: a share takes the device", 4, 0, {{1, {0, 0, 2}}}, 0, 3},
      {"unknown memory: bytes alone do not", 4, 0, {{1, {0, 5, 0}}}, 0, 4},
      {"no devices", 0, 80 * kGiB, {{0, {1, 0, 0}}}, 1, 0},
      {"negative unplaced counts as none", 2, kGiB, {}, -3, 2},
  };
  for (const Row& r : rows) {
    const GpuDevices devices{"nvidia.com/gpu", r.count, r.memory};
    EXPECT_EQ(whole_free_devices(devices, r.use, r.unplaced), r.wholly_free) << r.name;
    const auto free = device_free_bytes(devices, r.use, std::max<std::int64_t>(r.unplaced, 0));
    const std::int64_t capacity = r.memory > 0 ? r.memory : 1;
    EXPECT_EQ(std::count(free.begin(), free.end(), capacity), r.wholly_free) << r.name << " (the free list)";
  }
}

}  // namespace
}  // namespace extender::model
