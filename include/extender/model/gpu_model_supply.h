#pragma once
// GpuModelSupply: a cluster's GPUs by model, the devices of each node (NodeSupply::gpu_devices)
// counted under its model (NodeSupply::gpu_model; a node without one counts in the total only);
// GPUs counted otherwise (DRA's) are added by model.
// What makes a task constrained to some models scarce: the share of the cluster's GPUs it may
// use. Kept up to date node by node (add, remove) by whoever publishes the nodes. A value type;
// pure; not thread-safe (its owner serialises changes, readers share a published copy).
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "extender/model/supply.h"

namespace extender::model {

struct GpuModelSupply {
  std::int64_t total = 0;
  std::map<std::string, std::int64_t, std::less<>> by_model;  // no zero entries

  void add(const NodeSupply& node);
  void remove(const NodeSupply& node);
  // Counts `gpus` more GPUs of `model` ("": of no model, in the total only).
  void add_gpus(std::string_view model, std::int64_t gpus);
  // The GPUs of the nodes whose model is one of `models`.
  std::int64_t of(std::span<const std::string> models) const;
  bool operator==(const GpuModelSupply&) const = default;
};

}  // namespace extender::model
