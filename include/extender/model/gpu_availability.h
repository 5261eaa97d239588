#pragma once
// GpuAvailability: one node's GPU resources as a pod asking whole GPUs sees them, for each resource
// the node offers, reports memory for, or reports an unreadable value for: allocatable, free (not
// in use, and for the node's device resource no more than the devices with nothing on them),
// memory per GPU, the problem. Computed from supply and usage by gpu_availability(); the cluster
// state keeps the one of each node's placed usage, so that filter reads a few numbers per node.
// Names and problems are views into the NodeSupply it was computed from, which must outlive it.
// Value types; pure; thread-safe once built.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "extender/model/supply.h"
#include "extender/model/usage.h"

namespace extender::model {

struct GpuResourceAvailability {
  std::string_view resource;
  std::int64_t allocatable = 0;
  std::int64_t free = 0;                     // may be negative when usage exceeds allocatable
  std::optional<std::int64_t> memory_bytes;  // per GPU, when the node reports it
  std::optional<std::string_view> problem;   // the unreadable value the node reports, if any
  bool operator==(const GpuResourceAvailability&) const = default;
};

// By resource name.
using GpuAvailability = std::vector<GpuResourceAvailability>;

GpuAvailability gpu_availability(const NodeSupply& node, const NodeUsage& usage);
GpuAvailability gpu_availability(NodeSupply&& node, const NodeUsage& usage) = delete;  // would view a temporary

// The figures of one resource, as gpu_availability() gives them, without building the others;
// nullopt when the node neither offers it nor reports anything of it. `resource` is viewed.
std::optional<GpuResourceAvailability> gpu_resource_availability(const NodeSupply& node, const NodeUsage& usage,
                                                                 std::string_view resource);

// The resource's figures among `gpus`; null when the node neither offers it nor reports anything of it.
const GpuResourceAvailability* find_gpu_resource(std::span<const GpuResourceAvailability> gpus,
                                                 std::string_view resource);

}  // namespace extender::model
