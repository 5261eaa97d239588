#include "extender/state/mixed_gpu_sources.h"

#include <utility>

namespace extender::state {

std::vector<MixedGpuSources> find_mixed_gpu_sources(const Snapshot& snapshot, const model::DraInventory& dra) {
  std::vector<MixedGpuSources> out;
  for (const auto& [name, entry] : dra.nodes) {
    const model::NodeDra& node_dra = *entry;
    if (node_dra.gpus.empty()) continue;
    const NodeState* node = snapshot.find(name);
    if (!node) continue;
    for (const auto& [resource, allocatable] : node->supply.gpus) {
      if (allocatable <= 0) continue;
      out.push_back({name, resource, allocatable, static_cast<std::int64_t>(node_dra.gpus.size())});
    }
  }
  return out;
}

std::string describe(const MixedGpuSources& m) {
  return "node " + m.node + " has GPUs from two sources: " + std::to_string(m.allocatable) + " " + m.resource +
         " allocatable from a device plugin and " + std::to_string(m.dra_gpus) +
         " GPUs published by a DRA driver; both may hand out the same GPUs. Run one of them per node "
         "(remove the device plugin from nodes that run the DRA driver, or the driver from the others)";
}

std::vector<MixedGpuSources> MixedGpuSourcesTracker::update(const std::vector<MixedGpuSources>& now) {
  std::set<std::pair<std::string, std::string>> open;
  std::vector<MixedGpuSources> started;
  for (const auto& m : now) {
    auto key = std::make_pair(m.node, m.resource);
    if (!open_.contains(key)) started.push_back(m);
    open.insert(std::move(key));
  }
  open_ = std::move(open);
  return started;
}

}  // namespace extender::state
