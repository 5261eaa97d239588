#include "extender/sim/reference_scores.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace extender::sim {
namespace {

// A candidate's supply and GPU view as prioritize reads them.
struct CandidateView {
  const model::NodeSupply* supply = nullptr;
  policy::GpuNodeView view;
};

std::optional<CandidateView> candidate_view(const state::Snapshot& snap, const std::string& name,
                                            const model::PodDemand& pod, const policy::DraFit* dra) {
  const state::NodeState* node = snap.find(name);
  if (!node) return std::nullopt;
  const model::NodeUsage usage = node->usage_for(pod, {});
  const auto served = dra ? dra->scoring_view(node->supply, usage) : std::nullopt;
  if (served) return CandidateView{&node->supply, policy::gpu_view(served->supply, served->usage)};
  return CandidateView{&node->supply, policy::gpu_view(node->supply, usage)};
}

// Ranks `keys` (lower is better; nullopt scores 0) 10, 9, ... 0 by distinct key.
std::vector<std::int64_t> rank_ascending(const std::vector<std::optional<long double>>& keys) {
  std::vector<long double> distinct;
  for (const auto& k : keys) {
    if (k) distinct.push_back(*k);
  }
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<std::int64_t> out;
  out.reserve(keys.size());
  for (const auto& k : keys) {
    const auto rank = k ? std::lower_bound(distinct.begin(), distinct.end(), *k) - distinct.begin() : 10;
    out.push_back(std::max<std::int64_t>(10 - rank, 0));
  }
  return out;
}

long double devices(const policy::FragmentationDelta& d) {
  return static_cast<long double>(d.num) / static_cast<long double>(d.den);
}

}  // namespace

std::vector<std::int64_t> best_fit_scores(const state::Snapshot& snap, const std::vector<std::string>& names,
                                          const model::PodDemand& pod, const policy::DraFit* dra) {
  std::vector<std::optional<long double>> left;
  left.reserve(names.size());
  for (const auto& name : names) {
    const auto c = candidate_view(snap, name, pod, dra);
    left.push_back(c ? std::optional{policy::free_after(pod, *c->supply, c->view)} : std::nullopt);
  }
  return rank_ascending(left);
}

policy::ShapeMix typical_pods_mix(const std::vector<WorkloadRow>& rows) {
  constexpr std::int64_t kPopularityPercent = 95;
  std::map<policy::GpuShape, std::int64_t> counts;
  for (const auto& r : rows) {
    policy::GpuShape s;
    if (is_share(r)) {
      s.share_milli = r.gpu_milli;
    } else {
      s.whole = r.num_gpu;
    }
    s.cpu_milli = r.cpu_milli;
    s.models = r.gpu_models;
    ++counts[s];
  }
  std::vector<std::pair<policy::GpuShape, std::int64_t>> by_count(counts.begin(), counts.end());
  std::stable_sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  const std::int64_t expected = kPopularityPercent * static_cast<std::int64_t>(rows.size()) / 100;
  policy::ShapeMix out;
  std::int64_t covered = 0;
  for (auto& entry : by_count) {
    if (covered >= expected && !out.empty()) break;
    covered += entry.second;
    out.push_back(std::move(entry));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::int64_t paper_fgd_score(const policy::FragmentationDelta& d) {
  const long double sigmoid = 1.0L / (1.0L + std::exp(devices(d)));
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(sigmoid * 100), 0, 100);
}

std::vector<std::int64_t> fgd_scores(const state::Snapshot& snap, const std::vector<std::string>& names,
                                     const model::PodDemand& pod, const policy::ShapeMix& mix,
                                     const policy::DraFit* dra, const FgdRules& rules) {
  // Lower is better: the increase, or minus the integer score.
  std::vector<std::optional<long double>> keys;
  keys.reserve(names.size());
  for (const auto& name : names) {
    const auto c = candidate_view(snap, name, pod, dra);
    const auto d = c ? policy::fragmentation_delta(pod, *c->supply, c->view, mix, rules.no_gpu) : std::nullopt;
    if (!d) {
      keys.emplace_back();
      continue;
    }
    keys.emplace_back(rules.integer_scores ? -static_cast<long double>(paper_fgd_score(*d)) : devices(*d));
  }
  return rank_ascending(keys);
}

std::optional<std::int64_t> fgd_share_device(const state::Snapshot& snap, const std::string& name,
                                             const model::PodDemand& pod, const policy::ShapeMix& mix,
                                             const policy::DraFit* dra, const FgdRules& rules) {
  const auto c = candidate_view(snap, name, pod, dra);
  if (!c) return std::nullopt;
  const auto deltas = policy::share_deltas(pod, c->view, mix, rules.no_gpu);
  std::optional<std::size_t> best;
  // Lower is better: minus the integer score (ties: lowest index), or the increase, then the
  // device's free memory (ties: lowest index).
  auto key = [&](std::size_t i) {
    if (rules.integer_scores) return std::pair{-static_cast<long double>(paper_fgd_score(*deltas[i])), 0.0L};
    return std::pair{devices(*deltas[i]), static_cast<long double>(c->view.free[i])};
  };
  for (std::size_t i = 0; i < deltas.size(); ++i) {
    if (deltas[i] && (!best || key(i) < key(*best))) best = i;
  }
  if (!best) return std::nullopt;
  return static_cast<std::int64_t>(*best);
}

}  // namespace extender::sim
