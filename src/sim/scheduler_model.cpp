#include "extender/sim/scheduler_model.h"

#include <algorithm>
#include <cmath>

#include "extender/policy/node_eligibility.h"

namespace extender::sim {
namespace {

constexpr std::int64_t kMaxNodeScore = 100;
constexpr std::int64_t kMaxExtenderPriority = 10;
constexpr std::int64_t kDefaultMilliCpuRequest = 100;
constexpr std::int64_t kDefaultMemoryRequest = 200 * 1024 * 1024;
constexpr std::int64_t kMinFeasibleNodesToFind = 100;
constexpr std::int64_t kMinFeasibleNodesPercentageToFind = 5;

std::int64_t least_requested(std::int64_t requested, std::int64_t allocatable) {
  if (requested > allocatable) return 0;
  return (allocatable - requested) * kMaxNodeScore / allocatable;
}

bool fits(std::int64_t request, std::int64_t allocatable, std::int64_t requested) {
  return allocatable == 0 || requested + request <= allocatable;
}

}  // namespace

std::int64_t feasible_nodes_to_find(std::int64_t percentage, std::int64_t nodes) {
  if (nodes < kMinFeasibleNodesToFind) return nodes;
  if (percentage <= 0) percentage = std::max(50 - nodes / 125, kMinFeasibleNodesPercentageToFind);
  return std::max(nodes * std::min<std::int64_t>(percentage, 100) / 100, kMinFeasibleNodesToFind);
}

std::int64_t least_allocated_score(std::int64_t cpu_requested, std::int64_t cpu_allocatable,
                                   std::int64_t memory_requested, std::int64_t memory_allocatable) {
  std::int64_t sum = 0, weights = 0;
  for (auto [requested, allocatable] :
       {std::pair{cpu_requested, cpu_allocatable}, {memory_requested, memory_allocatable}}) {
    if (allocatable <= 0) continue;
    sum += least_requested(requested, allocatable);
    ++weights;
  }
  return weights == 0 ? 0 : sum / weights;
}

std::int64_t balanced_allocation_score(std::int64_t cpu_requested, std::int64_t cpu_allocatable,
                                       std::int64_t memory_requested, std::int64_t memory_allocatable) {
  std::vector<double> fractions;
  for (auto [requested, allocatable] :
       {std::pair{cpu_requested, cpu_allocatable}, {memory_requested, memory_allocatable}}) {
    if (allocatable <= 0) continue;
    fractions.push_back(std::min(1.0, static_cast<double>(requested) / static_cast<double>(allocatable)));
  }
  const double deviation = fractions.size() == 2 ? std::abs((fractions[0] - fractions[1]) / 2) : 0.0;
  return static_cast<std::int64_t>((1 - deviation) * static_cast<double>(kMaxNodeScore));
}

std::vector<std::size_t> paper_tie_order(std::size_t nodes, std::uint64_t seed) {
  std::vector<std::size_t> order(nodes);
  for (std::size_t i = 0; i < nodes; ++i) order[i] = i;
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

SchedulerModel::SchedulerModel(const std::vector<model::NodeSupply>& nodes, std::uint64_t seed,
                               SchedulerSettings settings)
    : settings_(settings),
      rng_(seed),
      tie_order_(settings.paper ? paper_tie_order(nodes.size(), seed) : std::vector<std::size_t>{}) {
  nodes_.reserve(nodes.size());
  for (const auto& n : nodes) {
    index_.emplace(n.name, nodes_.size());
    nodes_.push_back(
        {n.name, !n.unschedulable, std::max<std::int64_t>(n.cpu_milli, 0), std::max<std::int64_t>(n.memory_bytes, 0)});
    model::NodeSupply labelled;
    labelled.name = n.name;
    labelled.labels = n.labels;
    labelled_.push_back(std::move(labelled));
  }
}

void SchedulerModel::set_dra_gpus(std::size_t i, std::int64_t gpus) { nodes_[i].dra_free = gpus; }

std::vector<std::size_t> SchedulerModel::feasible_at(std::int64_t cpu_milli, std::int64_t memory_bytes,
                                                     std::int64_t dra_gpus, const model::PodConstraints& constraints) {
  const bool constrained = !constraints.node_selector.empty() || constraints.required_node_affinity.has_value();
  std::vector<std::size_t> out;
  if (nodes_.empty()) return out;
  const auto wanted = settings_.paper
                          ? nodes_.size()
                          : static_cast<std::size_t>(feasible_nodes_to_find(settings_.percentage_of_nodes_to_score,
                                                                            static_cast<std::int64_t>(nodes_.size())));
  out.reserve(wanted);
  std::size_t processed = 0;
  for (; processed < nodes_.size() && out.size() < wanted; ++processed) {
    const std::size_t i = (next_start_ + processed) % nodes_.size();
    const Node& n = nodes_[i];
    if (n.schedulable && fits(cpu_milli, n.cpu_allocatable, n.cpu_requested) &&
        fits(memory_bytes, n.memory_allocatable, n.memory_requested) && (n.dra_free < 0 || dra_gpus <= n.dra_free) &&
        (!constrained || policy::node_affinity_mismatch(constraints, labelled_[i]).empty())) {
      out.push_back(i);
    }
  }
  next_start_ = (next_start_ + processed) % nodes_.size();
  last_searched_ = processed;
  return out;
}

std::vector<std::string> SchedulerModel::feasible(std::int64_t cpu_milli, std::int64_t memory_bytes,
                                                  std::int64_t dra_gpus, const model::PodConstraints& constraints) {
  std::vector<std::string> out;
  for (std::size_t i : feasible_at(cpu_milli, memory_bytes, dra_gpus, constraints)) out.push_back(nodes_[i].name);
  return out;
}

std::int64_t SchedulerModel::plugin_scores(const Node& n, std::int64_t cpu_milli, std::int64_t memory_bytes) const {
  const std::int64_t cpu_nonzero = n.cpu_nonzero + std::max(cpu_milli, kDefaultMilliCpuRequest);
  const std::int64_t memory_nonzero = n.memory_nonzero + std::max(memory_bytes, kDefaultMemoryRequest);
  return least_allocated_score(cpu_nonzero, n.cpu_allocatable, memory_nonzero, n.memory_allocatable) +
         balanced_allocation_score(n.cpu_requested + cpu_milli, n.cpu_allocatable, n.memory_requested + memory_bytes,
                                   n.memory_allocatable);
}

std::optional<std::size_t> SchedulerModel::pick(const std::vector<std::int64_t>& total,
                                                const std::vector<std::size_t>& at) {
  if (total.empty()) return std::nullopt;
  const std::int64_t best = *std::max_element(total.begin(), total.end());
  std::vector<std::size_t> top;
  for (std::size_t k = 0; k < total.size(); ++k) {
    if (total[k] == best) top.push_back(k);
  }
  if (settings_.paper) {
    auto place = [&](std::size_t k) { return at[k] < tie_order_.size() ? tie_order_[at[k]] : tie_order_.size(); };
    return *std::min_element(top.begin(), top.end(), [&](std::size_t a, std::size_t b) { return place(a) < place(b); });
  }
  return top[std::uniform_int_distribution<std::size_t>(0, top.size() - 1)(rng_)];
}

std::optional<std::size_t> SchedulerModel::choose(const std::vector<std::string>& candidates,
                                                  const std::vector<std::int64_t>& extender_scores,
                                                  std::int64_t cpu_milli, std::int64_t memory_bytes) {
  std::vector<std::int64_t> total(candidates.size(), 0);
  std::vector<std::size_t> at(candidates.size(), nodes_.size());
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    if (auto it = index_.find(candidates[k]); it != index_.end()) {
      at[k] = it->second;
      if (!settings_.paper) total[k] = plugin_scores(nodes_[it->second], cpu_milli, memory_bytes);
    }
    if (k < extender_scores.size()) {
      total[k] += extender_scores[k] * settings_.extender_weight * (kMaxNodeScore / kMaxExtenderPriority);
    }
  }
  return pick(total, at);
}

std::optional<std::size_t> SchedulerModel::choose_at(const std::vector<std::size_t>& candidates,
                                                     const std::vector<std::int64_t>& extender_scores,
                                                     std::int64_t cpu_milli, std::int64_t memory_bytes) {
  std::vector<std::int64_t> total(candidates.size(), 0);
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    if (!settings_.paper) total[k] = plugin_scores(nodes_[candidates[k]], cpu_milli, memory_bytes);
    if (k < extender_scores.size()) {
      total[k] += extender_scores[k] * settings_.extender_weight * (kMaxNodeScore / kMaxExtenderPriority);
    }
  }
  return pick(total, candidates);
}

void SchedulerModel::place(const std::string& node, std::int64_t cpu_milli, std::int64_t memory_bytes,
                           std::int64_t dra_gpus) {
  if (auto it = index_.find(node); it != index_.end()) place_at(it->second, cpu_milli, memory_bytes, dra_gpus);
}

void SchedulerModel::place_at(std::size_t i, std::int64_t cpu_milli, std::int64_t memory_bytes, std::int64_t dra_gpus) {
  Node& n = nodes_[i];
  if (n.dra_free >= 0) n.dra_free = std::max<std::int64_t>(n.dra_free - dra_gpus, 0);
  n.cpu_requested += cpu_milli;
  n.memory_requested += memory_bytes;
  n.cpu_nonzero += std::max(cpu_milli, kDefaultMilliCpuRequest);
  n.memory_nonzero += std::max(memory_bytes, kDefaultMemoryRequest);
}

}  // namespace extender::sim
