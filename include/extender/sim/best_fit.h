#pragma once
// Best-fit: the reference policy the FGD paper compares with, computed by the simulator (the
// daemon does not offer it). The node the pod leaves least free ranks first: its free CPU after
// the placement over its allocatable CPU, plus its free GPU after over its GPUs (0 without
// GPUs). Fine-grained, so nodes rarely tie. Ranked as the fragmentation policy ranks: the best
// nodes score 10, the next distinct value 9, and so on down to 0. A node whose GPUs come from DRA
// counts them as prioritize reads them (policy::DraFit::scoring_view). Pure.
#include <cstdint>
#include <string>
#include <vector>

#include "extender/model/demand.h"
#include "extender/policy/dra_fit.h"
#include "extender/state/cluster_state.h"

namespace extender::sim {

// One score per name, in order; a name the snapshot lacks scores 0. `dra`: the DRA view built for
// `pod`, or null when no node's GPUs come from DRA.
std::vector<std::int64_t> best_fit_scores(const state::Snapshot& snap, const std::vector<std::string>& names,
                                          const model::PodDemand& pod, const policy::DraFit* dra = nullptr);

}  // namespace extender::sim
