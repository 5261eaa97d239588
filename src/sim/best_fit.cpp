#include "extender/sim/best_fit.h"

#include <algorithm>
#include <limits>

#include "extender/policy/gpu_placement.h"

namespace extender::sim {

std::vector<std::int64_t> best_fit_scores(const state::Snapshot& snap, const std::vector<std::string>& names,
                                          const model::PodDemand& pod, const policy::DraFit* dra) {
  constexpr double kAbsent = std::numeric_limits<double>::infinity();
  std::vector<double> left;
  left.reserve(names.size());
  for (const auto& name : names) {
    const state::NodeState* node = snap.find(name);
    if (!node) {
      left.push_back(kAbsent);
      continue;
    }
    const model::NodeUsage usage = node->usage_for(pod, {});
    const auto served = dra ? dra->scoring_view(node->supply, usage) : std::nullopt;
    const policy::GpuNodeView view =
        served ? policy::gpu_view(served->supply, served->usage) : policy::gpu_view(node->supply, usage);
    double value = 0;
    if (view.cpu_free != INT64_MAX && node->supply.cpu_milli > 0) {
      value += static_cast<double>(view.cpu_free - pod.cpu_milli) / static_cast<double>(node->supply.cpu_milli);
    }
    if (!view.free.empty()) {
      const policy::GpuShape shape = policy::shape_of(pod);
      double free = 0;
      for (std::int64_t f : view.free) free += static_cast<double>(f);
      free -= pod.gpu_share_bytes > 0 ? static_cast<double>(pod.gpu_share_bytes)
                                      : static_cast<double>(shape.whole) * static_cast<double>(view.capacity);
      value += free / (static_cast<double>(view.capacity) * static_cast<double>(view.free.size()));
    }
    left.push_back(value);
  }
  std::vector<double> distinct = left;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<std::int64_t> out;
  out.reserve(left.size());
  for (double v : left) {
    const auto rank = std::lower_bound(distinct.begin(), distinct.end(), v) - distinct.begin();
    out.push_back(v == kAbsent ? 0 : std::max<std::int64_t>(10 - rank, 0));
  }
  return out;
}

}  // namespace extender::sim
