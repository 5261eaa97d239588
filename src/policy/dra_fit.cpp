#include "extender/policy/dra_fit.h"

#include <algorithm>
#include <utility>

#include "extender/policy/preemption.h"

namespace extender::policy {

DraFit::DraFit(const model::PodDemand& pod, std::shared_ptr<const model::DraInventory> inventory,
               std::shared_ptr<const DraClasses> classes)
    : inventory_(std::move(inventory)), classes_(std::move(classes)) {
  for (const auto& [resource, count] : pod.gpus) {
    auto need = need_for_extended_resource(*classes_, resource, count);
    if (!need) continue;
    std::vector<DraNeed> needs;
    needs.push_back(std::move(*need));
    judges_.try_emplace(resource, *classes_, *inventory_, std::move(needs));
  }
}

std::vector<std::string> DraFit::dra_resources(const model::NodeSupply& node) const {
  const model::NodeDra* dra = nullptr;
  std::vector<std::string> out;
  for (const std::string* resource : served_on(node, dra)) out.push_back(*resource);
  return out;
}

std::optional<bool> DraFit::dra_can_serve(const model::NodeSupply& node) const {
  const model::NodeDra* dra = nullptr;
  const Served& served = served_on(node, dra);
  if (served.empty()) return std::nullopt;
  return !refusal(served, *dra);
}

bool DraFit::serves(const model::NodeSupply& node) const {
  const model::NodeDra* dra = nullptr;
  return !served_on(node, dra).empty();
}

const DraFit::Served& DraFit::served_on(const model::NodeSupply& node, const model::NodeDra*& dra) const {
  served_.clear();
  dra = nullptr;
  for (const auto& [resource, judge] : judges_) {
    if (node.problems.contains(resource)) continue;
    auto it = node.gpus.find(resource);
    if (it != node.gpus.end() && it->second > 0) continue;
    if (!dra) {
      dra = inventory_->node(node.name);
      if (!dra || (dra->gpus.empty() && dra->incomplete_pools.empty())) {
        dra = nullptr;
        served_.clear();
        return served_;
      }
    }
    served_.push_back(&resource);
  }
  return served_;
}

const model::PodDemand& DraFit::rest_of(const model::PodDemand& pod, const Served& served) const {
  if (!rest_ || rest_served_ != served) {
    rest_ = pod;
    for (const std::string* resource : served) rest_->gpus.erase(*resource);
    rest_served_ = served;
  }
  return *rest_;
}

std::optional<Fit> DraFit::refusal(const Served& served, const model::NodeDra& dra) const {
  for (const std::string* resource : served) {
    const DraVerdict verdict = judges_.find(*resource)->second.judge(dra);
    if (!verdict.fits) {
      return Fit{Verdict::kUnresolvable, {FitReason::Kind::kDraTooFewDevices, *resource, 0, 0, 0, verdict.reason}, {}};
    }
  }
  return std::nullopt;
}

Fit DraFit::check(const model::PodDemand& pod, const model::NodeSupply& node, const model::NodeUsage& usage,
                  const GpuPlacement& gpu) const {
  const model::NodeDra* dra = nullptr;
  const Served& served = served_on(node, dra);
  if (served.empty()) return check_fit(pod, node, usage, gpu);
  if (auto refused = refusal(served, *dra)) return std::move(*refused);
  return check_fit(rest_of(pod, served), node, usage, gpu);
}

std::optional<DraFit::ScoringView> DraFit::scoring_view(const model::NodeSupply& node,
                                                        const model::NodeUsage& usage) const {
  model::NodeUsage copy = usage;
  return take_scoring_view(node, copy);
}

std::optional<DraFit::ScoringView> DraFit::take_scoring_view(const model::NodeSupply& node,
                                                             model::NodeUsage& usage) const {
  const model::NodeDra* node_dra = nullptr;
  const Served& served = served_on(node, node_dra);
  if (served.empty()) return std::nullopt;
  const model::NodeDra& dra = *node_dra;
  const auto count = static_cast<std::int64_t>(dra.gpus.size());
  std::int64_t memory = 0;
  for (const auto& gpu : dra.gpus) {
    if (gpu.memory_bytes <= 0) {
      memory = 0;
      break;
    }
    memory = memory == 0 ? gpu.memory_bytes : std::min(memory, gpu.memory_bytes);
  }
  ScoringView view;
  view.supply.name = node.name;
  view.supply.gpus = node.gpus;
  view.supply.gpu_memory_bytes = node.gpu_memory_bytes;
  view.supply.pools = node.pools;
  view.supply.gpu_devices = node.gpu_devices;
  view.supply.cpu_milli = node.cpu_milli;
  view.supply.memory_bytes = node.memory_bytes;
  view.supply.pods = node.pods;
  view.supply.unschedulable = node.unschedulable;
  view.supply.gpu_model = node.gpu_model;
  view.usage = std::move(usage);
  const std::int64_t allocated = dra.allocated_gpus();
  for (const std::string* resource : served) {
    view.supply.gpus[*resource] = count;
    view.usage.gpus[*resource] = allocated;
    if (memory > 0) view.supply.gpu_memory_bytes[*resource] = memory;
  }
  if (view.supply.gpu_devices.count == 0) {
    view.supply.gpu_devices = {*served.front(), count, memory};
    for (std::size_t i = 0; i < dra.gpus.size(); ++i) {
      if (dra.gpus[i].allocated) view.usage.gpu_devices[static_cast<std::int64_t>(i)].whole += 1;
    }
  }
  return view;
}

bool DraFit::eviction_makes_room(const model::PodDemand& pod, const model::NodeSupply& node,
                                 const model::NodeUsage& usage, std::span<const model::Allocation> victims) const {
  const model::NodeDra* dra = nullptr;
  const Served& served = served_on(node, dra);
  if (served.empty()) return policy::eviction_makes_room(pod, node, usage, victims);
  if (refusal(served, *dra)) return false;
  return policy::eviction_makes_room(rest_of(pod, served), node, usage, victims);
}

}  // namespace extender::policy
