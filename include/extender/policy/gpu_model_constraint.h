#pragma once
// Which GPU models a pod may use, as kube-scheduler enforces it: a nodeSelector or a required node
// affinity on model::kGpuProductLabel, and the selectors of the DeviceClasses its DRA-backed
// resources name. Pure; thread-safe.
#include <span>
#include <string>
#include <vector>

#include "extender/model/demand.h"
#include "extender/model/pod_constraints.h"
#include "extender/model/supply.h"
#include "extender/policy/dra_fit.h"

namespace extender::policy {

// The models (sorted, unique) the pod's constraints admit; empty: any. The required affinity's
// terms are alternatives: each term's `In` requirements on the label (intersected) give its
// models, and a term without one admits any model, so the pod then may use any. A nodeSelector
// on the label narrows the result to its value. What cannot be written as a set of models
// (NotIn, Exists on the label) counts as any, and so do constraints that admit no model at all
// (no node would then take the pod, whose shape matters no more).
std::vector<std::string> gpu_models_allowed(const model::PodConstraints& constraints);

// The models of the nodes that could give `pod` (for which `dra` was built) its GPUs: a node
// serving a resource of the pod from its device plugin (allocatable), or one whose DRA devices
// match the classes' selectors in the number asked (DraFit::dra_can_serve); so a class selecting
// devices by productName binds the pod to the models of the nodes that have them. Empty: any (no
// node serves the pod, or one that does has no model: model::NodeSupply::gpu_model).
std::vector<std::string> gpu_models_served(const model::PodDemand& pod, const DraFit& dra,
                                           std::span<const model::NodeSupply* const> nodes);

// Models both sets admit (each sorted and unique; empty: any); any when they share none.
std::vector<std::string> gpu_models_of_both(const std::vector<std::string>& a, const std::vector<std::string>& b);

}  // namespace extender::policy
