#pragma once
// DraInventory: the GPUs DRA offers per node and which of them allocated claims hold, from the
// ResourceSlices of the configured drivers and the ResourceClaims.
// - Only node-local slices (spec.nodeName set) of the configured drivers count.
// - A device is a GPU when its `<driver>/type` attribute is "gpu", or when it has no type (a
//   driver that publishes only whole GPUs); any other type (NVIDIA's "mig", "vfio", ...) is a
//   partition: listed, never counted as a GPU.
// - Index from the `<driver>/index` attribute (-1 when absent, as NVIDIA's since v25.8.0: it only
//   orders the listing); memory from the `<driver>/memory` capacity (0 when absent).
// - Pools: only slices of a pool's highest generation are read. A pool whose current slices are
//   not exactly its resourceSliceCount, or that lists a device twice, is incomplete and not
//   counted at all (like the scheduler's allocator, which does not allocate from it); it is
//   named in the node's incomplete_pools.
// - Usage: each allocated, non-admin-access result (driver, pool, device) marks its device
//   allocated once, however many results or consumers name it; adminAccess results hold nothing.
//   Terminating claims still hold their devices. Results naming no counted device are listed.
// Each node's entry is immutable and shared: an inventory updated claim by claim
// (model/live_dra_inventory.h) copies only the nodes whose devices changed.
// Pure: no I/O, no locks, no JSON. A value type; thread-safe once built.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "extender/model/dra.h"

namespace extender::model {

struct DraRules {
  std::vector<std::string> drivers{kNvidiaGpuDriver};
  std::string type_attribute = "type";  // unqualified: taken in each driver's domain
  std::string gpu_type = "gpu";
  std::string index_attribute = "index";
  std::string memory_capacity = "memory";
};

struct DraNodeDevice {
  std::string driver;
  std::string pool;
  DraDevice device;  // name, attributes, capacity (what selectors read)
  std::string type;  // the type attribute's value; empty when absent
  std::int64_t index = -1;
  std::int64_t memory_bytes = 0;
  bool allocated = false;
  bool operator==(const DraNodeDevice&) const = default;
};

struct NodeDra {
  std::vector<DraNodeDevice> gpus;            // ordered by index, then name
  std::vector<DraNodeDevice> partitions;      // ordered by name
  std::vector<std::string> incomplete_pools;  // "<driver>/<pool>: <why>"
  // A 64-bit hash of what device selectors read of the node's devices, in the order above (each
  // one's driver, attributes and capacity; not names, pools or allocation): nodes with equal keys
  // have devices that every selector matches alike, so a count of matching devices computed on
  // one holds for the others.
  std::uint64_t selector_key = 0;
  std::int64_t allocated_gpus() const;
  bool operator==(const NodeDra&) const = default;
};

struct DraInventory {
  std::map<std::string, std::shared_ptr<const NodeDra>, std::less<>> nodes;  // by node name; never null
  std::vector<std::string> unmatched_results;                                // "<ns>/<claim>: <driver>/<pool>/<device>"

  const NodeDra* node(std::string_view name) const;
  // Equal nodes (by content, not by sharing) and unmatched results.
  bool operator==(const DraInventory& other) const;
};

DraInventory build_dra_inventory(const std::vector<ResourceSlice>& slices, const std::vector<ResourceClaim>& claims,
                                 const DraRules& rules = {});

// The nodes the slices give (the rules above), with no device allocated.
std::map<std::string, NodeDra, std::less<>> dra_nodes_of(const std::vector<ResourceSlice>& slices,
                                                         const DraRules& rules);
// "<driver>/<pool>/<device>": how a claim's result names a device.
std::string dra_device_id(std::string_view driver, std::string_view pool, std::string_view device);

}  // namespace extender::model
