#pragma once
// PodDemand: what one pod needs of the resources this daemon manages, computed from a Pod by the
// Kubernetes rules (KEP-753 for init containers and sidecars, requests falling back to limits,
// spec.overhead). Pure functions over value types; thread-safe.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "extender/common/result.h"
#include "extender/model/gpu_devices.h"
#include "extender/model/pod.h"

namespace extender::model {

struct VolumeDemand {
  std::string volume;         // the pod's volume name
  std::string storage_class;  // empty when unknown (standalone PVC)
  std::string pool;           // the node pool it must be carved from
  std::int64_t bytes = 0;
  bool assumed = false;    // size and pool assumed: the claim could not be resolved
  std::string claim;       // namespace/name of its PersistentVolumeClaim
  bool ephemeral = false;  // a generic ephemeral volume: deleted with its pod
  // The node its claim already holds space on (selected for it), if any: the pod can run nowhere
  // else, and there the volume is placed again in place of the claim's own placement (counted once).
  std::string held_on;
  // Read for pools of local PersistentVolumes (model::Pool::whole_devices): the claim's access
  // modes (model::AccessMode bits; 0: any), whether it asks a block volume, and the volume it is
  // already bound to (spec.volumeName), if any.
  std::uint8_t access_modes = 0;
  bool block = false;
  std::string bound_volume;
  // Read for pools of csi-baremetal drives (model::Pool::drives): the storage type of the claim's
  // class (HDD, SSDLVG, ..., or ANY: a whole drive of any media, policy/drive_plan.h).
  std::string drive_class;
};

struct PodDemand {
  std::string uid;
  std::string name;
  std::string namespace_name;
  std::map<std::string, std::int64_t, std::less<>> gpus;  // managed GPU resource -> count (> 0)
  std::optional<std::int64_t> gpu_memory_floor_bytes;     // per GPU
  std::vector<VolumeDemand> volumes;                      // managed volumes of the pod
  std::int64_t gpu_share_bytes = 0;  // a share of one GPU, as memory (> 0: the pod asks no whole GPU)
  std::string gpu_share_resource;    // the resource it was asked as (aliyun.com/gpu-mem)
  // The pod's CPU (thousandths of a core) and memory (bytes) requests by the same rules, read for
  // every pod (the fragmentation policy weighs them, pods without GPUs too; the bind checks the
  // node has them free); 0 when unreadable (not a managed resource: the scheduler, not this
  // daemon, judges it).
  std::int64_t cpu_milli = 0;
  std::int64_t memory_bytes = 0;
  // Where the pod may run (the pod's own constraints, copied for pods that need something
  // managed), so that a bind of a remembered demand can check the node.
  PodConstraints constraints;

  bool needs_nothing() const { return gpus.empty() && volumes.empty() && gpu_share_bytes == 0; }
  bool needs_gpu() const { return !gpus.empty() || gpu_share_bytes > 0; }
  std::string display_name() const { return namespace_name + "/" + name; }
};

// What a PersistentVolumeClaim says, as far as placement cares.
struct ClaimInfo {
  std::string storage_class;
  std::int64_t bytes = 0;
  bool bound = false;  // bound to a volume, or a node already selected: needs no new capacity
  std::string node;    // the node selected for it (volume.kubernetes.io/selected-node), or that holds its local volume
  std::uint8_t access_modes = 0;  // spec.accessModes (model::AccessMode bits)
  bool block = false;             // spec.volumeMode Block
  std::string volume;             // spec.volumeName
  // csi-baremetal: the storage group whose drives alone may hold it (label kStorageGroupLabel).
  std::string storage_group;
};

inline constexpr const char* kStorageGroupLabel = "drive.csi-baremetal.dell.com/storage-group";

// Looks up a claim by namespace and name; nullopt when unknown.
using ClaimLookup = std::function<std::optional<ClaimInfo>(const std::string& ns, const std::string& name)>;

struct DemandRules {
  std::vector<std::string> gpu_resources;                         // e.g. nvidia.com/gpu, amd.com/gpu
  std::string gpu_memory_annotation;                              // e.g. scheduler-extender.io/gpu-memory
  std::map<std::string, std::string, std::less<>> pool_by_class;  // managed storage class -> pool
  // csi-baremetal's classes -> their storage type (HDD, SSDLVG, ...), for pools of drives. A
  // claim of one whose volume exists (spec.volumeName) is no demand: its drive's published
  // AvailableCapacity already went down by it.
  std::map<std::string, std::string, std::less<>> drive_class_by_class;
  std::string default_class;             // for claim templates without a class
  std::string default_pool;              // for claims that cannot be resolved
  std::int64_t default_claim_bytes = 0;  // for claims that cannot be resolved
  GpuShareRule share;                    // a request of share.memory_resource is a share of one GPU (in its unit)
};

// Computes the pod's demand. A pod asking both whole GPUs and a share is an error. `claims`
// resolves PersistentVolumeClaims; without it (standalone) every claim counts in the default pool
// with the default size. Errors name the field that is invalid.
Result<PodDemand> compute_demand(const Pod& pod, const DemandRules& rules, const ClaimLookup& claims = {});

// The effective request of one resource per KEP-753, in whole units (rounded up).
Result<std::int64_t> effective_request(const Pod& pod, std::string_view resource);
// Likewise in thousandths of a unit (rounded up), for fractional resources such as cpu.
Result<std::int64_t> effective_request_milli(const Pod& pod, std::string_view resource);

}  // namespace extender::model
