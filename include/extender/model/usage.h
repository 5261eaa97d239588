#pragma once
// Allocation: what one pod holds on one node (GPUs, and where each of its volumes was carved).
// NodeUsage: the sum of the allocations on a node. Value types; thread-safe once built.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "extender/model/gpu_devices.h"

namespace extender::model {

struct VolumePlacement {
  std::string volume;
  std::string pool;
  std::string device;  // empty when the pool has no devices (or, until the ledger resolves it, unknown)
  std::int64_t bytes = 0;
  std::string claim;       // namespace/name of the PersistentVolumeClaim, when known
  std::string freed_with;  // uid of the pod whose deletion frees it (generic ephemeral volume), or empty
  bool operator==(const VolumePlacement&) const = default;
};

struct Allocation {
  std::map<std::string, std::int64_t, std::less<>> gpus;
  std::vector<VolumePlacement> volumes;
  std::vector<GpuHold> gpu_devices;  // the GPU devices held (whole GPUs and shares), when recorded
  std::int64_t cpu_milli = 0;        // the pod's CPU request (see demand.h)
  std::int64_t memory_bytes = 0;     // the pod's memory request, likewise
  std::int64_t pods = 0;             // 1 for a pod's allocation, 0 for a claimed volume's
  bool operator==(const Allocation&) const = default;
};

struct NodeUsage {
  std::map<std::string, std::int64_t, std::less<>> gpus;
  std::map<std::string, std::int64_t, std::less<>> pool_bytes;
  std::map<std::string, std::int64_t, std::less<>> device_bytes;  // key: pool + "/" + device
  // Of the above, what generic ephemeral volumes hold (freed when their pods are evicted).
  std::map<std::string, std::int64_t, std::less<>> pool_freeable;
  std::map<std::string, std::int64_t, std::less<>> device_freeable;
  std::int64_t volumes = 0;
  GpuDeviceUsage gpu_devices;            // per device index
  std::int64_t cpu_milli = 0;            // CPU requested by the allocations, summed
  std::int64_t memory_bytes = 0;         // memory requested by the allocations, summed
  std::int64_t pods = 0;                 // pods among the allocations
  std::int64_t whole_gpu_holds() const;  // devices held whole, summed over claims

  void add(const Allocation& a) { apply(a, 1); }
  void subtract(const Allocation& a) { apply(a, -1); }
  std::int64_t gpus_used(std::string_view resource) const;
  std::int64_t pool_used(std::string_view pool) const;
  std::int64_t device_used(std::string_view pool, std::string_view device) const;
  std::int64_t pool_freeable_bytes(std::string_view pool) const;
  std::int64_t device_freeable_bytes(std::string_view pool, std::string_view device) const;
  bool operator==(const NodeUsage&) const = default;

 private:
  void apply(const Allocation& a, int sign);
};

std::string device_key(std::string_view pool, std::string_view device);

// The bytes a usage holds on the devices of one pool, read in one walk of its device_bytes: for a
// pool of many devices (csi-baremetal's drives), one key built instead of one per device. used()
// gives what NodeUsage::device_used gives. Views into the usage, which must outlive it unchanged.
class PoolDeviceUse {
 public:
  PoolDeviceUse(const NodeUsage& usage, std::string_view pool);
  std::int64_t used(std::string_view device) const;

 private:
  std::vector<std::pair<std::string_view, std::int64_t>> used_;  // by device name
};

// The ledger's device rule: places volumes of `sizes`, in order, each on the device with the least
// free space that still holds it (best fit), and returns each one's device index; nullopt for a
// volume no device holds. `free` is each device's free space and is updated. Deterministic: the
// same free space and sizes give the same answer on every replica.
std::vector<std::optional<std::size_t>> best_fit_devices(std::vector<std::int64_t>& free,
                                                         const std::vector<std::int64_t>& sizes);

}  // namespace extender::model
