#include "extender/policy/dra_fit.h"

#include <utility>

namespace extender::policy {

DraFit::DraFit(const model::PodDemand& pod, std::shared_ptr<const model::DraInventory> inventory,
               const std::vector<model::DeviceClass>& classes)
    : inventory_(std::move(inventory)), classes_(classes) {
  for (const auto& [resource, count] : pod.gpus) {
    auto need = need_for_extended_resource(classes_, resource, count);
    if (!need) continue;
    std::vector<DraNeed> needs;
    needs.push_back(std::move(*need));
    judges_.try_emplace(resource, classes_, *inventory_, std::move(needs));
  }
}

std::vector<std::string> DraFit::dra_resources(const model::NodeSupply& node) const {
  std::vector<std::string> out;
  if (judges_.empty()) return out;
  const model::NodeDra* dra = inventory_->node(node.name);
  if (!dra || (dra->gpus.empty() && dra->incomplete_pools.empty())) return out;
  for (const auto& [resource, judge] : judges_) {
    if (node.problems.contains(resource)) continue;
    auto it = node.gpus.find(resource);
    if (it != node.gpus.end() && it->second > 0) continue;
    out.push_back(resource);
  }
  return out;
}

Fit DraFit::check(const model::PodDemand& pod, const model::NodeSupply& node, const model::NodeUsage& usage,
                  const GpuPlacement& gpu) const {
  const std::vector<std::string> served = dra_resources(node);
  if (served.empty()) return check_fit(pod, node, usage, gpu);
  const model::NodeDra& dra = *inventory_->node(node.name);
  for (const auto& resource : served) {
    const DraVerdict verdict = judges_.find(resource)->second.judge(dra);
    if (!verdict.fits) {
      return {Verdict::kUnresolvable, {FitReason::Kind::kDraTooFewDevices, resource, 0, 0, 0, verdict.reason}, {}};
    }
  }
  model::PodDemand rest = pod;
  for (const auto& resource : served) rest.gpus.erase(resource);
  return check_fit(rest, node, usage, gpu);
}

}  // namespace extender::policy
