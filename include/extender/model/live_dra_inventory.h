#pragma once
// LiveDraInventory: a DraInventory (model/dra_inventory.h) kept up to date claim by claim. Built
// whole from the slices and claims; then set_claim() applies one claim's new version: only the
// nodes whose devices that claim allocates or releases are copied (copy on write), every other
// node's entry is shared with the previous inventory. After any sequence of set_claim() calls,
// inventory() equals build_dra_inventory() of the same slices and the current claims in the
// order of their keys. A slice change is not applied here: the owner builds a new one.
// Pure: no I/O, no locks, no JSON. Not thread-safe (its owner serialises calls); the inventories
// it hands out are immutable and outlive it.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "extender/model/dra.h"
#include "extender/model/dra_inventory.h"

namespace extender::model {

class LiveDraInventory {
 public:
  // `claims` by key ("<namespace>/<name>"), the order in which unmatched results are listed.
  LiveDraInventory(const std::vector<ResourceSlice>& slices, const std::map<std::string, ResourceClaim>& claims,
                   const DraRules& rules);

  // The claim of `key` is now `claim` (null: deleted).
  void set_claim(const std::string& key, const ResourceClaim* claim);

  // Never null.
  std::shared_ptr<const DraInventory> inventory() const { return current_; }

 private:
  using Touched = std::set<std::string, std::less<>>;  // node names
  void hold(const std::string& key, const ResourceClaim& claim, Touched& touched);
  void release(const std::string& key, Touched& touched);
  static void mark(NodeDra& node, const std::map<std::string, int, std::less<>>& holders);

  std::set<std::string, std::less<>> drivers_;
  std::map<std::string, std::string, std::less<>> node_of_;    // device id -> node name, counted devices only
  std::map<std::string, int, std::less<>> holders_;            // device id -> results naming it
  std::map<std::string, std::vector<std::string>> held_;       // claim key -> device ids of its counted results
  std::map<std::string, std::vector<std::string>> unmatched_;  // claim key -> its unmatched results
  std::shared_ptr<const DraInventory> current_;
};

}  // namespace extender::model
