#include "extender/sources/request_nodes.h"

namespace extender::sources {

RequestNodes::RequestNodes(state::ClusterState& state, const std::vector<model::NodeSupply>& inventory,
                           model::SupplyRules rules)
    : state_(state), rules_(std::move(rules)) {
  for (const auto& n : inventory) inventory_.emplace(n.name, n);
}

model::NodeSupply RequestNodes::merged(const model::Node& node) const {
  model::NodeSupply supply = model::supply_from_node(node, rules_);
  auto inv = inventory_.find(node.name);
  if (inv == inventory_.end()) return supply;
  supply.pools = inv->second.pools;
  supply.problems.erase(std::string(model::kStorageSubject));
  for (const auto& [resource, bytes] : inv->second.gpu_memory_bytes) {
    supply.gpu_memory_bytes[resource] = bytes;
  }
  return supply;
}

void RequestNodes::observe(std::span<const model::Node* const> nodes) {
  std::vector<model::NodeSupply> supplies;
  supplies.reserve(nodes.size());
  for (const auto* n : nodes) supplies.push_back(merged(*n));
  state_.upsert_nodes(std::move(supplies));
}

}  // namespace extender::sources
