#include "extender/server/decision_log.h"

#include <algorithm>
#include <map>

namespace extender::server {
namespace {

std::string cut(std::string_view s) { return std::string(s.substr(0, DecisionLog::kMaxText)); }

void group_reasons(const wire::FailedNodes& failed, bool unresolvable, std::map<std::string, ReasonGroup>& groups) {
  for (const auto& [node, reason] : failed.sorted()) {
    ReasonGroup& g = groups[cut(*reason)];
    g.unresolvable = unresolvable;
    ++g.nodes;
    if (g.sample.size() < DecisionLog::kMaxSample) g.sample.push_back(cut(node));
  }
}

}  // namespace

DecisionLog::DecisionLog(std::size_t decisions, std::size_t pods)
    : decision_capacity_(std::max<std::size_t>(decisions, 1)), pod_capacity_(std::max<std::size_t>(pods, 1)) {}

void DecisionLog::add_decision(Decision d) {
  d.pod = cut(d.pod);
  d.note = cut(d.note);
  std::lock_guard lock(decisions_mu_);
  decisions_.push_front(std::move(d));
  if (decisions_.size() > decision_capacity_) decisions_.pop_back();
}

void DecisionLog::add_filter(std::string_view ns, std::string_view name, std::string_view uid,
                             std::optional<model::PodDemand> demand, std::size_t nodes_in,
                             const wire::FilterResult& result, TimePoint at) {
  const std::string pod = cut(std::string(ns) + "/" + std::string(name));
  if (result.failed.empty() && result.failed_unresolvable.empty() && result.error.empty()) {
    forget_pod(pod);
    return;
  }
  PodRefusal r;
  r.pod = pod;
  r.uid = cut(uid);
  r.demand = std::move(demand);
  r.at = at;
  r.nodes_in = nodes_in;
  r.nodes_passed =
      result.node_names ? result.node_names->size() : (result.node_objects ? result.node_objects->size() : 0);
  r.error = cut(result.error);
  std::map<std::string, ReasonGroup> groups;
  group_reasons(result.failed, false, groups);
  group_reasons(result.failed_unresolvable, true, groups);
  for (auto& [reason, g] : groups) {
    g.reason = reason;
    r.reasons.push_back(std::move(g));
  }
  std::stable_sort(r.reasons.begin(), r.reasons.end(),
                   [](const ReasonGroup& a, const ReasonGroup& b) { return a.nodes > b.nodes; });
  while (r.reasons.size() > kMaxReasons) {
    r.other_nodes += r.reasons.back().nodes;
    r.reasons.pop_back();
  }
  std::lock_guard lock(pods_mu_);
  if (auto it = index_.find(pod); it != index_.end()) {
    pods_.erase(it->second);
    index_.erase(it);
  }
  pods_.push_front(std::move(r));
  index_[pod] = pods_.begin();
  if (pods_.size() > pod_capacity_) {
    index_.erase(pods_.back().pod);
    pods_.pop_back();
  }
}

void DecisionLog::forget_pod(std::string_view pod) {
  std::lock_guard lock(pods_mu_);
  if (auto it = index_.find(std::string(pod)); it != index_.end()) {
    pods_.erase(it->second);
    index_.erase(it);
  }
}

std::vector<Decision> DecisionLog::decisions() const {
  std::lock_guard lock(decisions_mu_);
  return {decisions_.begin(), decisions_.end()};
}

std::vector<PodRefusal> DecisionLog::refused_pods() const {
  std::lock_guard lock(pods_mu_);
  return {pods_.begin(), pods_.end()};
}

std::optional<PodRefusal> DecisionLog::refused_pod(std::string_view pod) const {
  std::lock_guard lock(pods_mu_);
  auto it = index_.find(std::string(pod));
  if (it == index_.end()) return std::nullopt;
  return *it->second;
}

}  // namespace extender::server
