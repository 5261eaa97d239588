#pragma once
// Fit: can a pod be placed on a node, given what the node offers and what is already in use?
// Pure: no I/O, no locks, no JSON. Reasons are values; format_reason gives their text where an
// answer is made. The texts are short and stable, because the scheduler aggregates identical
// messages into its FailedScheduling events.
#include <span>
#include <string>

#include "extender/model/demand.h"
#include "extender/model/gpu_availability.h"
#include "extender/model/supply.h"
#include "extender/model/usage.h"
#include "extender/policy/gpu_placement.h"

namespace extender::policy {

enum class Verdict {
  kFits,
  kInsufficient,  // usage is in the way: evicting pods may help (FailedNodes)
  kUnresolvable,  // nothing evictable helps (FailedAndUnresolvableNodes)
};

// Why a pod does not fit a node. Which fields a kind fills is stated beside it; bytes are bytes.
struct FitReason {
  enum class Kind {
    kNone,
    kInvalidValue,         // subject: the resource or "storage"; detail: the value the node reports
    kGpusNotAllocatable,   // subject: the resource; need; have: allocatable (<= 0: none)
    kGpusNotFree,          // subject: the resource; need; have: free; total: allocatable
    kShareNoGpu,           // subject: the share resource; need
    kShareNoGpuMemory,     // subject, need
    kShareGpuTooSmall,     // subject, need; total: a GPU's memory
    kShareNoRoom,          // subject, need; have: the largest free GPU memory; total: a GPU's memory
    kMemoryFloorUnknown,   // subject: the resource; need: memory per GPU
    kMemoryFloorTooSmall,  // subject, need; have: a GPU's memory
    kPoolShort,            // subject: the pool; need; have: free; total: capacity
    kVolumeNoDevice,       // subject: the pool; detail: the volume; need; have: the largest free device
    kVolumeHeldElsewhere,  // subject: the volume; detail: the node that holds its claim
    kNoSuchPool,           // subject: the pool; need
    kVolumeTooLarge,       // subject: the pool; detail: the volume; need; have: the pool's largest volume
    kNoLocalVolume,        // subject: the pool; detail: the volume; need; have: free volumes; total: volumes
    kDraTooFewDevices,     // subject: the resource; detail: the DRA judge's reason, whole (policy/dra_fit.h)
    kNoDrive,              // subject: the pool; detail: the drive plan's reason (policy/drive_plan.h)
  };
  Kind kind = Kind::kNone;
  std::string subject;
  std::int64_t need = 0;
  std::int64_t have = 0;
  std::int64_t total = 0;
  std::string detail;
  bool operator==(const FitReason&) const = default;
};

// The reason as the scheduler shows it; "" for kNone.
std::string format_reason(const FitReason& r);

struct Fit {
  Verdict verdict = Verdict::kFits;
  FitReason reason;              // kNone when it fits
  model::Allocation allocation;  // what the pod would hold on the node, when it fits
};

// How a fitting pod's GPU devices are chosen (gpu_devices.h); `mix` may be null (no fragmentation).
struct GpuPlacement {
  PackingStrategy strategy = PackingStrategy::kBinpack;
  const ShapeMix* mix = nullptr;
  // The verdict and the reason (what /filter answers), with the volumes' placements, which the
  // verdict comes from, as the only allocation: no choice of GPU devices for a pod that fits. The
  // verdict, the reason and the volumes' placements are the same either way.
  bool verdict_only = false;
};

// Checks, in this order: values the node reports unreadably, GPU count per resource (whole GPUs of
// the node's device resource must be devices with nothing on them), a GPU share (one device with
// that much free memory), the memory floor per GPU (whole or shared), then storage pools (devices
// best fit; local PersistentVolumes as policy/local_volumes.h matches them). The first unresolvable
// reason wins over the first insufficient one. `usage` must already exclude the pod itself. The
// allocation records the GPU devices chosen by `gpu`.
Fit check_fit(const model::PodDemand& pod, const model::NodeSupply& node, const model::NodeUsage& usage,
              const GpuPlacement& gpu = {});

// Whether the pod asks whole GPUs and nothing else this daemon manages (no share, no volume).
bool asks_whole_gpus_only(const model::PodDemand& pod);
// check_fit's verdict and reason for such a pod, read from the node's GPU availability for the
// usage in question (model::gpu_availability): the same as check_fit gives with verdict_only.
Fit check_whole_gpus(const model::PodDemand& pod, std::span<const model::GpuResourceAvailability> gpus);

// Bytes for people, in binary units: "512 MiB", "40 GiB", "79.65 GiB".
std::string format_bytes(std::int64_t bytes);

}  // namespace extender::policy
