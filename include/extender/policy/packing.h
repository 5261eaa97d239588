#pragma once
// The GPU packing strategies (scoring.gpu_packing) in one table: each strategy's name, whether it
// reads the recent mix of task shapes, whether it ranks pods that need no GPU too, how it scores
// the candidates and how it chooses the device of a GPU share. Pure; the table is constant.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "extender/model/demand.h"
#include "extender/policy/gpu_placement.h"
#include "extender/policy/score.h"

namespace extender::policy {

// How a share's device is chosen on a node: the best fit, or the least increase of the node's
// expected fragmentation over the shape mix.
enum class ShareDevice { kBestFit, kLeastFragmentation };

struct PackingPolicy {
  PackingStrategy strategy;
  const char* name;
  bool needs_shape_mix;  // scores and device choice read the mix (the engine keeps it)
  bool ranks_every_pod;  // also ranks pods that need no GPU (their CPU and memory count against the shapes)
  ShareDevice share_device;
  // 0..10 per candidate, in candidate order (see gpu_packing_scores in score.h).
  std::vector<std::int64_t> (*score)(const model::PodDemand& pod, std::span<const Candidate> candidates,
                                     const ShapeMix& mix, double fit_weight, double cpu_scarce_bin);
};

// Every strategy, in the order they are listed to people (binpack, spread, fragmentation).
std::span<const PackingPolicy> packing_policies();
const PackingPolicy& packing_policy(PackingStrategy strategy);
// The strategies' names in table order, for messages: "binpack, spread or fragmentation"
// (`last` goes before the last name).
std::string packing_names(std::string_view last = " or ");

}  // namespace extender::policy
