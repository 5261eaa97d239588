#include "extender/policy/preemption.h"

#include "extender/policy/fit.h"

namespace extender::policy {

bool eviction_makes_room(const model::PodDemand& pod, const model::NodeSupply& node, const model::NodeUsage& usage,
                         std::span<const model::Allocation> victims) {
  model::NodeUsage after = usage;
  for (const auto& v : victims) {
    model::Allocation gpus_only;
    gpus_only.gpus = v.gpus;
    after.subtract(gpus_only);
  }
  return check_fit(pod, node, after).verdict == Verdict::kFits;
}

}  // namespace extender::policy
