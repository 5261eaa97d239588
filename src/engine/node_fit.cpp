#include "node_fit.h"

#include <memory>

#include "extender/engine/extender.h"

namespace extender::engine {

std::unique_ptr<const policy::DraFit> Extender::dra_fit(const model::PodDemand& demand) const {
  if (!deps_.dra || demand.gpus.empty()) return nullptr;
  auto classes = deps_.dra->dra_classes();
  if (!classes || classes->empty()) return nullptr;
  auto inventory = deps_.dra->dra_snapshot();
  if (!inventory) return nullptr;
  auto fit = std::make_unique<const policy::DraFit>(demand, std::move(inventory), std::move(classes));
  if (fit->empty()) return nullptr;
  return fit;
}

policy::Fit fit_on(const policy::DraFit* dra, const model::PodDemand& demand, const model::NodeSupply& node,
                   const model::NodeUsage& usage, const policy::GpuPlacement& gpu) {
  return dra ? dra->check(demand, node, usage, gpu) : policy::check_fit(demand, node, usage, gpu);
}

}  // namespace extender::engine
