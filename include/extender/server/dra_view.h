#pragma once
// The /debug/dra view: what the daemon reads of Dynamic Resource Allocation, as indented JSON a
// person reads with curl. Per node its DRA GPUs (driver, pool, device, index, memory, allocated),
// its partitions (MIG and other types, not counted as GPUs), its incomplete pools, and a
// device-plugin resource offered beside DRA GPUs (a misconfiguration); the DeviceClasses with the
// selector expressions the daemon cannot evaluate (needs of those classes pass unjudged); claim
// results that name no device the daemon counts. Pure rendering.
#include <string>
#include <vector>

#include "extender/model/dra.h"
#include "extender/model/dra_inventory.h"
#include "extender/state/cluster_state.h"

namespace extender::server {

// `inventory` null: DRA is not served (standalone, or an API server without resource.k8s.io/v1).
std::string render_dra(const model::DraInventory* inventory, const std::vector<model::DeviceClass>& classes,
                       const state::Snapshot& snapshot);

}  // namespace extender::server
