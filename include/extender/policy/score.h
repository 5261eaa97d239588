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
#include "extender/policy/gpu_placement.h"

namespace extender::policy {

struct ScoringRules {
  std::int64_t volume_balance_weight = 1;  // applies to pods with managed volumes; 0 turns it off
  // applies to pods that need GPUs, and under fragmentation to every pod scored (the CPU and
  // memory a pod without GPUs takes count against the GPU shapes); 0 turns it off
  std::int64_t gpu_packing_weight = 1;
  PackingStrategy packing = PackingStrategy::kBinpack;
  // fragmentation: the mix of shapes is the last `fragmentation_window` pods decided on (their
  // GPUs, CPU and memory; pods without GPUs too) plus this prior (GPU-only shapes -> pseudo-count).
  // At 100 pods the prior weighs about a tenth of the mix, which keeps plain GPU fragmentation in
  // view.
  std::int64_t fragmentation_window = 100;
  // fragmentation: a shape of k whole GPUs weighs k^this pods in the mix, one bound to GPU models
  // (k / u)^this, u the share of the cluster's GPUs it may use (ShapeWindow); 0: each pod once.
  double fragmentation_size_exponent = 0;
  // fragmentation: best-fit's measure of what the node keeps free after the placement (its free
  // CPU over its CPU plus its free GPU over its GPUs, 0..2) times this is added to the increase of
  // fragmentation (GPUs per pod of the mix) before ranking; 0: the increase alone.
  double fragmentation_fit_weight = 0;
  // fragmentation, for a pod with GPUs where CPU is scarcer than GPUs (the candidates' requested
  // CPU over their CPU above their allocated GPUs over their GPUs) and shapes of several whole
  // GPUs weigh at most half of the mix (multi_gpu_heavy): the increase is ranked in bins of this
  // many GPUs, and candidates in one bin tie (no blend, no tie-breaks), so that kube-scheduler's
  // own scores (NodeResourcesFit, BalancedAllocation) choose among them; 0: off.
  double fragmentation_cpu_scarce_bin = 0;
  ShapeMix fragmentation_prior = {{{1, 0, 0}, 4},   {{2, 0, 0}, 1},   {{4, 0, 0}, 1},  {{8, 0, 0}, 1},
                                  {{0, 0, 250}, 1}, {{0, 0, 500}, 2}, {{0, 0, 750}, 1}};
  // Storage capacity (as KEP-4049's StorageCapacityScoring, on this daemon's own accounting):
  // applies to pods with volumes in a pool a storage driver publishes (docs/storage.md) on some
  // candidate (csi-baremetal's drives aside: volume balance by count ranks those, as its users
  // expect); 0 turns it off. more_free: the node with the most free space left in the pod's
  // pools ranks highest (a burst spreads); false: the least (packs).
  std::int64_t capacity_weight = 1;
  bool capacity_more_free = true;
};

// A node to score: both pointers outlive the scoring (the caller owns what they point at).
struct Candidate {
  const model::NodeSupply* node = nullptr;
  const model::NodeUsage* usage = nullptr;  // excludes the pod being scored
};

// The scorers score_candidates weighs together, in one table: the key of each one's weight under
// `scoring` in the config, that weight in the rules (0 turns the scorer off), whether it applies
// to the pod, and its 0..10 scores in candidate order. The table is constant.
struct Scorer {
  const char* weight_key;  // "volume_balance_weight", "capacity_weight", "gpu_packing_weight"
  std::int64_t ScoringRules::*weight;
  bool (*applies)(const model::PodDemand& pod, std::span<const Candidate> candidates, const ScoringRules& rules);
  std::vector<std::int64_t> (*score)(const model::PodDemand& pod, std::span<const Candidate> candidates,
                                     const ScoringRules& rules, const ShapeMix& mix);
};
std::span<const Scorer> scorers();
inline constexpr std::int64_t kMaxScorerWeight = 1'000'000;

// One score per candidate, in candidate order: the weighted mean of the scorers that apply, by
// the table; empty when none applies to the pod. `mix` is the recent mix of shapes
// (fragmentation only).
std::vector<std::int64_t> score_candidates(const model::PodDemand& pod, std::span<const Candidate> candidates,
                                           const ScoringRules& rules, const ShapeMix& mix = {});

// Volume balance alone: fewer managed volumes (placed + reserved) ranks higher.
std::vector<std::int64_t> volume_balance_scores(std::span<const Candidate> candidates);
// Storage capacity alone: raw = the free bytes left in the pod's pools after placing its volumes,
// over those pools' capacity (a pool the node lacks counts as none free); higher ranks higher
// when `more_free`, lower otherwise.
std::vector<std::int64_t> capacity_scores(const model::PodDemand& pod, std::span<const Candidate> candidates,
                                          bool more_free);
// GPU packing alone. binpack and spread: raw = (used + demand) / allocatable over the pod's GPU
// resources, counted in device memory when the node has devices and the pod asks a share or
// whole GPUs of them (a share holds its bytes of a device, a whole GPU all of it, so a node's
// shares count for whole-GPU pods too); min-max normalised. fragmentation: the
// least increase of the node's expected fragmentation over `mix` (fragmentation_delta; plus
// `fit_weight` times best-fit's measure, see ScoringRules::fragmentation_fit_weight), then
// (ties) the least free GPU memory after the placement, then the most free CPU after (headroom
// for the pods kube-scheduler places by its own plugins), ranked:
// the candidates best by that order score 10, the next distinct 9, and so on down to 0, so the
// best node is never tied with a worse one; but for a pod with GPUs on candidates where CPU is
// scarcer than GPUs (cpu_scarce), with `cpu_scarce_bin` > 0 and a mix not multi_gpu_heavy, the
// increase alone in bins of that many GPUs (ScoringRules::fragmentation_cpu_scarce_bin).
// The strategy's scorer is its entry of the packing table (packing.h).
std::vector<std::int64_t> gpu_packing_scores(const model::PodDemand& pod, std::span<const Candidate> candidates,
                                             PackingStrategy strategy, const ShapeMix& mix = {}, double fit_weight = 0,
                                             double cpu_scarce_bin = 0);
// binpack (fuller_first) and spread, as above.
std::vector<std::int64_t> fill_scores(const model::PodDemand& pod, std::span<const Candidate> candidates,
                                      bool fuller_first);
// fragmentation, as above.
std::vector<std::int64_t> fragmentation_scores(const model::PodDemand& pod, std::span<const Candidate> candidates,
                                               const ShapeMix& mix, double fit_weight = 0, double cpu_scarce_bin = 0);
// Whether CPU is scarcer than GPUs on the candidates: their CPU requested over their allocatable
// CPU exceeds their GPUs allocated over their GPUs (a device counts its used memory over its
// memory). False when either is unknown (no CPU given, no devices).
bool cpu_scarce(std::span<const Candidate> candidates);
// Whether shapes of two or more whole GPUs weigh more than half of the mix: then a placement's
// exact increase decides where the next large pod still fits, and fragmentation never bins it.
bool multi_gpu_heavy(const ShapeMix& mix);

}  // namespace extender::policy
