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
// rule (a change of the annotation seen by the node watch is a change of the figure). It places every claim of a
// managed class that has a selected node in the state
// ("volume" claims), and publishes the pools (ClusterState::set_derived_pools) after each change
// and from tick() when a claim settles. Claims of a class storage.classes maps to a hand-written
// pool are placed too, bounded and expiring without a volume as published pools' are.
// Local PersistentVolumes (local-static-provisioner's) are read too: a class provisioned by
// kubernetes.io/no-provisioner, WaitForFirstConsumer, with local volumes is managed (unless
// storage.classes names it, or capacity.classes leaves it out); on each node its pool's devices
// are the class's local volumes whose node affinity selects the node (source "local PVs", each
// taken whole: policy/local_volumes.h), and each volume a claim holds (spec.claimRef) is placed
// in the state on that node ("local volume" claims). Thread-safe: writers serialise on one lock,
// taken before the state's, and each event costs what it touches (docs/architecture.md); readers
// (class_pools, local_volume_node, accounts) never wait for a writer's work.
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
  CapacityStore(state::ClusterState& state, model::DemandRules rules, CapacityOptions options,
                const Clock& clock = steady_clock());

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
  // The drive pools of the nodes named only (an empty list: none), the classes unchanged.
  void set_drive_pools_of(std::map<std::string, std::vector<model::Pool>, std::less<>> pools);

  // Publishes again when a claim has settled since the last publication.
  void tick(TimePoint now);
  // The classes managed from published capacity and csi-baremetal's, and their pools (configured
  // classes excluded).
  std::shared_ptr<const ClassPools> class_pools() const;
  std::vector<PoolAccount> accounts() const;

 private:
  using NodePools = std::map<std::string, std::vector<model::Pool>, std::less<>>;
  using Place = std::pair<std::string, std::string>;  // (node, class)
  struct Published {
    wire::StorageCapacity object;
    std::optional<TimePoint> changed;
    std::set<std::string, std::less<>> selects;  // the nodes its topology selects
  };
  struct Recorded {
    wire::Claim claim;
    std::optional<TimePoint> volume_seen;
    TimePoint selected{};  // when it was first seen selected for its node
    bool ignored = false;  // not counted (policy/capacity_accounting.h): no placement in the state
  };
  struct NodeEntry {
    NodeFacts facts;
    std::map<std::string, TimePoint, std::less<>> topolvm_changed;  // by device class
    std::set<std::string, std::less<>> selected_by;                 // objects whose topology selects it
  };
  // The objects with a topology by the labels they name, so that a node is matched against the
  // objects that could select it only: by a key and value it must have (a single-valued In), else
  // by a key it must have, else (needing no label) always.
  struct SelectorIndex {
    std::map<std::pair<std::string, std::string>, std::set<std::string, std::less<>>> by_value;
    std::map<std::string, std::set<std::string, std::less<>>, std::less<>> by_key;
    std::set<std::string, std::less<>> unkeyed;
    std::map<std::string, std::size_t, std::less<>> named;  // key -> objects naming it
  };

  std::string pool_of(std::string_view cls) const;
  std::string class_of(const wire::Claim& pvc) const;
  std::optional<state::Claim> placement_of(const wire::Claim& pvc) const;
  // Records the claim (or forgets it: `pvc` null) and returns the places it held and holds.
  std::vector<Place> record(const std::string& uid, const wire::Claim* pvc, TimePoint now);
  // After classes or drivers changed: the managed set, and the placements that depend on it.
  void reclassify();
  // Everything again: selection, volumes' nodes, every node's pools (a list, a class change).
  void rebuild(TimePoint now);
  // The pools and accounts of these nodes again, given to the state when they changed.
  void recompute(const std::set<std::string, std::less<>>& nodes, TimePoint now);
  // A node's pools and their accounts; the uids of the claims there its accounts ignore to `ignored`.
  void node_pools(const std::string& node, TimePoint now, std::vector<model::Pool>& pools,
                  std::vector<PoolAccount>& accounts, std::set<std::string, std::less<>>& ignored) const;
  // Places or drops the claims selected for the node whose counting changed (`ignored` by its accounts).
  void hold_claims(const std::string& node, const std::set<std::string, std::less<>>& ignored, TimePoint now);
  // Selection: which objects select which node.
  void index_object(const std::string& key, const wire::StorageCapacity& object);
  void unindex_object(const std::string& key, const wire::StorageCapacity& object);
  // Matches one node against the objects that could select it; the objects it gained or lost.
  void match_node(const std::string& node, NodeEntry& entry);
  // Matches one object against every node; the nodes it selected before or selects now go to `touched`.
  void match_object(const std::string& key, Published& p, std::set<std::string, std::less<>>& touched);
  void unselect(const std::string& key, Published& p, std::set<std::string, std::less<>>& touched);
  bool names_any(const model::StringMap& before, const model::StringMap& after) const;
  // Local volumes: which node each one of a managed class is on, and the placements of the
  // volumes claims hold.
  void locate_volumes();
  std::string locate(const model::PersistentVolume& pv) const;
  void set_volume_node(const std::string& volume, const std::string& node);
  void place_volume(const std::string& name);
  void local_pools(const std::string& node, std::vector<model::Pool>& pools, std::vector<PoolAccount>& accounts) const;
  void place_volumes();
  // After a node's labels changed: the local volumes that move to or from it; their nodes to `touched`.
  void relocate_for(const std::string& node, std::set<std::string, std::less<>>& touched);
  // A located volume, if it is still known and its class still managed (else null).
  const model::PersistentVolume* located(std::string_view name) const;
  // A managed class's TopoLVM device class, or nullopt when it is no TopoLVM class.
  std::optional<std::string> topolvm_device_class(std::string_view cls) const;
  // The pool a node's TopoLVM annotation gives a class, when no CSIStorageCapacity selects it.
  void annotation_pool(const std::string& node, const NodeEntry& entry, const std::string& cls, TimePoint now,
                       std::vector<model::Pool>& pools, std::vector<PoolAccount>& accounts,
                       std::set<std::string, std::less<>>& ignored) const;
  // The pool's account of the claims selected for it, their ignored uids to `ignored`.
  policy::CapacityAccount account_at(const Place& where, const policy::PublishedCapacity& published, TimePoint now,
                                     std::set<std::string, std::less<>>& ignored) const;
  // The claims recorded at `where`, and their uids (views into claims_at_).
  std::vector<policy::CapacityClaim> claims_at(const Place& where, std::vector<const std::string*>& uids) const;
  // The claims selected for the node of classes storage.classes maps to hand-written pools that
  // count no more (policy::account_hand_written, with the pool the node's own object gives; none
  // there: the timeout alone) to `ignored`; when the next of those still counted stops counting.
  std::optional<TimePoint> hand_written_claims(const std::string& node, TimePoint now,
                                               std::set<std::string, std::less<>>& ignored) const;
  void merge_class_pools();

  state::ClusterState& state_;
  model::DemandRules rules_;
  CapacityOptions options_;
  const Clock& clock_;
  // Writers (the sinks, tick) serialise on mu_; each event's work is its own (docs/architecture.md).
  mutable std::mutex mu_;
  std::map<std::string, NodeEntry, std::less<>> nodes_;
  std::map<std::string, wire::StorageClass, std::less<>> classes_;
  std::map<std::string, bool, std::less<>> drivers_;
  std::map<std::string, Published, std::less<>> published_;  // by namespace/name
  SelectorIndex index_;
  std::map<std::string, Recorded, std::less<>> claims_;            // by uid; claims with a selected node
  std::map<Place, std::set<std::string, std::less<>>> claims_at_;  // uids by (node, class)
  std::shared_ptr<const ClassPools> class_pools_ = std::make_shared<const ClassPools>();
  ClassPools drive_classes_;
  NodePools drive_pools_;
  std::map<std::string, model::PersistentVolume, std::less<>> volumes_;  // by name
  std::set<std::string, std::less<>> local_classes_;                     // managed classes of local volumes
  std::map<std::string, std::set<std::string, std::less<>>, std::less<>> volumes_at_;  // node -> its local volumes
  NodePools given_;                                            // the pools each node was last given in the state
  std::map<std::string, TimePoint, std::less<>> next_change_;  // by node: when its accounts change
  std::set<std::pair<TimePoint, std::string>> changes_;        // the same, by time

  // Readers (filters, /debug, /metrics) take view_mu_ alone, held for a pointer swap or one entry.
  mutable std::mutex view_mu_;
  std::shared_ptr<const ClassPools> merged_class_pools_ = std::make_shared<const ClassPools>();
  std::map<std::string, std::string, std::less<>> volume_node_;            // local volume of a managed class -> node
  std::map<std::string, std::vector<PoolAccount>, std::less<>> accounts_;  // by node
};

}  // namespace extender::sources
