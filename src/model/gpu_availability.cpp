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

std::optional<GpuResourceAvailability> gpu_resource_availability(const NodeSupply& node, const NodeUsage& usage,
                                                                 std::string_view resource) {
  GpuResourceAvailability r;
  r.resource = resource;
  bool reported = false;
  if (auto it = node.gpus.find(resource); it != node.gpus.end()) {
    reported = true;
    r.allocatable = it->second;
    const std::int64_t used = usage.gpus_used(resource);
    r.free = r.allocatable - used;
    if (resource == node.gpu_devices.resource && node.gpu_devices.count > 0) {
      const std::int64_t unplaced = std::max<std::int64_t>(used - usage.whole_gpu_holds(), 0);
      r.free = std::min(r.free, whole_free_devices(node.gpu_devices, usage.gpu_devices, unplaced));
    }
  }
  if (auto it = node.gpu_memory_bytes.find(resource); it != node.gpu_memory_bytes.end()) {
    reported = true;
    r.memory_bytes = it->second;
  }
  if (auto it = node.problems.find(resource); it != node.problems.end() && resource != kStorageSubject) {
    reported = true;
    r.problem = std::string_view(it->second);
  }
  if (!reported) return std::nullopt;
  return r;
}

GpuAvailability gpu_availability(const NodeSupply& node, const NodeUsage& usage) {
  std::vector<std::string_view> resources;  // views of the node's own map keys
  for (const auto& [resource, allocatable] : node.gpus) resources.push_back(resource);
  for (const auto& [resource, bytes] : node.gpu_memory_bytes) resources.push_back(resource);
  for (const auto& [subject, problem] : node.problems) {
    if (subject != kStorageSubject) resources.push_back(subject);
  }
  std::sort(resources.begin(), resources.end());
  resources.erase(std::unique(resources.begin(), resources.end()), resources.end());
  GpuAvailability out;
  out.reserve(resources.size());
  for (std::string_view resource : resources) out.push_back(*gpu_resource_availability(node, usage, resource));
  return out;
}

}  // namespace extender::model
