#pragma once
// CapacityStore (private to sources): the pools that CSI drivers with storage capacity tracking
// publish, and the node-local claims counted against every pool. A StorageClass whose provisioner
// has a CSIDriver with spec.storageCapacity true is managed without configuration (unless
// storage.classes maps it to a pool by hand, or capacity.classes leaves it out): its pool, named
// after the class, is on each node some CSIStorageCapacity of the class selects by nodeTopology
// (the largest figure when several do), sized by the accounting rule of
// policy/capacity_accounting.h, with maximumVolumeSize as the largest one volume may be.
// Fed by its own sinks (CSIDrivers, CSIStorageCapacities) and by KubeCluster's node, class and
// claim sinks. A TopoLVM class (provisioner topolvm.io) is managed as well, and on a node no
// CSIStorageCapacity selects its pool is TopoLVM's node annotation capacity.topolvm.io/<device
// class> (the class's topolvm.io/device-class parameter, 00default without one), by the same
// rule (a change of the annotation seen by the node watch is a change of the figure). It places every claim of a managed class that has a selected node in the state
// ("volume" claims), and publishes the pools (ClusterState::set_derived_pools) after each change
// and from tick() when a claim settles.
// Local PersistentVolumes (local-static-provisioner's) are read too: a class provisioned by
// kubernetes.io/no-provisioner, WaitForFirstConsumer, with local volumes is managed (unless
// storage.classes names it, or capacity.classes leaves it out); on each node its pool's devices
// are the class's local volumes whose node affinity selects the node (source "local PVs", each
// taken whole: policy/local_volumes.h), and each volume a claim holds (spec.claimRef) is placed
// in the state on that node ("local volume" claims). Thread-safe; its lock is taken before the
// state's.
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "extender/common/clock.h"
#include "extender/kube/reflector.h"
#include "extender/model/demand.h"
#include "extender/policy/capacity_accounting.h"
#include "extender/sources/kube_cluster.h"
#include "extender/sources/kube_cluster_options.h"
#include "extender/state/cluster_state.h"
#include "extender/wire/k8s_objects.h"
#include "extender/wire/storage_objects.h"

namespace extender::sources {

using ClassPools = std::map<std::string, std::string, std::less<>>;  // storage class -> pool

// What the store reads of a Node: its labels (for nodeTopology) and TopoLVM's free space per
// device class (annotations capacity.topolvm.io/<device class>, bytes).
struct NodeFacts {
  model::StringMap labels;
  model::StringMap topolvm;  // device class -> the annotation's value
  bool operator==(const NodeFacts&) const = default;
};
NodeFacts node_facts(const model::Node& node);

class CapacityStore {
 public:
  CapacityStore(state::ClusterState& state, model::DemandRules rules, CapacityOptions options);

  std::unique_ptr<kube::ReflectorSink> driver_sink();
  std::unique_ptr<kube::ReflectorSink> capacity_sink();
  std::unique_ptr<kube::ReflectorSink> volume_sink();

  // From the other sinks: a full list, or one object (nullopt: deleted).
  void nodes_listed(std::map<std::string, NodeFacts> nodes);
  void node_changed(const std::string& name, std::optional<NodeFacts> facts);
  void classes_listed(std::vector<wire::StorageClass> classes);
  void class_changed(const std::string& name, std::optional<wire::StorageClass> sc);
  void claims_listed(std::vector<wire::Claim> claims);
  void claim_changed(const wire::Claim& claim, bool deleted);

  void drivers_listed(std::map<std::string, bool> drivers);
  void driver_changed(const std::string& name, std::optional<bool> storage_capacity);
  void capacities_listed(std::vector<wire::StorageCapacity> objects);
  void capacity_changed(const std::string& key, std::optional<wire::StorageCapacity> object);

  void volumes_listed(std::vector<model::PersistentVolume> volumes);
  void volume_changed(const std::string& name, std::optional<model::PersistentVolume> volume);
  // The node of a local volume of a managed class; empty when there is none such.
  std::string local_volume_node(std::string_view volume) const;

  // csi-baremetal's classes (-> pool) and its pools of drives by node (baremetal_store.h): its
  // classes are never managed here; the pools are published with the others.
  void set_drive_pools(ClassPools classes, std::map<std::string, std::vector<model::Pool>, std::less<>> pools);

  // Publishes again when a claim has settled since the last publication.
  void tick(TimePoint now);
  // The classes managed from published capacity and csi-baremetal's, and their pools (configured
  // classes excluded).
  std::shared_ptr<const ClassPools> class_pools() const;
  std::vector<PoolAccount> accounts() const;

 private:
  struct Published {
    wire::StorageCapacity object;
    std::optional<TimePoint> changed;
  };
  struct Recorded {
    wire::Claim claim;
    std::optional<TimePoint> volume_seen;
  };
  std::string pool_of(std::string_view cls) const;
  std::optional<state::Claim> placement_of(const wire::Claim& pvc) const;
  void record(const wire::Claim& pvc, TimePoint now);
  // After classes or drivers changed: the managed set, and the placements that depend on it.
  void reclassify();
  void publish(TimePoint now);
  // Which objects select which node, per class: rebuilt when nodes, objects' topology or the
  // managed classes change, not for each claim.
  void select();
  // Local volumes: which node each one of a managed class is on (all, or one), their pools, and
  // the placements of the volumes claims hold.
  void locate_volumes();
  void locate_volume(const model::PersistentVolume& pv);
  void local_pools(std::map<std::string, std::vector<model::Pool>, std::less<>>& pools, std::vector<PoolAccount>& accounts) const;
  void place_volumes();
  // A located volume, if it is still known and its class still managed (else null).
  const model::PersistentVolume* located(std::string_view name) const;

  state::ClusterState& state_;
  model::DemandRules rules_;
  CapacityOptions options_;
  mutable std::mutex mu_;
  struct NodeEntry {
    NodeFacts facts;
    std::map<std::string, TimePoint, std::less<>> topolvm_changed;  // by device class
  };
  std::map<std::string, NodeEntry, std::less<>> nodes_;
  // A managed class's TopoLVM device class, or nullopt when it is no TopoLVM class.
  std::optional<std::string> topolvm_device_class(std::string_view cls) const;
  // The pool a node's TopoLVM annotation gives a class, when no CSIStorageCapacity selects it.
  void annotation_pool(const std::string& node, const NodeEntry& entry, const std::string& cls,
                       std::vector<policy::CapacityClaim> claims, TimePoint now,
                       std::map<std::string, std::vector<model::Pool>, std::less<>>& pools,
                       std::vector<PoolAccount>& accounts);
  std::map<std::string, wire::StorageClass, std::less<>> classes_;
  std::map<std::string, bool, std::less<>> drivers_;
  std::map<std::string, Published, std::less<>> published_;  // by namespace/name
  std::map<std::string, Recorded, std::less<>> claims_;      // by uid; claims with a selected node
  std::shared_ptr<const ClassPools> class_pools_ = std::make_shared<const ClassPools>();
  ClassPools drive_classes_;
  std::map<std::string, std::vector<model::Pool>, std::less<>> drive_pools_;
  // class_pools_ and drive_classes_: what class_pools() answers.
  std::shared_ptr<const ClassPools> merged_class_pools_ = std::make_shared<const ClassPools>();
  void merge_class_pools();
  std::map<std::string, model::PersistentVolume, std::less<>> volumes_;  // by name
  std::set<std::string, std::less<>> local_classes_;                     // managed classes of local volumes
  std::map<std::string, std::string, std::less<>> volume_node_;          // local volume of a managed class -> node
  bool volumes_dirty_ = true;  // the volumes' placements are to be replaced
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> selection_;  // (node, class) -> objects
  bool selection_dirty_ = true;
  std::vector<PoolAccount> accounts_;
  std::optional<TimePoint> next_change_;
};

}  // namespace extender::sources
