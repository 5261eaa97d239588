#include <spdlog/spdlog.h>

#include <algorithm>

#include "extender/engine/extender.h"
#include "extender/policy/preemption.h"
#include "filter_pass.h"

namespace extender::engine {
namespace {

// kube-scheduler's rule for a preemptor nominated to a node (PodEligibleToPreemptOthers), on this
// daemon's view: while pods of lower priority are terminating there, it preempts nowhere else. Its
// view may already miss them while this one still counts them; without the rule one preemption can
// evict twice. Any terminating pod of lower priority counts, as in kube-scheduler up to v1.2x.
std::size_t lower_priority_pods_leaving(const state::Snapshot& snap, const std::string& node, std::int64_t priority) {
  if (node.empty()) return 0;
  const state::NodeState* n = snap.find(node);
  if (!n) return 0;
  std::size_t leaving = 0;
  for (const auto& [uid, claim] : n->claims) {
    if (claim.kind == state::Claim::Kind::kPlaced && claim.terminating && claim.priority < priority) ++leaving;
  }
  return leaving;
}

// What evicting the victims frees on the node: their placements, and the placements of the
// generic ephemeral volumes deleted with them (claims of their own).
std::vector<model::Allocation> freed_by(const state::NodeState& node, const std::vector<std::string>& victims) {
  std::vector<model::Allocation> freed;
  for (const auto& uid : victims) {
    auto it = node.claims.find(uid);
    if (it != node.claims.end() && it->second.kind == state::Claim::Kind::kPlaced) {
      freed.push_back(it->second.allocation);
    }
  }
  for (const auto& [uid, claim] : node.claims) {
    if (claim.kind != state::Claim::Kind::kPlaced || claim.source != "volume") continue;
    for (const auto& v : claim.allocation.volumes) {
      if (!v.freed_with.empty() && std::find(victims.begin(), victims.end(), v.freed_with) != victims.end()) {
        freed.push_back(claim.allocation);
        break;
      }
    }
  }
  return freed;
}

// Whether evicting `freed` makes room for the pod on the node, by the DRA judge where there is one.
bool makes_room(const model::PodDemand& demand, const policy::DraFit* dra, const state::NodeState& node,
                const model::NodeUsage& usage, const std::vector<model::Allocation>& freed) {
  return dra ? dra->eviction_makes_room(demand, node.supply, usage, freed)
             : policy::eviction_makes_room(demand, node.supply, usage, freed);
}

// The other face of the same lag: the preemptor is nominated to a node kube-scheduler no longer
// lists as a candidate (in its view the pod fits there: its victims are gone), while this view
// still holds pods of lower priority there (not even seen terminating yet) without which the pod
// would fit. The pods kube-scheduler already evicted; victims elsewhere would be a second eviction.
// Returns how many such pods this view still holds, 0 when the rule does not apply.
std::size_t lower_priority_pods_lagging(const state::Snapshot& snap, const wire::PreemptionArgs& args,
                                        const std::string& nominated, const model::PodDemand& demand,
                                        const policy::DraFit* dra, TimePoint now) {
  if (nominated.empty() || args.victims_by_node.count(nominated)) return 0;
  const state::NodeState* n = snap.find(nominated);
  if (!n) return 0;
  std::vector<std::string> lower;
  for (const auto& [uid, claim] : n->claims) {
    if (claim.kind == state::Claim::Kind::kPlaced && claim.source == "pod" && claim.priority < args.pod.priority) {
      lower.push_back(uid);
    }
  }
  if (lower.empty()) return 0;
  const model::NodeUsage usage = n->usage_for(demand, now);
  if (makes_room(demand, dra, *n, usage, {})) return 0;
  return makes_room(demand, dra, *n, usage, freed_by(*n, lower)) ? lower.size() : 0;
}

// The answer that keeps every victim kube-scheduler proposed, with `note`.
PreemptAnswer unchanged(const wire::PreemptionArgs& args, PreemptAnswer& answer, std::string note) {
  for (const auto& [node, victims] : args.victims_by_node) {
    answer.victims[node] = {victims.uids, victims.num_pdb_violations};
  }
  answer.summary.nodes_out = answer.victims.size();
  answer.summary.note = std::move(note);
  return answer;
}

}  // namespace

PreemptAnswer Extender::preempt(const wire::PreemptionArgs& args) {
  PreemptAnswer answer;
  answer.summary.pod = args.pod.display_name();
  answer.summary.nodes_in = args.victims_by_node.size();
  auto demand = demand_of(args.pod);
  if (!demand) return unchanged(args, answer, demand.message());
  if (demand->needs_nothing()) return unchanged(args, answer, "pod needs nothing managed");
  if (deps_.gate) {
    if (auto why = deps_.gate->not_leading()) {
      answer.error = "scheduler-extender does not vet victims here: " + *why;
      answer.summary.note = answer.error;
      return answer;
    }
  }
  if (auto why = not_ready()) return unchanged(args, answer, "not ready: " + *why);
  std::string nominated = args.pod.nominated_node;
  if (deps_.pods) {
    auto pod = actionable_pod(args.pod.uid, args.pod.namespace_name, args.pod.name, answer.refusal);
    if (!pod) {
      answer.summary.note = pod.message() + "; no victims";
      return answer;
    }
    if (nominated.empty()) nominated = pod->nominated_node;
  }

  const auto now = clock_.now();
  const auto dra = dra_fit(*demand);
  const state::Snapshot snap = deps_.state->snapshot();
  if (auto leaving = lower_priority_pods_leaving(snap, nominated, args.pod.priority)) {
    answer.summary.note = "nominated to node " + nominated + ", where " + std::to_string(leaving) +
                          " pod(s) of lower priority are still terminating; no victims elsewhere";
    return answer;
  }
  if (auto lagging = lower_priority_pods_lagging(snap, args, nominated, *demand, dra.get(), now)) {
    answer.summary.note = "nominated to node " + nominated + ", which kube-scheduler no longer offers (it sees room there), where " +
                          std::to_string(lagging) + " pod(s) of lower priority are still placed in this view; no victims elsewhere";
    return answer;
  }
  for (const auto& [name, victims] : args.victims_by_node) {
    const state::NodeState* node = snap.find(name);
    if (!node) {
      spdlog::debug("preempt {}: node {}: {}", answer.summary.pod, name, FilterPass::unknown_node_reason());
      continue;
    }
    const std::vector<model::Allocation> freed = freed_by(*node, victims.uids);
    const model::NodeUsage usage = node->usage_for(*demand, now);
    if (makes_room(*demand, dra.get(), *node, usage, freed)) {
      answer.victims[name] = {victims.uids, victims.num_pdb_violations};
    } else {
      spdlog::debug("preempt {}: node {}: evicting the victims does not make room", answer.summary.pod, name);
    }
  }
  answer.summary.nodes_out = answer.victims.size();
  return answer;
}

}  // namespace extender::engine
