#pragma once
// Test fixtures for Dynamic Resource Allocation: one node's GPUs as NVIDIA's DRA driver publishes
// them. Plain functions returning values.
#include <string>

#include "extender/model/dra.h"

namespace extender::testing {

// One complete ResourceSlice (generation 1, resourceSliceCount 1) of driver gpu.nvidia.com, pool
// `node`, on `node`: devices gpu-0.. with type "gpu", their index, and `memory` capacity (none
// when empty).
inline model::ResourceSlice nvidia_gpu_slice(const std::string& node, int gpus, const std::string& memory = "80Gi") {
  model::ResourceSlice s;
  s.name = node + "-gpu.nvidia.com";
  s.driver = model::kNvidiaGpuDriver;
  s.node_name = node;
  s.pool = node;
  s.pool_generation = 1;
  s.pool_slice_count = 1;
  for (int i = 0; i < gpus; ++i) {
    model::DraDevice d;
    d.name = "gpu-" + std::to_string(i);
    d.attributes["gpu.nvidia.com/type"] = {model::DraAttribute::Kind::kString, 0, false, "gpu"};
    d.attributes["gpu.nvidia.com/index"] = {model::DraAttribute::Kind::kInt, i, false, {}};
    if (!memory.empty()) d.capacity["gpu.nvidia.com/memory"] = *model::Quantity::parse(memory);
    s.devices.push_back(std::move(d));
  }
  return s;
}

}  // namespace extender::testing
