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
// - fgd, the FGD paper's policy as its simulator scores it: the increase of the node's expected
//   fragmentation over `mix` (policy::fragmentation_delta, a shape asking no GPU counting every
//   free GPU as fragmentation), as the integer score paper_fgd_score, and nothing else, so nodes
//   whose increases round to the same score tie and the scheduler's own rule decides between them
//   (kube-scheduler's plugins and random draw, or the paper's seeded node order). The simulator
//   gives it the paper's mix, typical_pods_mix, not the daemon's window, and lets it choose a
//   share's device (fgd_share_device).
#include <cstdint>
#include <optional>
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

// How fgd scores nodes and counts shapes asking no GPU; the defaults are the FGD paper simulator's.
struct FgdRules {
  // The paper simulator's score (paper_fgd_score); false: the exact increase, so only nodes of
  // equal increase tie.
  bool integer_scores = true;
  policy::NoGpuShapes no_gpu = policy::NoGpuShapes::kAlwaysFragment;
};

// The FGD paper simulator's node score for an increase `d` of expected fragmentation (in devices,
// num / den): 100 * sigmoid(-d), truncated to an integer in 0..100 (higher is better).
std::int64_t paper_fgd_score(const policy::FragmentationDelta& d);

std::vector<std::int64_t> fgd_scores(const state::Snapshot& snap, const std::vector<std::string>& names,
                                     const model::PodDemand& pod, const policy::ShapeMix& mix,
                                     const policy::DraFit* dra = nullptr, const FgdRules& rules = {});

// The device fgd gives a share (pod.gpu_share_bytes > 0) on node `name`: the least increase of
// expected fragmentation over `mix` (ties: the least free memory, then the lowest index), or under
// rules.integer_scores the best paper_fgd_score (ties: the lowest index). nullopt when no device
// holds it.
std::optional<std::int64_t> fgd_share_device(const state::Snapshot& snap, const std::string& name,
                                             const model::PodDemand& pod, const policy::ShapeMix& mix,
                                             const policy::DraFit* dra = nullptr, const FgdRules& rules = {});

}  // namespace extender::sim
