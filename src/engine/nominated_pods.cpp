#include "nominated_pods.h"

#include <map>

#include "node_fit.h"

namespace extender::engine {
namespace {

// The nominated pods that count against `pod`, by node.
std::map<std::string_view, std::vector<const model::Pod*>, std::less<>> counted_by_node(
    const model::Pod& pod, std::span<const model::Pod> nominated, const state::Snapshot& snapshot) {
  std::map<std::string_view, std::vector<const model::Pod*>, std::less<>> out;
  for (const model::Pod& q : nominated) {
    if (q.uid == pod.uid || q.nominated_node.empty() || q.priority < pod.priority || !q.node_name.empty()) continue;
    const state::NodeState* node = snapshot.find(q.nominated_node);
    if (!node || node->claims.count(q.uid)) continue;  // unknown node, or already in the ledger there
    out[q.nominated_node].push_back(&q);
  }
  return out;
}

}  // namespace

void refuse_where_nominated_fill(const model::Pod& pod, const model::PodDemand& demand,
                                 std::span<const model::Pod> nominated, const DemandOf& demand_of,
                                 const policy::DraFit* dra, const state::Snapshot& snapshot,
                                 std::span<const std::string_view> names, std::vector<std::uint32_t>& passed,
                                 wire::FilterResult& r, const policy::GpuPlacement& gpu, TimePoint now) {
  if (nominated.empty() || passed.empty()) return;
  const auto by_node = counted_by_node(pod, nominated, snapshot);
  if (by_node.empty()) return;
  policy::GpuPlacement allocating = gpu;
  allocating.verdict_only = false;
  std::vector<std::uint32_t> kept;
  kept.reserve(passed.size());
  for (std::uint32_t i : passed) {
    auto it = by_node.find(names[i]);
    const state::NodeState* node = it == by_node.end() ? nullptr : snapshot.find(names[i]);
    if (!node) {
      kept.push_back(i);
      continue;
    }
    model::NodeUsage usage = node->usage_for(demand, now);
    for (const model::Pod* q : it->second) {
      auto qd = demand_of(*q);
      if (!qd || qd->needs_nothing()) continue;
      policy::Fit qfit = fit_on(nullptr, *qd, node->supply, usage, allocating);
      if (qfit.verdict == policy::Verdict::kFits) usage.add(qfit.allocation);
    }
    policy::Fit fit = fit_on(dra, demand, node->supply, usage, gpu);
    if (fit.verdict == policy::Verdict::kFits) {
      kept.push_back(i);
    } else {
      r.failed.add(names[i], "with the pods nominated to it: " + policy::format_reason(fit.reason));
    }
  }
  passed = std::move(kept);
}

}  // namespace extender::engine
