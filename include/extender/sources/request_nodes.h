#pragma once
// RequestNodes: in standalone mode, the nodes carried in `Nodes` requests are remembered in the
// cluster state beside the inventory. The inventory wins: a request node named like an inventory
// node is ignored (the inventory is what the operator declared). At most `max_nodes` request
// nodes are remembered; past it, nodes with new names are not remembered (a warning is logged)
// while remembered ones are still updated, so made-up names cannot push real nodes out.
// Thread-safe.
#include <cstddef>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "extender/engine/ports.h"
#include "extender/model/node.h"
#include "extender/model/supply.h"
#include "extender/state/cluster_state.h"

namespace extender::sources {

class RequestNodes final : public engine::NodeSink {
 public:
  RequestNodes(state::ClusterState& state, const std::vector<model::NodeSupply>& inventory, model::SupplyRules rules,
               std::size_t max_nodes);

  // Upserts the nodes (unchanged ones publish nothing). Returns how many were left out because
  // the cap was reached.
  std::size_t observe(std::span<const model::Node* const> nodes) override;

 private:
  state::ClusterState& state_;
  std::set<std::string, std::less<>> inventory_;
  model::SupplyRules rules_;
  std::size_t max_nodes_;
  std::mutex mu_;
  std::set<std::string, std::less<>> remembered_;
  bool warned_ = false;
};

}  // namespace extender::sources
