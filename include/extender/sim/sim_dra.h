#pragma once
// SimDra: Dynamic Resource Allocation as the simulator models a v1.37 cluster with
// DRAExtendedResource. An engine::DraSource over the inventory's DRA nodes (sources::DraGpus), each
// published as NVIDIA's driver would: one complete pool named after the node, devices gpu-0.. of
// type gpu with their index and memory; one DeviceClass, gpu.nvidia.com, whose extendedResourceName
// is the whole-GPU resource, so a pod asking that resource is served from DRA devices there. It
// also stands for kube-scheduler's DRA allocator: allocate() takes a node's lowest-index free
// devices (a deterministic stand-in for the allocator's choice) and marks them allocated.
// Snapshots are immutable: an allocation made while one is held copies the inventory first.
// Thread-safe (one mutex); owns everything it hands out.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "extender/common/result.h"
#include "extender/engine/ports.h"
#include "extender/model/dra.h"
#include "extender/model/dra_inventory.h"
#include "extender/policy/dra_demand.h"
#include "extender/sources/inventory.h"

namespace extender::sim {

// The node's ResourceSlice as NVIDIA's driver publishes it: `gpus` devices gpu-0.. with type "gpu",
// their index, and `memory_bytes` memory each (no memory capacity when 0).
model::ResourceSlice nvidia_gpu_slice(const sources::DraGpus& node);

class SimDra final : public engine::DraSource {
 public:
  SimDra(const std::vector<sources::DraGpus>& nodes, const std::string& whole_resource);

  std::shared_ptr<const model::DraInventory> dra_snapshot() const override;
  std::vector<model::DeviceClass> dra_device_classes() const override;
  std::shared_ptr<const policy::DraClasses> dra_classes() const override;

  // The node's DRA GPUs not allocated; -1 when it is not a DRA node.
  std::int64_t free_gpus(std::string_view node) const;
  // Allocates `count` free devices of `node`, lowest index first, and returns their indexes; an
  // error (nothing allocated) when the node is not a DRA node or has fewer free.
  Result<std::vector<std::int64_t>> allocate(std::string_view node, std::int64_t count);
  // DRA GPUs over all nodes.
  std::int64_t capacity() const { return capacity_; }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<model::DraInventory> inventory_;
  model::DeviceClass class_;
  std::shared_ptr<const policy::DraClasses> classes_;  // class_, compiled once
  std::int64_t capacity_ = 0;
};

}  // namespace extender::sim
