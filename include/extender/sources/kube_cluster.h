#pragma once
// KubeCluster: feeds the cluster state from the API server in kubernetes mode. Reflectors for
// Nodes (supply: GPU allocatable, memory labels, pool annotations; labels, taints and cpu, memory
// and pods allocatable for the bind's eligibility check), Pods (GPUs, CPU, memory and a pod slot
// held by pods bound to nodes and not finished; terminating pods still hold theirs; a GPU share
// on the device its gpushare index annotation names, see kube/gpushare.h), PersistentVolumeClaims
// (class and size for demand; a managed claim with volume.kubernetes.io/selected-node holds its
// pool space on that node) and StorageClasses (the cluster's default class). The watch is the only
// source of node state in this mode, so a restart rebuilds everything from the API server.
// DRA: ResourceSlices, ResourceClaims and DeviceClasses of resource.k8s.io/v1 are watched with the
// same rules once a first list of slices shows the API server serves the group; when it answers
// 404 (a server older than v1.34) or 403 (a role without DRA rights) that is logged once and DRA
// is left out, not counted as "not ready" (a restart looks again). Only the slices of the drivers
// options.dra names are read (kubernetes.dra.drivers; default NVIDIA's).
// CSIStorageCapacity (storage.k8s.io/v1 since v1.24) is probed likewise: on an older server or
// without the rights, classes are managed by configuration only. csi-baremetal's kinds
// (AvailableCapacity, AvailableCapacityReservation, Volume; its CRDs) are probed likewise
// (baremetal_store.h, drive_reservations.h).
// The engine's pod source, claim source, DRA source and readiness gate in this mode. Thread-safe: lookups may
// come from any thread while the reflectors run.
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "extender/engine/ports.h"
#include "extender/kube/api_client.h"
#include "extender/kube/reflector.h"
#include "extender/kube/token_bucket.h"
#include "extender/model/demand.h"
#include "extender/model/dra.h"
#include "extender/model/dra_inventory.h"
#include "extender/model/pod.h"
#include "extender/policy/capacity_accounting.h"
#include "extender/sources/kube_cluster_options.h"
#include "extender/sources/watched_kinds.h"
#include "extender/state/cluster_state.h"
#include "extender/state/in_flight_holds.h"

namespace extender::sources {

class BaremetalStore;
class CapacityStore;
class DriveReservations;

// One pool on one node whose size a storage driver publishes, as decided (for /debug).
struct PoolAccount {
  std::string node;
  std::string storage_class;
  std::string pool;
  std::string source;  // "CSIStorageCapacity <namespace/name>"
  policy::CapacityAccount account;
  std::int64_t max_volume_bytes = 0;  // 0: no limit
};

class DraStore;

class KubeCluster final : public engine::PodSource,
                          public engine::ClaimSource,
                          public engine::DraSource,
                          public engine::Gate {
 public:
  // `in_flight` (may be null): the holds of pod groups in flight, told what the watches publish of
  // them (nominated nodes, claims' selected nodes, groups kube-scheduler gave up). `clock`: the
  // time and the waits of the watches and the stores behind them.
  KubeCluster(state::ClusterState& state, KubeClusterOptions options, kube::ApiClient& client,
              state::InFlightHolds* in_flight = nullptr, const Clock& clock = steady_clock());
  ~KubeCluster();

  void start();
  void stop();

  // Why decisions cannot be made (a reflector has not synced, or has been down for longer than
  // kubernetes.stale_after, and its last error), or nullopt.
  std::optional<std::string> not_ready() const override;
  // A PersistentVolumeClaim by namespace and name, as demand computation needs it.
  std::optional<model::ClaimInfo> claim(const std::string& ns, const std::string& name) const override;
  // Notified after each PersistentVolumeClaim event or list the lookups took in.
  const ChangeSignal* claim_changes() const override;
  // A pod not yet bound to a node, by uid (what /bind needs when /filter was not seen here).
  std::optional<model::Pod> pending_pod(const std::string& uid) const override;
  // The pending pods with a nominated node (status.nominatedNodeName).
  std::vector<model::Pod> nominated_pods() const override;
  GroupMembers group_members(const std::string& ns, const std::string& group) const override;
  // The pod read from the API server within options.fetch_timeout (a pod the watch has not shown yet).
  // A read of the API server for a pod the watch has not shown: at most kFetchesInFlight at once
  // and kFetchesPerSecond (burst as many), so made-up pods cannot make every worker wait on reads;
  // past that an error at once (the pod cannot be judged in this request; logged at most once a
  // second).
  Result<std::optional<model::Pod>> fetch_pod(const std::string& ns, const std::string& name) const override;
  static constexpr int kFetchesInFlight = 2;
  static constexpr int kFetchesPerSecond = 10;
  // The StorageClass marked default in the cluster, or empty.
  std::string default_storage_class() const override;
  // The classes managed from the capacity their CSI driver publishes, and their pools.
  std::shared_ptr<const std::map<std::string, std::string, std::less<>>> capacity_class_pools() const override;
  // csi-baremetal's classes and their storage types (null while its drives are not known).
  std::shared_ptr<const std::map<std::string, std::string, std::less<>>> drive_classes() const override;
  // What /filter reserves csi-baremetal's drives through; null when storage.baremetal is off. It
  // refuses nothing while the kinds are not served (no class maps to its pools then).
  engine::DriveReserver* drive_reserver();
  // The terms of the volume half's writes (drive_reservations.h): the API client's write rate
  // limit and the election's gate (its leadership and write fence); either may be null. Call
  // before start().
  void set_write_terms(kube::RateLimiter* writes, const engine::Gate* gate);
  // Each such pool on each node, with its accounting.
  std::vector<PoolAccount> pool_accounts() const;
  // Each reflector's resource and status (for /metrics: synced, down since when, lists).
  std::vector<std::pair<std::string, kube::ReflectorStatus>> watch_status() const;

  // DRA: whether the API server serves resource.k8s.io/v1 (false while unknown and when it does
  // not), the inventory of the watched slices and claims (rebuilt after changes), the classes.
  bool dra_served() const { return optional_kinds(KindGroup::kDra).state == kServed; }
  std::shared_ptr<const model::DraInventory> dra_inventory() const;
  std::vector<model::DeviceClass> device_classes() const;
  // The engine's view: dra_inventory() while the group is served, else null; device_classes(),
  // and compiled as each DeviceClass arrives (dra_classes).
  std::shared_ptr<const model::DraInventory> dra_snapshot() const override;
  std::vector<model::DeviceClass> dra_device_classes() const override { return device_classes(); }
  std::shared_ptr<const policy::DraClasses> dra_classes() const override;

  struct Lookups;  // what the sinks learn and the lookups read; defined in the .cpp

 private:
  kube::ApiClient& client_;
  const Clock& clock_;
  std::chrono::milliseconds stale_after_;
  std::chrono::milliseconds fetch_timeout_;
  mutable std::mutex fetch_mu_;  // guards the three below
  mutable kube::TokenBucket fetch_bucket_;
  mutable int fetching_ = 0;
  mutable TimePoint fetch_refusal_logged_{};
  std::unique_ptr<Lookups> lookups_;
  std::unique_ptr<CapacityStore> capacity_;
  std::thread capacity_tick_;  // publishes when a claim settles (policy/capacity_accounting.h)
  std::vector<std::unique_ptr<kube::ReflectorSink>> sinks_;
  std::vector<std::unique_ptr<kube::Reflector>> reflectors_;
  std::vector<std::thread> threads_;

  // The optional groups of watched_kinds.h, each probed with a list of one item; 404 (an older
  // server) or 403 (a role without the rights) leaves it out, logged once; other answers are
  // retried with backoff, and not ready meanwhile.
  enum GroupState { kProbing, kAbsent, kServed };
  struct OptionalKinds {
    KindGroup group = KindGroup::kRequired;
    std::vector<std::unique_ptr<kube::Reflector>> reflectors;
    std::atomic<int> state{kProbing};
    std::thread probe;
    std::string probe_error;           // guarded by optional_mu_
    std::vector<std::thread> threads;  // guarded by optional_mu_
  };
  void probe(OptionalKinds& kinds);
  void ready_reasons(const OptionalKinds& kinds, std::string& reasons) const;
  OptionalKinds& optional_kinds(KindGroup group);
  const OptionalKinds& optional_kinds(KindGroup group) const;
  std::unique_ptr<DraStore> dra_;
  std::unique_ptr<BaremetalStore> baremetal_;  // null: storage.baremetal off
  std::unique_ptr<DriveReservations> drives_;  // with baremetal_
  bool pending_named(const std::string& ns, const std::string& name) const;
  // Deletes the reservations of pods no longer pending, once the watches are synced.
  void collect_reservations();
  std::array<OptionalKinds, kOptionalGroups.size()> optional_;
  mutable std::mutex optional_mu_;  // guards stopping_ and the kinds' marked fields
  std::condition_variable wake_;
  bool stopping_ = false;
};

}  // namespace extender::sources
