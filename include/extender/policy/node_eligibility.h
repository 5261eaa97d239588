#pragma once
// Node eligibility: could kube-scheduler have placed the pod on this node? The filters of
// kube-scheduler that need only the pod and the node, as its plugins judge them:
// NodeUnschedulable, NodeAffinity (nodeSelector and required node affinity), TaintToleration
// (NoSchedule and NoExecute taints) and NodeResourcesFit for cpu, memory and pods. /bind repeats
// them before any Binding, so a caller cannot place a pod where the scheduler never would.
// Each is judged only where the daemon knows the node (NodeSupply::taints_known for taints and
// unschedulable, labels_known for selector and affinity; cpu, memory and pods where non-zero).
// Pure: no I/O, no locks, no JSON; thread-safe.
#include <string>
#include <vector>

#include "extender/model/demand.h"
#include "extender/model/node.h"
#include "extender/model/pod_constraints.h"
#include "extender/model/supply.h"
#include "extender/model/usage.h"

namespace extender::policy {

// Which check a node failed.
enum class Ineligible {
  kNone,
  kUnschedulable,  // spec.unschedulable, not tolerated
  kNodeAffinity,   // nodeSelector or required node affinity not met
  kTaint,          // a NoSchedule or NoExecute taint not tolerated
  kResources,      // cpu, memory or pods requested beyond what is free
};

struct Eligibility {
  Ineligible check = Ineligible::kNone;
  std::string reason;  // empty when eligible; short and stable otherwise
  bool eligible() const { return check == Ineligible::kNone; }
};

// Checks, in kube-scheduler's plugin order: unschedulable, taints, node affinity, then resources
// (pods, cpu, memory). `usage` must already exclude the pod itself.
Eligibility node_eligibility(const model::PodDemand& pod, const model::NodeSupply& node, const model::NodeUsage& usage);

// The parts, for their own tests. Each answers "" when the node passes, else the reason.
// nodeSelector: every label equal; required affinity: any one term whose requirements all hold.
std::string node_affinity_mismatch(const model::PodConstraints& pod, const model::NodeSupply& node);
// The first NoSchedule or NoExecute taint that no toleration tolerates.
std::string untolerated_taint(const std::vector<model::Toleration>& tolerations, const model::NodeSupply& node);
std::string insufficient_resources(const model::PodDemand& pod, const model::NodeSupply& node,
                                   const model::NodeUsage& usage);

// Whether one toleration tolerates one taint (Kubernetes' Toleration.ToleratesTaint).
bool tolerates(const model::Toleration& toleration, const model::Taint& taint);
// Whether one requirement holds on these labels, as labels.Requirement reads it (an invalid one
// holds for no labels).
bool label_requirement_holds(const model::NodeSelectorRequirement& r, const model::StringMap& labels);
// Whether the node meets one term: all its expressions on labels and fields, and not empty.
bool term_matches(const model::NodeSelectorTerm& term, const model::NodeSupply& node);

}  // namespace extender::policy
