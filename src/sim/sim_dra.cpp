#include "extender/sim/sim_dra.h"

#include <algorithm>

namespace extender::sim {

model::ResourceSlice nvidia_gpu_slice(const sources::DraGpus& node) {
  const std::string driver = model::kNvidiaGpuDriver;
  model::ResourceSlice s;
  s.name = node.node + "-" + driver;
  s.driver = driver;
  s.node_name = node.node;
  s.pool = node.node;
  s.pool_generation = 1;
  s.pool_slice_count = 1;
  for (std::int64_t i = 0; i < node.gpus; ++i) {
    model::DraDevice d;
    d.name = "gpu-" + std::to_string(i);
    d.attributes[driver + "/type"] = {model::DraAttribute::Kind::kString, 0, false, "gpu"};
    d.attributes[driver + "/index"] = {model::DraAttribute::Kind::kInt, i, false, {}};
    if (auto memory = Quantity::parse(std::to_string(node.memory_bytes)); memory && node.memory_bytes > 0) {
      d.capacity[driver + "/memory"] = *memory;
    }
    s.devices.push_back(std::move(d));
  }
  return s;
}

SimDra::SimDra(const std::vector<sources::DraGpus>& nodes, const std::string& whole_resource) {
  std::vector<model::ResourceSlice> slices;
  slices.reserve(nodes.size());
  for (const auto& n : nodes) {
    slices.push_back(nvidia_gpu_slice(n));
    capacity_ += n.gpus;
  }
  inventory_ = std::make_shared<model::DraInventory>(model::build_dra_inventory(slices, {}));
  const std::string driver = model::kNvidiaGpuDriver;
  class_ = {driver,
            {"device.driver == '" + driver + "' && device.attributes['" + driver + "'].type == 'gpu'"},
            whole_resource};
  classes_ = std::make_shared<const policy::DraClasses>(std::vector<model::DeviceClass>{class_});
}

std::shared_ptr<const model::DraInventory> SimDra::dra_snapshot() const {
  std::lock_guard lock(mu_);
  return inventory_;
}

std::vector<model::DeviceClass> SimDra::dra_device_classes() const { return {class_}; }

std::shared_ptr<const policy::DraClasses> SimDra::dra_classes() const { return classes_; }

std::int64_t SimDra::free_gpus(std::string_view node) const {
  std::lock_guard lock(mu_);
  const model::NodeDra* dra = inventory_->node(node);
  if (!dra) return -1;
  return static_cast<std::int64_t>(dra->gpus.size()) - dra->allocated_gpus();
}

Result<std::vector<std::int64_t>> SimDra::allocate(std::string_view node, std::int64_t count) {
  std::lock_guard lock(mu_);
  const model::NodeDra* held = inventory_->node(node);
  if (!held) return Error{"node " + std::string(node) + " has no DRA GPUs"};
  const std::int64_t free = static_cast<std::int64_t>(held->gpus.size()) - held->allocated_gpus();
  if (free < count) {
    return Error{"node " + std::string(node) + " has " + std::to_string(free) + " free DRA GPUs, the pod asks " +
                 std::to_string(count)};
  }
  if (inventory_.use_count() > 1) inventory_ = std::make_shared<model::DraInventory>(*inventory_);
  std::vector<std::int64_t> taken;
  auto copy = std::make_shared<model::NodeDra>(*held);
  inventory_->nodes.find(node)->second = copy;
  for (auto& gpu : copy->gpus) {
    if (static_cast<std::int64_t>(taken.size()) == count) break;
    if (gpu.allocated) continue;
    gpu.allocated = true;
    taken.push_back(gpu.index);
  }
  return taken;
}

}  // namespace extender::sim
