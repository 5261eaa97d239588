#pragma once
// NodeIndex: a node map as published, with a hash index over its names. A lookup hashes the name
// once and compares names of equal hash only, where the map's own find compares names all along a
// tree path (long shared prefixes such as "gke-prod-gpu-a100-pool-" make each compare long).
// Built once per published map, immutable after; keeps the map alive. Thread-safe to share.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace extender::state {

struct NodeState;
using NodeMap = std::map<std::string, std::shared_ptr<const NodeState>, std::less<>>;

class NodeIndex {
 public:
  explicit NodeIndex(std::shared_ptr<const NodeMap> nodes);
  const NodeMap& nodes() const { return *nodes_; }
  // The node named `name`; null when the map has none.
  const NodeState* find(std::string_view name) const;

 private:
  struct Slot {
    std::size_t hash = 0;
    std::uint32_t name_at = 0;  // the name's bytes in names_
    std::uint32_t name_size = 0;
    const NodeState* node = nullptr;  // null: an empty slot
  };
  std::shared_ptr<const NodeMap> nodes_;
  std::string names_;        // every name, back to back (one block to read, not one per name)
  std::vector<Slot> slots_;  // open addressing, linear probing; a power of two, at least twice the nodes
};

}  // namespace extender::state
