#pragma once
// Decoders for the storage.k8s.io/v1 objects that say what local storage a node has: CSIDriver
// (whether the driver publishes capacity), CSIStorageCapacity (free space per class and node
// topology), StorageClass (its driver and parameters), and the core PersistentVolume (local PVs).
// Rules of k8s_objects.h: keys match case-insensitively, null equals absent, a field of the wrong
// type is an error naming its path. Pure; thread-safe.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "extender/common/result.h"
#include "extender/model/persistent_volume.h"
#include "extender/model/pod_constraints.h"
#include "extender/model/string_map.h"

namespace extender::wire {

struct CsiDriver {
  std::string name;
  bool storage_capacity = false;  // spec.storageCapacity
};
Result<CsiDriver> decode_csi_driver(const nlohmann::json& driver);

struct StorageCapacity {
  std::string key;  // namespace/name
  std::string storage_class;
  // nodeTopology as requirements (matchLabels as In); nullopt when absent (no node).
  std::optional<std::vector<model::NodeSelectorRequirement>> topology;
  std::optional<std::int64_t> capacity_bytes;    // absent: unknown (no space is assumed)
  std::optional<std::int64_t> max_volume_bytes;  // maximumVolumeSize
};
Result<StorageCapacity> decode_storage_capacity(const nlohmann::json& capacity);

// A StorageClass: its name, whether it is the cluster default, its provisioner (the CSI driver's
// name), its parameters and its volumeBindingMode.
struct StorageClass {
  std::string name;
  bool is_default = false;
  std::string provisioner;
  model::StringMap parameters;
  std::string binding_mode;
};
Result<StorageClass> decode_storage_class(const nlohmann::json& sc);

// A PersistentVolume (core/v1): name, class, spec.capacity.storage, access and volume modes,
// whether it is local (spec.local or spec.hostPath), spec.nodeAffinity.required's terms, phase,
// claimRef. Access modes Kubernetes does not define are ignored.
Result<model::PersistentVolume> decode_persistent_volume(const nlohmann::json& pv);

}  // namespace extender::wire
