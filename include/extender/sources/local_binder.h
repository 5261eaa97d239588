#pragma once
// LocalBinder: standalone mode's Binder. Makes the engine's reservation of the pod on the node a
// placement in this process's memory; creates nothing in any cluster, records no devices and
// has no limit of writes. Placements are lost on restart. Thread-safe (the state is).
#include <string>
#include <utility>
#include <vector>

#include "extender/engine/binder.h"
#include "extender/state/cluster_state.h"

namespace extender::sources {

class LocalBinder final : public engine::Binder {
 public:
  explicit LocalBinder(state::ClusterState& state) : state_(state) {}
  // "" when the pod is placed on args.node (its reservation there became a placement, or it
  // already was placed there), otherwise why not.
  std::string bind(const wire::BindingArgs& args, engine::Deadline deadline) override;
  std::string record_devices(const std::vector<std::pair<std::string, std::string>>&, engine::Deadline) override {
    return {};
  }
  std::string record_gpu_share(const wire::BindingArgs&, const engine::GpuShareAssignment&, engine::Deadline) override {
    return {};
  }

 private:
  state::ClusterState& state_;
};

}  // namespace extender::sources
