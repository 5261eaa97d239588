#pragma once
// NodeIndex: a node map as published, with a hash index over its names. A lookup hashes the name
// once and compares names of equal hash only, where the map's own find compares names all along a
// tree path (long shared prefixes such as "gke-prod-gpu-a100-pool-" make each compare long).
// A lookup also gives the node's place in name order (its index in the map), which sorts as the
// names do without comparing them, and its NodeSummary. Built once per published map (sharing the
// names' part with the previous map's index when the names are the same), immutable after; keeps
// the map alive. Thread-safe to share.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "extender/model/gpu_availability.h"
#include "extender/model/gpu_model_supply.h"

namespace extender::state {

struct NodeState;

// The nodes of a snapshot in name order, each name a view of its NodeState's own (supply.name;
// the entry keeps the node alive). The entries lie in blocks of about kBlock, which a copy shares
// with the map it was copied from: a pod event on a large cluster republishes the map, and copies
// the changed node's block, not every node's entry. Immutable once published; set and erase are
// for the publisher, and write only blocks no other map holds.
class NodeMap {
 public:
  using value_type = std::pair<std::string_view, std::shared_ptr<const NodeState>>;
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = NodeMap::value_type;
    using difference_type = std::ptrdiff_t;
    using pointer = const value_type*;
    using reference = const value_type&;
    const_iterator() = default;
    reference operator*() const { return (*map_->blocks_[block_])[offset_]; }
    pointer operator->() const { return &**this; }
    const_iterator& operator++();
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++*this;
      return before;
    }
    // Iterators of one map compare by position; the difference is the distance in name order.
    bool operator==(const const_iterator& o) const { return pos_ == o.pos_; }
    difference_type operator-(const const_iterator& o) const {
      return static_cast<difference_type>(pos_) - static_cast<difference_type>(o.pos_);
    }

   private:
    friend class NodeMap;
    const_iterator(const NodeMap* map, std::size_t block, std::size_t offset, std::size_t pos)
        : map_(map), block_(block), offset_(offset), pos_(pos) {}
    const NodeMap* map_ = nullptr;
    std::size_t block_ = 0;
    std::size_t offset_ = 0;
    std::size_t pos_ = 0;
  };
  const_iterator begin() const { return {this, 0, 0, 0}; }
  const_iterator end() const { return {this, blocks_.size(), 0, size_}; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const_iterator find(std::string_view name) const;
  std::size_t count(std::string_view name) const { return find(name) == end() ? 0 : 1; }
  // Inserts or replaces the node called `name`, a view of the node's own name.
  void set(std::string_view name, std::shared_ptr<const NodeState> node);
  void erase(std::string_view name);

 private:
  static constexpr std::size_t kBlock = 256;  // a block splits in two past twice this
  using Block = std::vector<value_type>;
  struct Place {
    std::size_t block = 0;  // blocks_.size(): past the last
    std::size_t offset = 0;
  };
  Place lower_bound(std::string_view name) const;
  bool holds(Place p, std::string_view name) const {
    return p.block < blocks_.size() && p.offset < blocks_[p.block]->size() &&
           (*blocks_[p.block])[p.offset].first == name;
  }
  Block& owned(std::size_t block);  // the block, copied first if another map holds it too
  void renumber();

  std::vector<std::shared_ptr<Block>> blocks_;  // none empty
  std::vector<std::size_t> starts_;             // the position of each block's first entry
  std::size_t size_ = 0;
};

// What filter reads of a node before its NodeState, kept beside the node's place in the index.
struct NodeSummary {
  std::uint64_t claim_bits = 0;  // NodeState::claim_bits
  // The node's placed_gpus when it has one resource and no problem (gpus_summarized; resource
  // null when it has none): the figures of that resource, the name in the index's own copy.
  const std::string* resource = nullptr;
  std::int64_t allocatable = 0;
  std::int64_t free = 0;
  std::int64_t memory_bytes = 0;
  bool has_memory = false;
  bool gpus_summarized = false;
  bool reserved = false;  // a reservation is in flight (usage then depends on the time)

  // The node's placed_gpus, as filter reads them (gpus_summarized only).
  std::optional<model::GpuResourceAvailability> gpu() const;
  // Whether a pod without volumes, whose uid has `uid_bits`, surely sees the node's placed usage
  // (NodeState::sees_placed_only); false when it cannot be told from here.
  bool sees_placed_only(std::uint64_t uid_bits) const { return !reserved && (claim_bits & uid_bits) != uid_bits; }
};

class NodeIndex {
 public:
  explicit NodeIndex(std::shared_ptr<const NodeMap> nodes);
  // The index of `nodes`, a map that differs from previous.nodes() in the nodes named `changed`
  // alone: when those were changed rather than added or removed, the names' part of `previous`
  // is shared and only their entries are made again (a pod event costs its node, not the map).
  NodeIndex(std::shared_ptr<const NodeMap> nodes, const NodeIndex& previous, std::span<const std::string_view> changed);
  NodeIndex(const NodeIndex&) = delete;
  NodeIndex& operator=(const NodeIndex&) = delete;
  const NodeMap& nodes() const { return *nodes_; }
  struct Found {
    const NodeState* node = nullptr;  // null when the map has no such node
    std::uint32_t order = 0;          // the node's index in the map (name order)
    const NodeSummary* summary = nullptr;
    std::string_view name;  // the index's own copy of the name (names sorted lie together)
  };
  Found lookup(std::string_view name) const;
  // lookup() of each of `names` into `out` (as many), the memory reads of one name overlapped
  // with those of the next ones: what filter does for every name it is sent.
  void lookup(std::span<const std::string_view> names, std::span<Found> out) const;
  // The node named `name`; null when the map has none.
  const NodeState* find(std::string_view name) const { return lookup(name).node; }
  // Whether every name is made of lowercase letters, digits, '-' and '.' alone, as Kubernetes
  // node names are (such names need no escaping in JSON).
  bool names_dns_only() const { return layout_->names_dns_only; }
  // Two bits of a claim's uid, for NodeSummary::claim_bits.
  static std::uint64_t claim_bits(std::string_view uid);
  // The GPUs of the map's nodes by model (shared with the previous index while they are the same:
  // a new object whenever a node's GPU count or model changes).
  const model::GpuModelSupply& gpu_models() const { return *gpu_models_; }
  const std::shared_ptr<const model::GpuModelSupply>& shared_gpu_models() const { return gpu_models_; }

 private:
  static constexpr std::uint32_t kEmpty = UINT32_MAX;
  static std::size_t hash_of(std::string_view s);
  struct Slot {
    std::uint32_t hash = 0;  // the name hash's high half
    std::uint32_t order = kEmpty;
    std::uint32_t name_at = 0;  // the name's bytes in names_
    std::uint32_t name_size = 0;
  };
  struct alignas(64) Entry {  // by order: one cache line read per node found
    const NodeState* node = nullptr;
    NodeSummary summary;
  };
  // The entries in blocks of kBlock, shared with the previous index but for the blocks of the
  // nodes that changed: a pod event copies one block, not every node's entry.
  static constexpr std::size_t kBlock = 256;
  using Block = std::array<Entry, kBlock>;
  // What depends on the names alone, shared by the indexes of maps over the same names. Only
  // gpu_resources grows after the first index, on the publisher's thread; readers never read the
  // vector, only the strings its elements own, which never move.
  struct Layout {
    std::string names;        // every name, back to back (one block to read, not one per name)
    std::vector<Slot> slots;  // open addressing, linear probing; a power of two, at least twice the nodes
    std::vector<std::unique_ptr<std::string>> gpu_resources;  // the distinct names the summaries point to
    bool names_dns_only = true;
  };
  bool names_match(const Slot& slot, std::string_view name) const {
    return slot.name_size == name.size() && std::memcmp(names_ + slot.name_at, name.data(), name.size()) == 0;
  }
  const Entry& entry(std::uint32_t order) const { return (*blocks_[order / kBlock])[order % kBlock]; }
  Found found_at(const Slot& slot) const {
    const Entry& e = entry(slot.order);
    return {e.node, slot.order, &e.summary, std::string_view(names_ + slot.name_at, slot.name_size)};
  }
  void build();
  NodeSummary summarize(const NodeState& node);  // views its resource into layout_->gpu_resources

  std::shared_ptr<const NodeMap> nodes_;
  std::shared_ptr<const model::GpuModelSupply> gpu_models_;
  std::shared_ptr<Layout> layout_;
  const char* names_ = nullptr;                 // layout_->names.data()
  std::vector<std::shared_ptr<Block>> blocks_;  // a block is written only by the index that made it
};

}  // namespace extender::state
