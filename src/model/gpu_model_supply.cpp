#include "extender/model/gpu_model_supply.h"

namespace extender::model {

void GpuModelSupply::add(const NodeSupply& node) { add_gpus(node.gpu_model, node.gpu_devices.count); }

void GpuModelSupply::add_gpus(std::string_view model, std::int64_t gpus) {
  if (gpus <= 0) return;
  total += gpus;
  if (model.empty()) return;
  auto it = by_model.find(model);
  if (it == by_model.end()) it = by_model.emplace(std::string(model), 0).first;
  it->second += gpus;
}

void GpuModelSupply::remove(const NodeSupply& node) {
  const std::int64_t n = node.gpu_devices.count;
  if (n <= 0) return;
  total -= n;
  if (node.gpu_model.empty()) return;
  auto it = by_model.find(node.gpu_model);
  if (it == by_model.end()) return;
  it->second -= n;
  if (it->second <= 0) by_model.erase(it);
}

std::int64_t GpuModelSupply::of(std::span<const std::string> models) const {
  std::int64_t sum = 0;
  for (const auto& m : models) {
    if (auto it = by_model.find(m); it != by_model.end()) sum += it->second;
  }
  return sum;
}

}  // namespace extender::model
