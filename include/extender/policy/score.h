#pragma once
// Scores: rank the nodes that passed the filter, 0..10 each, as the extender protocol requires.
// Each scorer that applies to the pod yields a raw value per candidate, min-max normalised over the
// candidates to 0..10 (all equal -> 10); the pod's score is round(sum(w*s) / sum(w)), rounding half
// away from zero. Exact integer arithmetic, so equal input gives equal output. Pure.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "extender/model/demand.h"
#include "extender/model/supply.h"
#include "extender/model/usage.h"

namespace extender::policy {

enum class PackingStrategy { kBinpack, kSpread };

struct ScoringRules {
  std::int64_t volume_balance_weight = 1;  // applies to pods with managed volumes; 0 turns it off
  std::int64_t gpu_packing_weight = 1;     // applies to pods that need GPUs; 0 turns it off
  PackingStrategy packing = PackingStrategy::kBinpack;
};

struct Candidate {
  const model::NodeSupply* node = nullptr;
  model::NodeUsage usage;  // excludes the pod being scored
};

// One score per candidate, in candidate order; empty when no scorer applies to the pod.
std::vector<std::int64_t> score_candidates(const model::PodDemand& pod, std::span<const Candidate> candidates,
                                           const ScoringRules& rules);

// Volume balance alone: fewer managed volumes (placed + reserved) ranks higher.
std::vector<std::int64_t> volume_balance_scores(std::span<const Candidate> candidates);
// GPU packing alone: raw = (used + demand) / allocatable over the pod's GPU resources.
std::vector<std::int64_t> gpu_packing_scores(const model::PodDemand& pod, std::span<const Candidate> candidates,
                                             PackingStrategy strategy);

}  // namespace extender::policy
