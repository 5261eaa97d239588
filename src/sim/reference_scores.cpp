#include "extender/sim/reference_scores.h"

#include <algorithm>
#include <limits>
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

// Ranks `values` (lower is better; `absent` scores 0) 10, 9, ... 0 by distinct value.
std::vector<std::int64_t> rank_ascending(const std::vector<long double>& values, long double absent) {
  std::vector<long double> distinct = values;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<std::int64_t> out;
  out.reserve(values.size());
  for (long double v : values) {
    const auto rank = std::lower_bound(distinct.begin(), distinct.end(), v) - distinct.begin();
    out.push_back(v == absent ? 0 : std::max<std::int64_t>(10 - rank, 0));
  }
  return out;
}

constexpr long double kAbsent = std::numeric_limits<long double>::infinity();

}  // namespace

std::vector<std::int64_t> best_fit_scores(const state::Snapshot& snap, const std::vector<std::string>& names,
                                          const model::PodDemand& pod, const policy::DraFit* dra) {
  std::vector<long double> left;
  left.reserve(names.size());
  for (const auto& name : names) {
    const auto c = candidate_view(snap, name, pod, dra);
    left.push_back(c ? policy::free_after(pod, *c->supply, c->view) : kAbsent);
  }
  return rank_ascending(left, kAbsent);
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

std::vector<std::int64_t> fgd_scores(const state::Snapshot& snap, const std::vector<std::string>& names,
                                     const model::PodDemand& pod, const policy::ShapeMix& mix,
                                     const policy::DraFit* dra) {
  std::vector<long double> delta;
  delta.reserve(names.size());
  for (const auto& name : names) {
    const auto c = candidate_view(snap, name, pod, dra);
    const auto d = c ? policy::fragmentation_delta(pod, *c->supply, c->view, mix) : std::nullopt;
    delta.push_back(d ? static_cast<long double>(d->num) / static_cast<long double>(d->den) : kAbsent);
  }
  return rank_ascending(delta, kAbsent);
}

}  // namespace extender::sim
