#pragma once
// Fit: can a pod be placed on a node, given what the node offers and what is already in use?
// Pure: no I/O, no locks, no JSON. Reasons are short and stable, because the scheduler aggregates
// identical messages into its FailedScheduling events.
#include <string>

#include "extender/model/demand.h"
#include "extender/model/supply.h"
#include "extender/model/usage.h"
#include "extender/policy/gpu_devices.h"

namespace extender::policy {

enum class Verdict {
  kFits,
  kInsufficient,   // usage is in the way: evicting pods may help (FailedNodes)
  kUnresolvable,   // nothing evictable helps (FailedAndUnresolvableNodes)
};

struct Fit {
  Verdict verdict = Verdict::kFits;
  std::string reason;             // empty when it fits
  model::Allocation allocation;   // what the pod would hold on the node, when it fits
};

// How a fitting pod's GPU devices are chosen (gpu_devices.h); `mix` may be null (no fragmentation).
struct GpuPlacement {
  PackingStrategy strategy = PackingStrategy::kBinpack;
  const ShapeMix* mix = nullptr;
  // The verdict and the reason only (what /filter answers): no allocation and no choice of
  // devices for a pod that fits. The verdict and the reason are the same either way.
  bool verdict_only = false;
};

// Checks, in this order: values the node reports unreadably, GPU count per resource (whole GPUs of
// the node's device resource must be devices with nothing on them), a GPU share (one device with
// that much free memory), the memory floor per GPU (whole or shared), then storage pools (devices
// best fit). The first unresolvable reason wins over the first insufficient one. `usage` must
// already exclude the pod itself. The allocation records the GPU devices chosen by `gpu`.
Fit check_fit(const model::PodDemand& pod, const model::NodeSupply& node, const model::NodeUsage& usage,
              const GpuPlacement& gpu = {});

// Bytes for people, in binary units: "512 MiB", "40 GiB", "79.65 GiB".
std::string format_bytes(std::int64_t bytes);

}  // namespace extender::policy
