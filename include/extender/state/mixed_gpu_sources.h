#pragma once
// Mixed GPU sources: a node whose GPUs come both from a device plugin (allocatable of a managed
// GPU resource) and from Dynamic Resource Allocation (GPUs in the DRA inventory). Two allocators
// then hand out the same GPUs unaware of each other: a misconfiguration, named (log, metric,
// /debug) as overcommit is named. find_mixed_gpu_sources() is pure; MixedGpuSourcesTracker turns
// successive findings into episodes, each reported once. Value types; the tracker is not
// thread-safe (one caller, e.g. a periodic check).
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "extender/model/dra_inventory.h"
#include "extender/state/cluster_state.h"

namespace extender::state {

struct MixedGpuSources {
  std::string node;
  std::string resource;          // the device-plugin resource, e.g. nvidia.com/gpu
  std::int64_t allocatable = 0;  // its allocatable
  std::int64_t dra_gpus = 0;     // GPUs of the node's complete DRA pools
  bool operator==(const MixedGpuSources&) const = default;
};

// Every such node and resource, in node then resource order.
std::vector<MixedGpuSources> find_mixed_gpu_sources(const Snapshot& snapshot, const model::DraInventory& dra);
// One line for the error log: the node, the figures, and the fix.
std::string describe(const MixedGpuSources& m);

class MixedGpuSourcesTracker {
 public:
  // The findings that start now (absent from the previous update).
  std::vector<MixedGpuSources> update(const std::vector<MixedGpuSources>& now);

 private:
  std::set<std::pair<std::string, std::string>> open_;  // node, resource
};

}  // namespace extender::state
