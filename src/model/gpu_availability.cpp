#include "extender/model/gpu_availability.h"

#include <algorithm>

namespace extender::model {

const GpuResourceAvailability* find_gpu_resource(std::span<const GpuResourceAvailability> gpus,
                                                 std::string_view resource) {
  for (const auto& r : gpus) {
    if (r.resource == resource) return &r;
  }
  return nullptr;
}

GpuAvailability gpu_availability(const NodeSupply& node, const NodeUsage& usage) {
  GpuAvailability out;
  auto entry = [&](std::string_view resource) -> GpuResourceAvailability& {
    auto at = std::lower_bound(out.begin(), out.end(), resource,
                               [](const GpuResourceAvailability& r, std::string_view name) { return r.resource < name; });
    if (at == out.end() || at->resource != resource) {
      GpuResourceAvailability added;
      added.resource = resource;
      at = out.insert(at, added);
    }
    return *at;
  };
  for (const auto& [resource, allocatable] : node.gpus) {
    GpuResourceAvailability& r = entry(resource);
    r.allocatable = allocatable;
    const std::int64_t used = usage.gpus_used(resource);
    r.free = allocatable - used;
    if (resource == node.gpu_devices.resource && node.gpu_devices.count > 0) {
      const std::int64_t unplaced = std::max<std::int64_t>(used - usage.whole_gpu_holds(), 0);
      r.free = std::min(r.free, whole_free_devices(node.gpu_devices, usage.gpu_devices, unplaced));
    }
  }
  for (const auto& [resource, bytes] : node.gpu_memory_bytes) entry(resource).memory_bytes = bytes;
  for (const auto& [subject, problem] : node.problems) {
    if (subject != kStorageSubject) entry(subject).problem = std::string_view(problem);
  }
  return out;
}

}  // namespace extender::model
