#pragma once
// BaremetalStore (private to sources): csi-baremetal's drives as its own objects describe them
// (group csi-baremetal.dell.com/v1), for KubeCluster:
// - each AvailableCapacity (AC) is a device of its node's pool for its media, "csi-baremetal:SSD"
//   holding the SSD drives and the SSDLVG volume groups (model::Pool::drives, planned by
//   policy/drive_plan.h); the drives of a storage group (AC label
//   drive.csi-baremetal.dell.com/storage-group) form a pool of their own, "csi-baremetal:SSD/<group>",
//   for the claims with that label alone (model::compute_demand); an AC whose csi-baremetal taint
//   label says NoSchedule offers nothing. Published through CapacityStore, with the classes of
//   options.provisioner mapped to their pools by parameters.storageType as csi-baremetal reads it
//   (policy::storage_type_of: upper-cased, ANY when unknown; an ANY class to the pool
//   "csi-baremetal:ANY", which stands for the HDD, SSD and NVME pools: policy::any_class_pools);
//   both only once the ACs were listed.
// - each RESERVED AvailableCapacityReservation holds the drives it lists for its claims in the
//   state ("csi-baremetal reservation" placements, one per node and reservation): on every node
//   while the claim has no selected node, then on that node only; its own pod does not count
//   them (state::NodeState::usage_for).
// - each Volume object counts as a volume of its node ("csi-baremetal volume" placements of no
//   bytes: its AC's figure already went down by it), so volume balance counts them.
// A node's id is as csi-baremetal resolves it (sources/baremetal_node_id.h); a node outside
// options.node_selector has none and offers nothing; which id each node uses is logged once (and
// again when it changes). Thread-safe; its lock is taken before CapacityStore's and the state's
// and is never held across I/O.
// An AC's event rebuilds the pools of its node alone (O(that node's ACs), plus the reservations'
// holds when there are any); drive_classes() never waits for an event's work.
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "capacity_store.h"
#include "extender/common/clock.h"
#include "extender/kube/reflector.h"
#include "extender/model/node.h"
#include "extender/sources/baremetal_node_id.h"
#include "extender/sources/kube_cluster_options.h"
#include "extender/state/cluster_state.h"
#include "extender/wire/baremetal_objects.h"
#include "extender/wire/storage_objects.h"

namespace extender::sources {

inline constexpr const char* kBaremetalPoolPrefix = "csi-baremetal:";
using model::kStorageGroupLabel;
inline constexpr const char* kDriveTaintLabel = "drive.csi-baremetal.dell.com/taint";
inline constexpr std::string_view kDriveTaintNoSchedule = "NoSchedule";

using StringTable = std::map<std::string, std::string, std::less<>>;

class BaremetalStore {
 public:
  BaremetalStore(state::ClusterState& state, CapacityStore& capacity, BaremetalOptions options,
                 const Clock& clock = steady_clock());

  std::unique_ptr<kube::ReflectorSink> capacity_sink();
  std::unique_ptr<kube::ReflectorSink> reservation_sink();
  std::unique_ptr<kube::ReflectorSink> volume_sink();

  // The node's id for csi-baremetal (baremetal_node_id), empty when it has none; logs which id a
  // node uses the first time, and when it changes.
  std::string node_id(const model::Node& node) const;
  // From KubeCluster's sinks: node name -> id; classes; claims ("namespace/name") -> selected node.
  void nodes_listed(StringTable ids);
  void node_changed(const std::string& name, std::string id);  // empty id: gone or without drives
  void classes_listed(const std::vector<wire::StorageClass>& classes);
  void class_changed(const std::string& name, const wire::StorageClass* sc);  // null: deleted
  void claims_listed(StringTable selected);
  void claim_changed(const std::string& claim, std::string selected);  // empty: none, or deleted

  // Class -> storage type, for demand (engine::ClaimSource::drive_classes); null before the ACs
  // were listed.
  std::shared_ptr<const StringTable> drive_classes() const;
  // The ids of nodes by name; empty for a node without drives.
  std::string id_of(std::string_view node) const;
  // A reservation as the store has it (written or watched), by name.
  std::optional<wire::CapacityReservation> reservation(const std::string& name) const;
  // Applies a reservation written (nullopt: deleted) before its watch event arrives. `sending`:
  // its write is still to be answered; until a later call says otherwise, watch events and
  // relists of that reservation (an earlier write's echo) leave it as written here, so the drives
  // of a rewrite still to be sent stay held.
  void reservation_written(const std::string& name, std::optional<wire::CapacityReservation> acr, TimePoint now,
                           bool sending = false);
  // The API server answered the write of `sent`: when the store still holds `sent` (its content,
  // whatever its resourceVersion), it takes `now_is` (the reservation as written, or, for a
  // write that failed, what it held before; nullopt: none), no longer sending. A newer rewrite
  // still to be sent is left as it is.
  void reservation_answered(const wire::CapacityReservation& sent, std::optional<wire::CapacityReservation> now_is,
                            TimePoint now);
  // A filter found the reservation as it would write it: it is current as of `now`.
  void reservation_confirmed(const std::string& name, TimePoint now);
  // Whether a claim of the reservation shows a selected node (kube-scheduler chose; CreateVolume
  // may read it).
  bool being_placed(const wire::CapacityReservation& acr) const;
  // Counts every reservation as confirmed at `now` (a replica that starts leading).
  void confirm_all(TimePoint now);
  // Reservations unchanged for `grace` whose pod `pending(namespace, pod)` denies, and those
  // unchanged for `idle` none of whose claims has a selected node.
  std::vector<wire::CapacityReservation> stale_reservations(
      TimePoint now, Duration grace, Duration idle,
      const std::function<bool(const std::string&, const std::string&)>& pending) const;

 private:
  struct Held {
    wire::CapacityReservation acr;
    TimePoint changed;
    bool sending = false;  // written here, the write not yet answered
  };
  void acs_listed(std::vector<wire::AvailableCapacity> acs);
  void ac_changed(const std::string& name, std::optional<wire::AvailableCapacity> ac);
  void reservations_listed(std::vector<wire::CapacityReservation> acrs);
  void reservation_changed(const std::string& name, std::optional<wire::CapacityReservation> acr);
  void volumes_listed(std::vector<wire::BaremetalVolume> volumes);
  void volume_changed(const std::string& name, std::optional<wire::BaremetalVolume> volume);
  // With mu_ held: publish the pools and classes; place the reservations' holds; count volumes.
  void publish_pools();
  // One node's pools of drives (its ACs by name), for publish_pools and an AC's event alone.
  std::vector<model::Pool> pools_of_node(const std::string& id) const;
  void place_holds();
  // The same for one reservation's holds only (none when it is gone), the others' kept.
  void place_holds_of(const std::string& name);
  using Holds = std::vector<std::pair<std::string, state::Claim>>;  // uid -> hold
  Holds holds_of(const std::string& name, const wire::CapacityReservation& acr) const;
  static std::string hold_prefix(const std::string& name);  // its holds' uids: this, then the node
  void place_volumes();
  bool placing(const wire::CapacityReservation& acr) const;  // being_placed, with mu_ held
  std::string pool_of(const wire::AvailableCapacity& ac) const;
  std::string node_of_id(const std::string& id) const;

  state::ClusterState& state_;
  CapacityStore& capacity_;
  BaremetalOptions options_;
  const Clock& clock_;
  mutable std::mutex mu_;
  StringTable node_ids_;  // node name -> id
  StringTable id_nodes_;  // id -> node name
  std::map<std::string, wire::StorageClass, std::less<>> classes_;
  StringTable selected_;  // claim -> selected node
  bool acs_listed_ = false;
  std::map<std::string, wire::AvailableCapacity, std::less<>> acs_;
  std::map<std::string, std::set<std::string, std::less<>>, std::less<>> acs_by_id_;  // node id -> its ACs
  std::map<std::string, Held, std::less<>> reservations_;
  std::map<std::string, wire::BaremetalVolume, std::less<>> volumes_;
  mutable std::mutex view_mu_;  // guards drive_classes_ (the pointer only): readers never wait for mu_
  std::shared_ptr<const StringTable> drive_classes_;
  mutable std::mutex logged_mu_;
  mutable StringTable logged_ids_;  // node name -> the id last logged for it
};

}  // namespace extender::sources
