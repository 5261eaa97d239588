#include "extender/policy/gpu_model_constraint.h"

#include <algorithm>
#include <iterator>
#include <optional>

#include "extender/model/supply.h"

namespace extender::policy {
namespace {

using Models = std::vector<std::string>;

Models sorted_unique(Models v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

Models intersect(const Models& a, const Models& b) {
  Models out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// The models one term admits; nullopt: any.
std::optional<Models> term_models(const model::NodeSelectorTerm& term) {
  std::optional<Models> out;
  for (const auto& r : term.match_expressions) {
    if (r.key != model::kGpuProductLabel || r.op != "In") continue;
    Models values = sorted_unique(r.values);
    out = out ? intersect(*out, values) : std::move(values);
  }
  return out;
}

// The models the required affinity admits; nullopt: any (or no affinity).
std::optional<Models> affinity_models(const model::PodConstraints& c) {
  if (!c.required_node_affinity || c.required_node_affinity->empty()) return std::nullopt;
  Models all;
  for (const auto& term : *c.required_node_affinity) {
    auto models = term_models(term);
    if (!models) return std::nullopt;
    all.insert(all.end(), models->begin(), models->end());
  }
  return sorted_unique(std::move(all));
}

}  // namespace

std::vector<std::string> gpu_models_served(const model::PodDemand& pod, const DraFit& dra,
                                           std::span<const model::NodeSupply* const> nodes) {
  Models models;
  for (const model::NodeSupply* node : nodes) {
    const std::optional<bool> by_dra = dra.dra_can_serve(*node);
    const bool by_plugin = std::any_of(pod.gpus.begin(), pod.gpus.end(), [&](const auto& asked) {
      const auto it = node->gpus.find(asked.first);
      return it != node->gpus.end() && it->second > 0;
    });
    if (!by_plugin && !by_dra.value_or(false)) continue;
    if (node->gpu_model.empty()) return {};
    models.push_back(node->gpu_model);
  }
  return sorted_unique(std::move(models));
}

std::vector<std::string> gpu_models_of_both(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return intersect(a, b);
}

std::vector<std::string> gpu_models_allowed(const model::PodConstraints& constraints) {
  std::optional<Models> models = affinity_models(constraints);
  if (auto it = constraints.node_selector.find(model::kGpuProductLabel); it != constraints.node_selector.end()) {
    const Models selected{it->second};
    models = models ? intersect(*models, selected) : selected;
  }
  return models ? std::move(*models) : Models{};
}

}  // namespace extender::policy
