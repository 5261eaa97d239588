#pragma once
// Pre-provisioned local PersistentVolumes (as local-static-provisioner publishes them), matched
// to a pod's claims as kube-scheduler's VolumeBinding does (its FindMatchingVolume): a claim bound
// to a volume takes that volume; the others, smallest request first, each take the smallest free
// volume of the claim's class whose capacity holds the request, whose access modes contain the
// claim's and whose volume mode is the claim's; no volume is taken twice. The candidates are the
// volumes whose required node affinity selects the node. Pure: no I/O, no locks, no JSON;
// thread-safe.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "extender/model/persistent_volume.h"
#include "extender/model/supply.h"

namespace extender::policy {

// Whether the volume lives on one node's disks and counts as one of its pool's devices: local
// (spec.local or spec.hostPath), with a required node affinity, not being deleted, and Available
// or Bound (a Released or Failed volume still holds data no claim may take).
bool local_volume_counted(const model::PersistentVolume& pv);
// Whether a claim may take it: Available and claimed by nobody.
bool local_volume_free(const model::PersistentVolume& pv);
// Whether its required node affinity selects the node (one of the terms holds; none: no node).
bool local_volume_on_node(const model::PersistentVolume& pv, const model::NodeSupply& node);

struct LocalVolumeOffer {
  std::string_view name;
  std::string_view storage_class;
  std::int64_t bytes = 0;
  std::uint8_t access_modes = 0;  // model::AccessMode bits
  bool block = false;
  bool free = false;  // claimed by nobody (and held by no placement or reservation)
};

struct LocalVolumeAsk {
  std::string_view storage_class;
  std::int64_t bytes = 0;
  std::uint8_t access_modes = 0;
  bool block = false;
  std::string_view bound_volume;  // the volume the claim is bound to; empty when unbound
};

// For each ask, the index of the offer it takes; nullopt when none fits.
std::vector<std::optional<std::size_t>> match_local_volumes(std::span<const LocalVolumeAsk> asks,
                                                            std::span<const LocalVolumeOffer> offers);

}  // namespace extender::policy
