#pragma once
// The reference policies the simulator compares the daemon's with (the daemon does not offer
// them). Each returns one score 0..10 per name, in order, ranked as the fragmentation policy
// ranks: the best distinct value scores 10, the next 9, and so on down to 0; a name the snapshot
// lacks scores 0, and under fgd so does a node whose devices cannot take the pod (best-fit ranks
// only what the filter passed). A node whose GPUs come from DRA counts them as prioritize reads
// them (policy::DraFit::scoring_view). Pure.
// - best-fit, the FGD paper's baseline: the node the pod leaves least free ranks first: its free
//   CPU after the placement over its allocatable CPU, plus its free GPU after over its GPUs (0
//   without GPUs). Fine-grained, so nodes rarely tie.
// - fgd, the FGD paper's policy with ties at random: the least increase of the node's expected
//   fragmentation over `mix` (policy::fragmentation_delta) and nothing else, so nodes of equal
//   increase tie and kube-scheduler's own plugins and its random draw decide between them. The
//   simulator gives it the paper's mix, typical_pods_mix, not the daemon's window.
#include <cstdint>
#include <string>
#include <vector>

#include "extender/model/demand.h"
#include "extender/policy/dra_fit.h"
#include "extender/policy/gpu_placement.h"
#include "extender/sim/workload.h"
#include "extender/state/cluster_state.h"

namespace extender::sim {

// `dra`: the DRA view built for `pod`, or null when no node's GPUs come from DRA.
std::vector<std::int64_t> best_fit_scores(const state::Snapshot& snap, const std::vector<std::string>& names,
                                          const model::PodDemand& pod, const policy::DraFit* dra = nullptr);
// The FGD paper's typical pods (its simulator's TypicalPodsConfig as the paper ran it: pods
// without GPUs included, popularity threshold 95%, step 1): the workload's distinct specs (whole
// GPUs or a share in thousandths, CPU, GPU models; memory is not part of a spec there), most
// common first (ties: in spec order), until they cover 95% of the rows; each weighs its count.
policy::ShapeMix typical_pods_mix(const std::vector<WorkloadRow>& rows);

std::vector<std::int64_t> fgd_scores(const state::Snapshot& snap, const std::vector<std::string>& names,
                                     const model::PodDemand& pod, const policy::ShapeMix& mix,
                                     const policy::DraFit* dra = nullptr);

}  // namespace extender::sim
