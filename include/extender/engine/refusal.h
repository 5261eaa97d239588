#pragma once
// Refusal: why a bind or preempt was refused before any capacity was looked at (who may bind), and
// its name for metrics and logs. A value type of its own, so that what only counts refusals (the
// metrics) need not include the engine (extender.h). Pure.
namespace extender::engine {

enum class Refusal {
  kNone,
  kUnknownPod,      // not a pending pod of the API server (or, standalone, never filtered here)
  kBound,           // already bound to a node
  kTerminating,     // being deleted
  kOtherScheduler,  // spec.schedulerName not in kubernetes.scheduler_names
  kNothingManaged,  // needs no GPU and no managed volume
  kNameMismatch,    // the uid belongs to a pod of another namespace or name
  kNodeIneligible,  // not a node kube-scheduler could place the pod on (policy/node_eligibility.h)
  kNotFiltered,     // the node did not pass /filter for this pod recently (state/filter_verdicts.h)
  kCount,
};
const char* refusal_name(Refusal r);

}  // namespace extender::engine
