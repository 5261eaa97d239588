#pragma once
// ClusterView: what the status page and `inspect` show of one snapshot, as plain values: each
// node's GPUs as cells (device-plugin devices with the claims that hold them whole or in shares,
// counted GPUs of other resources, DRA GPUs and partitions such as MIG), its pools (published
// figure, held by binds in flight, free, where the size comes from), groups of alike nodes, and
// the placement quality (the allocated share of GPUs, and the fragmented share of free GPUs
// against the learned mix of shapes, policy/gpu_placement.h). Pure over an immutable snapshot and
// DRA inventory; thread-safe.
#include <cstdint>
#include <string>
#include <vector>

#include "extender/common/clock.h"
#include "extender/model/dra_inventory.h"
#include "extender/policy/gpu_placement.h"
#include "extender/state/cluster_state.h"

namespace extender::server {

struct GpuHolder {
  std::string pod;  // namespace/name
  bool whole = false;
  std::int64_t bytes = 0;  // a share's memory
  bool in_flight = false;  // a reservation of a bind in flight
};

struct GpuCell {
  enum class Kind { kDevice, kCounted, kDra, kPartition };
  Kind kind = Kind::kDevice;
  std::string label;                // "0" (device index), "nvidia.com/gpu", a DRA device's name
  std::string resource;             // the resource or DRA driver
  std::int64_t capacity_bytes = 0;  // 0: unknown
  std::int64_t used_bytes = 0;      // shares' memory (capacity when held whole)
  bool whole = false;               // held whole (or allocated, for DRA)
  std::vector<GpuHolder> holders;
  bool free() const { return !whole && holders.empty(); }
  bool shared() const { return !whole && !holders.empty(); }
};

struct PoolRow {
  std::string name;
  std::string source;  // "hand-written" (annotation, inventory) or the published object
  std::int64_t capacity_bytes = 0;
  std::int64_t published_bytes = -1;  // the published figure; -1 for hand-written pools
  std::int64_t used_bytes = 0;        // by placed pods and binds in flight
  std::int64_t in_flight_bytes = 0;   // of which binds in flight hold
  std::int64_t free_bytes() const { return capacity_bytes - used_bytes; }
};

struct NodeRow {
  std::string name;
  std::vector<GpuCell> gpus;
  std::vector<PoolRow> pools;
  std::int64_t gpus_total = 0;
  std::int64_t gpus_whole = 0;   // held whole (or allocated DRA devices)
  std::int64_t gpus_shared = 0;  // holding shares only
  std::int64_t gpus_free = 0;
  std::size_t pods = 0;
  std::size_t in_flight = 0;  // reservations of binds in flight
  bool unschedulable = false;
  std::vector<std::string> problems;  // "subject: what is wrong"
  std::string shape;                  // what alike nodes share: GPU resources, counts, memory, pools
};

NodeRow node_row(const state::NodeState& node, const model::NodeDra* dra, TimePoint now);

struct NodeGroup {
  std::string shape;
  std::size_t nodes = 0;
  std::string first;  // the first node, in name order
  std::int64_t gpus_total = 0;
  std::int64_t gpus_whole = 0;
  std::int64_t gpus_shared = 0;
  std::int64_t gpus_free = 0;
  std::int64_t pool_capacity_bytes = 0;
  std::int64_t pool_free_bytes = 0;
  std::size_t pods = 0;
  std::size_t in_flight = 0;
  std::size_t unschedulable = 0;
};

struct PlacementQuality {
  std::size_t nodes = 0;
  std::int64_t gpus_total = 0;
  std::int64_t gpus_allocated = 0;  // whole, plus shares in GPUs of memory
  double allocated_share = 0;       // gpus_allocated / gpus_total (0 without GPUs)
  // Free GPU capacity in GPUs, and of it what the mix of shapes cannot use (the expected
  // fragmentation, summed over nodes with devices); the share is their ratio (0 when nothing is free).
  double free_gpus = 0;
  double fragmented_gpus = 0;
  double fragmented_share = 0;
  bool mix_known = false;
  std::int64_t pool_capacity_bytes = 0;
  std::int64_t pool_used_bytes = 0;
};

struct ClusterSummary {
  std::vector<NodeGroup> groups;  // most nodes first
  PlacementQuality quality;
};

// One pass over every node; `mix` may be empty (then no fragmentation figure).
ClusterSummary summarise(const state::Snapshot& snapshot, const model::DraInventory* dra, const policy::ShapeMix& mix,
                         TimePoint now);

// "2 GiB" etc. (policy::format_bytes) and a fraction as "37.5%".
std::string percent(double fraction);

}  // namespace extender::server
