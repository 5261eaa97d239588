#pragma once
// Test fixtures for Dynamic Resource Allocation below the simulator's layer (policy and engine
// tests; those above it take support/dra_slices.h): one node's GPUs as a slice of driver
// gpu.nvidia.com. Plain functions returning values.
#include <string>

#include "extender/model/dra.h"

namespace extender::testing {

// A ResourceSlice of pool `node` on `node`: devices gpu-0.. with type "gpu" and, when `product` is
// given, that productName (no index, no capacity).
inline model::ResourceSlice nvidia_gpus(const std::string& node, int gpus, const std::string& product = {}) {
  model::ResourceSlice s;
  s.name = node + "-slice";
  s.driver = model::kNvidiaGpuDriver;
  s.node_name = node;
  s.pool = node;
  for (int i = 0; i < gpus; ++i) {
    model::DraDevice d;
    d.name = "gpu-" + std::to_string(i);
    d.attributes["gpu.nvidia.com/type"] = {model::DraAttribute::Kind::kString, 0, false, "gpu"};
    if (!product.empty()) {
      d.attributes["gpu.nvidia.com/productName"] = {model::DraAttribute::Kind::kString, 0, false, product};
    }
    s.devices.push_back(std::move(d));
  }
  return s;
}

}  // namespace extender::testing
