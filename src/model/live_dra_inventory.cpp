#include "extender/model/live_dra_inventory.h"

namespace extender::model {

LiveDraInventory::LiveDraInventory(const std::vector<ResourceSlice>& slices,
                                   const std::map<std::string, ResourceClaim>& claims, const DraRules& rules)
    : drivers_(rules.drivers.begin(), rules.drivers.end()) {
  auto nodes = dra_nodes_of(slices, rules);
  for (const auto& [name, node] : nodes) {
    for (const auto* list : {&node.gpus, &node.partitions}) {
      for (const DraNodeDevice& d : *list) node_of_[dra_device_id(d.driver, d.pool, d.device.name)] = name;
    }
  }
  Touched touched;
  for (const auto& [key, claim] : claims) hold(key, claim, touched);
  auto inv = std::make_shared<DraInventory>();
  for (auto& [name, node] : nodes) {
    mark(node, holders_);
    inv->nodes.emplace(name, std::make_shared<const NodeDra>(std::move(node)));
  }
  for (const auto& [key, results] : unmatched_) {
    inv->unmatched_results.insert(inv->unmatched_results.end(), results.begin(), results.end());
  }
  current_ = std::move(inv);
}

void LiveDraInventory::set_claim(const std::string& key, const ResourceClaim* claim) {
  const bool unmatched_before = unmatched_.contains(key);
  Touched touched;
  release(key, touched);
  if (claim) hold(key, *claim, touched);
  if (touched.empty() && !unmatched_before && !unmatched_.contains(key)) return;
  auto inv = std::make_shared<DraInventory>(*current_);
  for (const std::string& name : touched) {
    auto it = inv->nodes.find(name);
    auto node = std::make_shared<NodeDra>(*it->second);
    mark(*node, holders_);
    it->second = std::move(node);
  }
  inv->unmatched_results.clear();
  for (const auto& [k, results] : unmatched_) {
    inv->unmatched_results.insert(inv->unmatched_results.end(), results.begin(), results.end());
  }
  current_ = std::move(inv);
}

void LiveDraInventory::hold(const std::string& key, const ResourceClaim& claim, Touched& touched) {
  if (!claim.allocated) return;
  for (const DeviceResult& r : claim.results) {
    if (r.admin_access || !drivers_.contains(r.driver)) continue;
    std::string id = dra_device_id(r.driver, r.pool, r.device);
    auto it = node_of_.find(id);
    if (it == node_of_.end()) {
      unmatched_[key].push_back(claim.namespace_name + "/" + claim.name + ": " + id);
      continue;
    }
    touched.insert(it->second);
    ++holders_[id];
    held_[key].push_back(std::move(id));
  }
}

void LiveDraInventory::release(const std::string& key, Touched& touched) {
  unmatched_.erase(key);
  auto it = held_.find(key);
  if (it == held_.end()) return;
  for (const std::string& id : it->second) {
    touched.insert(node_of_.find(id)->second);
    if (auto h = holders_.find(id); --h->second == 0) holders_.erase(h);
  }
  held_.erase(it);
}

void LiveDraInventory::mark(NodeDra& node, const std::map<std::string, int, std::less<>>& holders) {
  for (auto* list : {&node.gpus, &node.partitions}) {
    for (DraNodeDevice& d : *list) d.allocated = holders.contains(dra_device_id(d.driver, d.pool, d.device.name));
  }
}

}  // namespace extender::model
