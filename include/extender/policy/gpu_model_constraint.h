#pragma once
// Which GPU models a pod may use, as kube-scheduler enforces it: a nodeSelector or a required node
// affinity on model::kGpuProductLabel. Pure; thread-safe.
#include <string>
#include <vector>

#include "extender/model/pod_constraints.h"

namespace extender::policy {

// The models (sorted, unique) the pod's constraints admit; empty: any. The required affinity's
// terms are alternatives: each term's `In` requirements on the label (intersected) give its
// models, and a term without one admits any model, so the pod then may use any. A nodeSelector
// on the label narrows the result to its value. What cannot be written as a set of models
// (NotIn, Exists on the label) counts as any, and so do constraints that admit no model at all
// (no node would then take the pod, whose shape matters no more).
std::vector<std::string> gpu_models_allowed(const model::PodConstraints& constraints);

}  // namespace extender::policy
