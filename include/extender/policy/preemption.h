#pragma once
// Preemption vetting: would evicting the scheduler's chosen victims on a node make room for the pod?
// Evicting a pod frees its GPUs (and the devices they hold) and its generic ephemeral volumes
// (deleted with it), never its persistent volumes. Pure.
#include <span>

#include "extender/model/demand.h"
#include "extender/model/supply.h"
#include "extender/model/usage.h"

namespace extender::policy {

// `usage` excludes the preemptor; `victims` are the allocations known for the victims on this node,
// their pod placements and their volume claims (victims whose demand is unknown free nothing and
// are simply absent). Of the volumes, only those freed with their pod (freed_with set) count.
bool eviction_makes_room(const model::PodDemand& pod, const model::NodeSupply& node, const model::NodeUsage& usage,
                         std::span<const model::Allocation> victims);

}  // namespace extender::policy
