#pragma once
// RequestNodes: in standalone mode, the nodes carried in `Nodes` requests are remembered in the
// cluster state, merged with the inventory (the inventory wins for pools and GPU memory; the
// request wins for GPU counts, labels and schedulability). Thread-safe.
#include <map>
#include <span>
#include <string>
#include <vector>

#include "extender/model/node.h"
#include "extender/model/supply.h"
#include "extender/state/cluster_state.h"

namespace extender::sources {

class RequestNodes {
 public:
  RequestNodes(state::ClusterState& state, const std::vector<model::NodeSupply>& inventory, model::SupplyRules rules);

  // The supply a request node stands for, after the inventory is applied.
  model::NodeSupply merged(const model::Node& node) const;
  // Upserts the nodes (unchanged ones publish nothing).
  void observe(std::span<const model::Node* const> nodes);

 private:
  state::ClusterState& state_;
  std::map<std::string, model::NodeSupply, std::less<>> inventory_;
  model::SupplyRules rules_;
};

}  // namespace extender::sources
