#include "gpu_model_count.h"

namespace extender::engine {

model::GpuModelSupply gpu_models_with_dra(const state::Snapshot& snapshot, const model::DraInventory& dra) {
  model::GpuModelSupply out = snapshot.gpu_models();
  for (const auto& [name, node_dra] : dra.nodes) {
    const state::NodeState* node = snapshot.find(name);
    if (!node || node->supply.gpu_devices.count > 0) continue;
    out.add_gpus(node->supply.gpu_model, static_cast<std::int64_t>(node_dra->gpus.size()));
  }
  return out;
}

}  // namespace extender::engine
