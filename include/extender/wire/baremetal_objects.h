#pragma once
// Decoders for csi-baremetal's objects (group csi-baremetal.dell.com/v1; Volume namespaced), with
// the field names of its CRDs (spec.Size, spec.storageClass, ...): AvailableCapacity (a free
// drive or a volume group's free space on a node), AvailableCapacityReservation (what a pod's
// volumes may take on which nodes) and Volume (a volume on a node); and the encoder of the
// reservation the daemon writes. Rules of k8s_objects.h: keys match case-insensitively, null
// equals absent, a field of the wrong type is an error naming its path. Pure; thread-safe.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "extender/common/result.h"
#include "extender/model/string_map.h"

namespace extender::wire {

struct AvailableCapacity {
  std::string name;
  std::string location;       // the drive's or the volume group's id
  std::string node_id;        // the node's id (its UID, or an annotation's value)
  std::string storage_class;  // HDD, SSD, NVME, HDDLVG, SSDLVG, NVMELVG, SYSLVG
  std::int64_t bytes = 0;     // free bytes (negative figures read as 0)
  model::StringMap labels;
};
Result<AvailableCapacity> decode_available_capacity(const nlohmann::json& ac);

// A reservation's states, as csi-baremetal's controller reads them.
inline constexpr const char* kReservationRequested = "REQUESTED";
inline constexpr const char* kReservationReserved = "RESERVED";
inline constexpr const char* kReservationRejected = "REJECTED";
inline constexpr const char* kReservationCancelled = "CANCELLED";

struct CapacityRequest {
  std::string name;  // the claim's name (or an ephemeral volume's)
  std::string storage_class;
  std::int64_t bytes = 0;
  std::string storage_group;
  std::vector<std::string> reservations;  // AvailableCapacity names, at most one per node
  bool operator==(const CapacityRequest&) const = default;
};

struct CapacityReservation {
  std::string name;  // <namespace>-<pod name>
  std::string resource_version;
  std::string pod_namespace;  // spec.Namespace
  std::string status;
  std::vector<std::string> requested_nodes;  // node ids
  std::vector<std::string> reserved_nodes;
  std::vector<CapacityRequest> requests;
  bool operator==(const CapacityReservation&) const = default;
  // Equal but for resource_version: the same content, whichever write of it this copy comes from.
  bool same_content(CapacityReservation other) const {
    other.resource_version = resource_version;
    return *this == other;
  }
};
Result<CapacityReservation> decode_capacity_reservation(const nlohmann::json& acr);
// The object to create or replace (resource_version set: an update guarded by it).
nlohmann::json encode_capacity_reservation(const CapacityReservation& acr);

struct BaremetalVolume {
  std::string name;
  std::string node_id;
  std::string location;
  std::string storage_class;
  std::int64_t bytes = 0;
  std::string csi_status;
};
Result<BaremetalVolume> decode_baremetal_volume(const nlohmann::json& volume);

}  // namespace extender::wire
