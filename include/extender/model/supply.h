#pragma once
// NodeSupply: what one node offers of the managed resources: GPUs per resource name, memory per
// GPU, local storage pools (optionally split into devices); and what kube-scheduler's own filters
// read of it (cpu, memory and pods allocatable, labels, taints, unschedulable). Built from a Node
// object by the rules below, or directly by the inventory. Value types; thread-safe once built.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "extender/common/result.h"
#include "extender/model/gpu_devices.h"
#include "extender/model/node.h"

namespace extender::model {

struct Device {
  std::string name;
  std::int64_t capacity_bytes = 0;
  // A local PersistentVolume's (Pool::whole_devices): its access modes (model::AccessMode bits)
  // and whether it is a block volume. Unused for devices carved at will.
  std::uint8_t access_modes = 0;
  bool block = false;
  // A csi-baremetal AvailableCapacity's (Pool::drives): its storage class, HDD, SSD, NVME (a whole
  // drive) or HDDLVG, SSDLVG, NVMELVG, SYSLVG (a volume group's free space).
  std::string drive_class;
  bool operator==(const Device&) const = default;
};

struct Pool {
  std::string name;
  std::int64_t capacity_bytes = 0;
  std::vector<Device> devices;        // empty: the pool is one free-form space
  std::int64_t max_volume_bytes = 0;  // the largest one volume may be (a driver's maximumVolumeSize); 0: no limit
  // Where the size comes from: empty for hand-written pools (annotation, inventory), else the
  // published object ("CSIStorageCapacity <namespace/name>"), whose figure is `published_bytes`
  // (capacity_bytes is that plus the claims the figure already reflects).
  std::string source;
  std::int64_t published_bytes = 0;
  // Each device is a pre-provisioned volume (a local PersistentVolume, source "local PVs"): a
  // claim takes one whole device, chosen as kube-scheduler's VolumeBinding does
  // (policy/local_volumes.h), and two claims never share one.
  bool whole_devices = false;
  // Each device is a csi-baremetal AvailableCapacity (source "csi-baremetal"): one pool per media
  // holds its drives and volume groups, and claims take them as policy/drive_plan.h plans.
  bool drives = false;
  // Claims selected for the node (volume.kubernetes.io/selected-node) without a volume that a
  // published pool does not count: larger than it could provision, or selected too long ago
  // (policy/capacity_accounting.h).
  std::int64_t ignored_bytes = 0;
  bool operator==(const Pool&) const = default;
};

struct NodeSupply {
  std::string name;
  std::map<std::string, std::int64_t, std::less<>> gpus;              // resource -> allocatable
  std::map<std::string, std::int64_t, std::less<>> gpu_memory_bytes;  // resource -> memory per GPU
  std::vector<Pool> pools;
  bool unschedulable = false;
  // Values the node reports that could not be read: subject (a GPU resource name, or "storage")
  // -> what is wrong. A pod that needs the subject cannot be placed on the node.
  std::map<std::string, std::string, std::less<>> problems;
  GpuDevices gpu_devices;  // the node's GPUs as devices (see gpu_devices.h)
  // Allocatable CPU (thousandths of a core) and memory (bytes): the inventory's `cpu` and `memory`,
  // or a Node's allocatable; 0 when not given (unknown: the policies then assume it never runs out).
  std::int64_t cpu_milli = 0;
  std::int64_t memory_bytes = 0;
  std::int64_t pods = 0;  // allocatable pods; 0 when not given (unknown: never runs out)
  // The node's GPU model: its kGpuProductLabel value (empty: none). Read from the labels once,
  // where the supply is built, so that placement compares it without a label lookup.
  std::string gpu_model;
  // Labels and taints, for the bind's eligibility check (policy/node_eligibility.h), judged only
  // where known: taints and unschedulable when read from a Node object (the watch, or a request's
  // Nodes); labels when read in full (the watch; a request's Nodes may be decoded with only the
  // labels GPUs need, and an inventory lists only those).
  StringMap labels;
  std::vector<Taint> taints;
  bool taints_known = false;
  bool labels_known = false;

  const Pool* find_pool(std::string_view pool_name) const;
  bool operator==(const NodeSupply&) const = default;
};

struct GpuResourceRule {
  std::string name;                    // e.g. nvidia.com/gpu
  std::string memory_label;            // e.g. nvidia.com/gpu.memory
  std::int64_t memory_label_unit = 1;  // bytes per label unit, e.g. 1048576 for MiB
};

struct SupplyRules {
  std::vector<GpuResourceRule> gpus;
  std::string pool_annotation_prefix;  // "<prefix><pool>": "2Ti" or "dev0=1Ti,dev1=1Ti"; empty: none
  GpuShareRule share;                  // the gpushare supply, read from allocatable into `gpus`
};

inline constexpr std::string_view kStorageSubject = "storage";
// The label NVIDIA's GPU Feature Discovery puts on each node with its GPU model, and on which pods
// that need a model place a required node affinity.
inline constexpr const char* kGpuProductLabel = "nvidia.com/gpu.product";

// Reads GPU allocatable, GPU memory labels and pool annotations. Values that cannot be read are
// recorded in `problems` and count as absent.
NodeSupply supply_from_node(const Node& node, const SupplyRules& rules);

// The node's GPU devices from its `gpus` and `gpu_memory_bytes` (see gpu_devices.h).
GpuDevices derive_gpu_devices(const NodeSupply& node, const std::vector<GpuResourceRule>& gpus,
                              const GpuShareRule& share);

// Parses a pool description: a capacity ("2Ti") or a device list ("nvme0=1Ti,nvme1=1Ti").
Result<Pool> parse_pool_spec(std::string name, std::string_view spec);

}  // namespace extender::model
