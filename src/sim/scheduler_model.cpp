#include "extender/sim/scheduler_model.h"

#include <algorithm>

namespace extender::sim {

SchedulerModel::SchedulerModel(const std::vector<model::NodeSupply>& nodes, std::uint64_t seed) : rng_(seed) {
  nodes_.reserve(nodes.size());
  for (const auto& n : nodes) {
    nodes_.push_back({n.name, !n.unschedulable, n.cpu_milli > 0 ? n.cpu_milli : INT64_MAX,
                      n.memory_bytes > 0 ? n.memory_bytes : INT64_MAX});
  }
}

std::vector<std::string> SchedulerModel::fitting(std::int64_t cpu_milli, std::int64_t memory_bytes) const {
  std::vector<std::string> out;
  for (const auto& n : nodes_) {
    if (n.schedulable && cpu_milli <= n.cpu_milli && memory_bytes <= n.memory_bytes) out.push_back(n.name);
  }
  return out;
}

std::optional<std::size_t> SchedulerModel::choose(const std::vector<std::int64_t>& scores, std::int64_t weight) {
  if (scores.empty()) return std::nullopt;
  std::vector<std::int64_t> total(scores.size());
  for (std::size_t k = 0; k < scores.size(); ++k) total[k] = scores[k] * weight * 10;
  const std::int64_t best = *std::max_element(total.begin(), total.end());
  std::vector<std::size_t> top;
  for (std::size_t k = 0; k < total.size(); ++k) {
    if (total[k] == best) top.push_back(k);
  }
  return top[std::uniform_int_distribution<std::size_t>(0, top.size() - 1)(rng_)];
}

void SchedulerModel::place(const std::string& node, std::int64_t cpu_milli, std::int64_t memory_bytes) {
  for (auto& n : nodes_) {
    if (n.name != node) continue;
    if (n.cpu_milli != INT64_MAX) n.cpu_milli -= cpu_milli;
    if (n.memory_bytes != INT64_MAX) n.memory_bytes -= memory_bytes;
    return;
  }
}

}  // namespace extender::sim
