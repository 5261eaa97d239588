#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <string>

#include "extender/engine/extender.h"
#include "extender/policy/preemption.h"
#include "filter_pass.h"

namespace extender::engine {
namespace {

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

// kube-scheduler's rule for a preemptor nominated to a node (PodEligibleToPreemptOthers), on this
// daemon's view, which may lag kube-scheduler's: while that node is still clearing, the pod preempts
// nowhere else, or one preemption evicts twice. The node is clearing while pods of lower priority
// are terminating there (any such pod, as in kube-scheduler up to v1.2x), and also while this view
// still holds pods of lower priority there, not even seen terminating, without which the pod would
// fit, when kube-scheduler no longer offers the node (in its view the pod fits: its victims are
// gone). Returns why the pod gets no victims elsewhere, or nullopt.
std::optional<std::string> nominated_node_clearing(const state::Snapshot& snap, const wire::PreemptionArgs& args,
                                                   const std::string& nominated, const model::PodDemand& demand,
                                                   const policy::DraFit* dra, TimePoint now) {
  const state::NodeState* n = nominated.empty() ? nullptr : snap.find(nominated);
  if (!n) return std::nullopt;
  std::size_t terminating = 0;
  std::vector<std::string> lower;
  for (const auto& [uid, claim] : n->claims) {
    if (claim.kind != state::Claim::Kind::kPlaced || claim.priority >= args.pod.priority) continue;
    if (claim.terminating) ++terminating;
    if (claim.source == "pod") lower.push_back(uid);
  }
  const std::string where = "nominated to node " + nominated + ", where ";
  if (terminating > 0) {
    return where + std::to_string(terminating) +
           " pod(s) of lower priority are still terminating; no victims elsewhere";
  }
  if (lower.empty() || args.victims_by_node.count(nominated)) return std::nullopt;
  const model::NodeUsage usage = n->usage_for(demand, now);
  if (makes_room(demand, dra, *n, usage, {}) || !makes_room(demand, dra, *n, usage, freed_by(*n, lower))) {
    return std::nullopt;
  }
  return where + std::to_string(lower.size()) +
         " pod(s) of lower priority are still placed in this view, and kube-scheduler no longer offers it (it sees"
         " room there); no victims elsewhere";
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
  if (auto why = nominated_node_clearing(snap, args, nominated, *demand, dra.get(), now)) {
    answer.summary.note = std::move(*why);
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
