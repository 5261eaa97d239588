#pragma once
// Pods nominated to a node (status.nominatedNodeName: a preemptor waiting for its victims, a pod
// kube-scheduler expects to bind there once PreBind is done) are, for kube-scheduler's filters,
// already on that node for every pod of lower or equal priority (addNominatedPods). /filter does
// the same for what the daemon accounts: a passing node where the pod no longer fits once the pods
// nominated there (not the pod itself, of equal or higher priority, not already in the ledger) are
// counted is refused (FailedNodes). Only their GPU demand counts here: a nominated pod's volumes
// are already held where the daemon accounts them once kube-scheduler publishes anything of it
// (PreBind's selected-node on its claims, its csi-baremetal reservation), and counting them again
// refused every node to a burst of csi-baremetal pods waiting at PreBind. Pure; private to the engine.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "extender/common/clock.h"
#include "extender/model/demand.h"
#include "extender/model/pod.h"
#include "extender/policy/dra_fit.h"
#include "extender/policy/fit.h"
#include "extender/state/cluster_state.h"
#include "extender/wire/results.h"

namespace extender::engine {

// A pod's demand, or nullopt when it cannot be computed (the pod is then not counted).
using DemandOf = std::function<std::optional<model::PodDemand>(const model::Pod&)>;

// Removes from `passed` (indices into `names`) the nodes where `demand` does not fit on top of the
// pods in `nominated` counted as above, recording each in r.failed with the reason.
void refuse_where_nominated_fill(const model::Pod& pod, const model::PodDemand& demand,
                                 std::span<const model::Pod> nominated, const DemandOf& demand_of,
                                 const policy::DraFit* dra, const state::Snapshot& snapshot,
                                 std::span<const std::string_view> names, std::vector<std::uint32_t>& passed,
                                 wire::FilterResult& r, const policy::GpuPlacement& gpu, TimePoint now);

}  // namespace extender::engine
