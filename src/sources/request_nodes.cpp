#include "extender/sources/request_nodes.h"

#include <spdlog/spdlog.h>

namespace extender::sources {

RequestNodes::RequestNodes(state::ClusterState& state, const std::vector<model::NodeSupply>& inventory,
                           model::SupplyRules rules, std::size_t max_nodes)
    : state_(state), rules_(std::move(rules)), max_nodes_(max_nodes) {
  for (const auto& n : inventory) inventory_.insert(n.name);
}

std::size_t RequestNodes::observe(std::span<const model::Node* const> nodes) {
  std::lock_guard lock(mu_);
  std::vector<model::NodeSupply> supplies;
  supplies.reserve(nodes.size());
  std::size_t left_out = 0;
  for (const auto* n : nodes) {
    if (inventory_.count(n->name)) continue;
    if (!remembered_.count(n->name)) {
      if (remembered_.size() >= max_nodes_) {
        ++left_out;
        continue;
      }
      remembered_.insert(n->name);
    }
    supplies.push_back(model::supply_from_node(*n, rules_));
  }
  if (left_out > 0 && !warned_) {
    warned_ = true;
    spdlog::warn(
        "standalone.max_request_nodes ({}) reached: request nodes with new names are not remembered "
        "({} left out of this request; logged once)",
        max_nodes_, left_out);
  }
  state_.upsert_nodes(std::move(supplies));
  return left_out;
}

}  // namespace extender::sources
