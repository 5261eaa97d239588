#pragma once
// How the engine's verbs judge one node: check_fit, or the DRA judge's check when the pod asks GPUs
// that Dynamic Resource Allocation may serve (Extender::dra_fit builds that judge once per verb,
// node_fit.cpp). Pure functions of their arguments; private to the engine.
#include "extender/model/demand.h"
#include "extender/model/supply.h"
#include "extender/model/usage.h"
#include "extender/policy/dra_fit.h"
#include "extender/policy/fit.h"

namespace extender::engine {

// check_fit, or the DRA judge's check when `dra` is given.
policy::Fit fit_on(const policy::DraFit* dra, const model::PodDemand& demand, const model::NodeSupply& node,
                   const model::NodeUsage& usage, const policy::GpuPlacement& gpu);

}  // namespace extender::engine
