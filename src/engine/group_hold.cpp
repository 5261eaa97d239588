#include "group_hold.h"

#include <deque>

#include "node_fit.h"

namespace extender::engine {

bool needs_group_hold(const model::Pod& pod, const model::PodDemand& demand) {
  if (pod.pod_group.empty()) return false;
  if (demand.gpu_share_bytes > 0) return true;
  for (const auto& v : demand.volumes) {
    if (v.held_on.empty()) return true;
  }
  return false;
}

std::string group_key(const model::Pod& pod) { return pod.namespace_name + "/" + pod.pod_group; }

std::optional<std::size_t> best_of(const model::PodDemand& demand, const state::Snapshot& snapshot,
                                   std::span<const std::string_view> names, std::span<const std::uint32_t> passed,
                                   const policy::ScoringRules& rules, const policy::ShapeMix& mix, TimePoint now) {
  std::deque<model::NodeUsage> usages;
  std::vector<policy::Candidate> candidates;
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < passed.size(); ++i) {
    const state::NodeState* node = snapshot.find(names[passed[i]]);
    if (!node) continue;
    candidates.push_back({&node->supply, &usages.emplace_back(node->usage_for(demand, now))});
    at.push_back(i);
  }
  if (candidates.empty()) return std::nullopt;
  const std::vector<std::int64_t> scores = policy::score_candidates(demand, candidates, rules, mix);
  std::size_t best = 0;
  for (std::size_t c = 1; c < scores.size() && c < candidates.size(); ++c) {
    if (scores[c] > scores[best]) best = c;
  }
  return at[best];
}

bool narrow_and_hold(const model::Pod& pod, const model::PodDemand& demand, const policy::DraFit* dra,
                     const state::Snapshot& snapshot, std::span<const std::string_view> names,
                     std::vector<std::uint32_t>& passed, const policy::ScoringRules& rules,
                     const policy::GpuPlacement& gpu, const policy::ShapeMix& mix, state::InFlightHolds& holds,
                     TimePoint now) {
  const auto best = best_of(demand, snapshot, names, passed, rules, mix, now);
  if (!best) {
    holds.released(demand.uid);
    return false;
  }
  const std::string_view name = names[passed[*best]];
  const state::NodeState* node = snapshot.find(name);
  policy::GpuPlacement allocating = gpu;
  allocating.verdict_only = false;
  policy::Fit fit = fit_on(dra, demand, node->supply, node->usage_for(demand, now), allocating);
  if (fit.verdict != policy::Verdict::kFits) {
    holds.released(demand.uid);
    return false;
  }
  state::Claim claim;
  claim.owner = demand.display_name();
  claim.node = std::string(name);
  claim.allocation = std::move(fit.allocation);
  claim.priority = pod.priority;
  holds.hold(demand.uid, group_key(pod), std::move(claim), now);
  passed = {passed[*best]};
  return true;
}

}  // namespace extender::engine
