#pragma once
// The cluster's GPUs by model as fragmentation's scarcity weighs them (policy::ShapeWindow::mix).
// Private to the engine; a pure function of its arguments.
#include "extender/model/dra_inventory.h"
#include "extender/model/gpu_model_supply.h"
#include "extender/state/cluster_state.h"

namespace extender::engine {

// The device-plugin GPUs the snapshot counts, and the DRA GPUs of each node of the snapshot that
// has no device-plugin GPUs (DRA's are then the GPUs the verbs see there,
// policy::DraFit::scoring_view), counted under the node's model.
model::GpuModelSupply gpu_models_with_dra(const state::Snapshot& snapshot, const model::DraInventory& dra);

}  // namespace extender::engine
