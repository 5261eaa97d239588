#pragma once
// Test fixtures for Dynamic Resource Allocation: one node's GPUs as NVIDIA's DRA driver publishes
// them (the simulator's sim::nvidia_gpu_slice). Plain functions returning values.
#include <cstdint>
#include <string>

#include "extender/model/dra.h"
#include "extender/sim/sim_dra.h"

namespace extender::testing {

// One complete ResourceSlice (generation 1, resourceSliceCount 1) of driver gpu.nvidia.com, pool
// `node`, on `node`: devices gpu-0.. with type "gpu", their index, and `memory_bytes` capacity
// (none when 0).
inline model::ResourceSlice nvidia_gpu_slice(const std::string& node, int gpus,
                                             std::int64_t memory_bytes = std::int64_t{80} << 30) {
  return sim::nvidia_gpu_slice({node, gpus, memory_bytes});
}

}  // namespace extender::testing
