#pragma once
// NodeIndex: a node map as published, with a hash index over its names. A lookup hashes the name
// once and compares names of equal hash only, where the map's own find compares names all along a
// tree path (long shared prefixes such as "gke-prod-gpu-a100-pool-" make each compare long).
// A lookup also gives the node's place in name order (its index in the map), which sorts as the
// names do without comparing them, and its NodeSummary. Built once per published map, immutable after; keeps the map
// alive. Thread-safe to share.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "extender/model/gpu_availability.h"

namespace extender::state {

struct NodeState;
using NodeMap = std::map<std::string, std::shared_ptr<const NodeState>, std::less<>>;

// What filter reads of a node before its NodeState, kept in one array in name order.
struct NodeSummary {
  std::uint64_t claim_bits = 0;  // NodeIndex::claim_bits() of every claim's uid, or-ed together
  bool reserved = false;         // a reservation is in flight (usage then depends on the time)
  // Whether `gpus` is the node's placed_gpus whole: at most one resource, and no problem reported.
  bool gpus_summarized = false;
  std::uint8_t gpu_count = 0;          // 0 or 1, when gpus_summarized
  model::GpuResourceAvailability gpu;  // its resource a view into the index's own copy of the name

  std::span<const model::GpuResourceAvailability> gpus() const { return {&gpu, gpu_count}; }
  // Whether a pod without volumes, whose uid has `uid_bits`, surely sees the node's placed usage
  // (NodeState::sees_placed_only); false when it cannot be told from here.
  bool sees_placed_only(std::uint64_t uid_bits) const { return !reserved && (claim_bits & uid_bits) != uid_bits; }
};

class NodeIndex {
 public:
  explicit NodeIndex(std::shared_ptr<const NodeMap> nodes);
  const NodeMap& nodes() const { return *nodes_; }
  struct Found {
    const NodeState* node = nullptr;      // null when the map has no such node
    std::uint32_t order = 0;              // the node's index in the map (name order)
    const NodeSummary* summary = nullptr;
  };
  Found lookup(std::string_view name) const;
  // The node named `name`; null when the map has none.
  const NodeState* find(std::string_view name) const { return lookup(name).node; }
  // Two bits of a claim's uid, for NodeSummary::claim_bits.
  static std::uint64_t claim_bits(std::string_view uid);

 private:
  NodeSummary summarize(const NodeState& node);  // views its resource into gpu_resources_

  struct Slot {
    std::size_t hash = 0;
    std::uint32_t name_at = 0;  // the name's bytes in names_
    std::uint32_t name_size = 0;
    std::uint32_t order = 0;
    const NodeState* node = nullptr;  // null: an empty slot
  };
  std::shared_ptr<const NodeMap> nodes_;
  std::string names_;        // every name, back to back (one block to read, not one per name)
  std::vector<Slot> slots_;  // open addressing, linear probing; a power of two, at least twice the nodes
  std::vector<NodeSummary> summaries_;            // by order
  std::vector<std::unique_ptr<std::string>> gpu_resources_;  // the distinct names the summaries view
};

}  // namespace extender::state
