#include "extender/model/gpu_devices.h"

#include <algorithm>

#include "extender/model/supply.h"

namespace extender::model {

std::vector<std::int64_t> device_free_bytes(const GpuDevices& devices, const GpuDeviceUsage& use,
                                            std::int64_t unplaced_whole) {
  std::vector<std::int64_t> free;
  device_free_bytes(devices, use, unplaced_whole, free);
  return free;
}

void device_free_bytes(const GpuDevices& devices, const GpuDeviceUsage& use, std::int64_t unplaced_whole,
                       std::vector<std::int64_t>& free) {
  const std::int64_t capacity = devices.memory_bytes > 0 ? devices.memory_bytes : 1;
  const auto count = static_cast<std::size_t>(std::clamp<std::int64_t>(devices.count, 0, 1 << 16));
  free.assign(count, capacity);
  for (const auto& [index, u] : use) {
    if (index < 0 || static_cast<std::size_t>(index) >= count) continue;
    if (u.whole > 0) {
      free[index] = 0;
    } else if (devices.memory_bytes > 0) {
      free[index] = std::max<std::int64_t>(capacity - u.bytes, 0);
    } else if (u.shares > 0) {
      free[index] = 0;
    }
  }
  for (std::size_t i = count; i-- > 0 && unplaced_whole > 0;) {
    if (free[i] == capacity) {
      free[i] = 0;
      --unplaced_whole;
    }
  }
}

std::int64_t whole_free_devices(const GpuDevices& devices, const GpuDeviceUsage& use, std::int64_t unplaced_whole) {
  const std::int64_t count = std::clamp<std::int64_t>(devices.count, 0, 1 << 16);
  std::int64_t taken = 0;
  for (const auto& [index, u] : use) {
    if (index < 0 || index >= count) continue;
    if (u.whole > 0 || (devices.memory_bytes > 0 ? u.bytes > 0 : u.shares > 0)) ++taken;
  }
  return std::max<std::int64_t>(count - taken - std::max<std::int64_t>(unplaced_whole, 0), 0);
}

GpuDevices derive_gpu_devices(const NodeSupply& node, const std::vector<GpuResourceRule>& gpus,
                              const GpuShareRule& share) {
  GpuDevices d;
  auto count = node.gpus.find(share.count_resource);
  auto total = node.gpus.find(share.memory_resource);
  if (count != node.gpus.end() && count->second > 0 && total != node.gpus.end() && total->second > 0 &&
      total->second <= INT64_MAX / share.unit_bytes) {
    d.resource = share.memory_resource;
    d.count = count->second;
    d.memory_bytes = total->second / count->second * share.unit_bytes;
    return d;
  }
  for (const auto& rule : gpus) {
    auto it = node.gpus.find(rule.name);
    if (it == node.gpus.end() || it->second <= 0) continue;
    d.resource = rule.name;
    d.count = it->second;
    auto mem = node.gpu_memory_bytes.find(rule.name);
    d.memory_bytes = mem == node.gpu_memory_bytes.end() ? 0 : mem->second;
    return d;
  }
  return d;
}

}  // namespace extender::model
