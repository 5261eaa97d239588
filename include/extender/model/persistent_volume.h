#pragma once
// PersistentVolume: what placement reads of a pre-provisioned volume (the local PersistentVolumes
// local-static-provisioner publishes): its class, size, access modes and volume mode, the nodes
// its required node affinity selects, and whether it is free (phase Available, no claimRef) or
// which claim holds it. Decoded by `wire`, matched to claims by policy/local_volumes.h. Plain
// value type; thread-safe to share once built.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "extender/model/pod_constraints.h"

namespace extender::model {

// Access modes as bits: a claim's modes must all be among its volume's.
enum AccessMode : std::uint8_t {
  kReadWriteOnce = 1,
  kReadOnlyMany = 2,
  kReadWriteMany = 4,
  kReadWriteOncePod = 8,
};

struct PersistentVolume {
  std::string name;
  std::string storage_class;
  std::int64_t bytes = 0;         // spec.capacity.storage
  std::uint8_t access_modes = 0;  // AccessMode bits
  bool block = false;             // spec.volumeMode Block (else Filesystem)
  bool local = false;             // spec.local or spec.hostPath: the data lives on one node
  // spec.nodeAffinity.required's terms; nullopt when absent (the volume is on no one node).
  std::optional<std::vector<NodeSelectorTerm>> node_affinity;
  std::string phase;         // status.phase
  std::string claim;         // spec.claimRef as namespace/name; empty when none
  bool terminating = false;  // metadata.deletionTimestamp set
  bool operator==(const PersistentVolume&) const = default;
};

}  // namespace extender::model
