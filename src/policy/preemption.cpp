#include "extender/policy/preemption.h"

#include "extender/policy/fit.h"

namespace extender::policy {

bool eviction_makes_room(const model::PodDemand& pod, const model::NodeSupply& node, const model::NodeUsage& usage,
                         std::span<const model::Allocation> victims) {
  model::NodeUsage after = usage;
  for (const auto& v : victims) {
    model::Allocation freed;
    freed.gpus = v.gpus;
    freed.gpu_devices = v.gpu_devices;
    for (const auto& volume : v.volumes) {
      if (!volume.freed_with.empty()) freed.volumes.push_back(volume);
    }
    after.subtract(freed);
  }
  return check_fit(pod, node, after).verdict == Verdict::kFits;
}

}  // namespace extender::policy
