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
// The engine's pod source, claim source, DRA source and readiness gate in this mode. Thread-safe: lookups may
// come from any thread while the reflectors run.
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
#include "extender/model/demand.h"
#include "extender/model/dra.h"
#include "extender/model/dra_inventory.h"
#include "extender/model/pod.h"
#include "extender/sources/kube_cluster_options.h"
#include "extender/state/cluster_state.h"

namespace extender::sources {

class DraStore;

class KubeCluster final : public engine::PodSource,
                          public engine::ClaimSource,
                          public engine::DraSource,
                          public engine::Gate {
 public:
  KubeCluster(state::ClusterState& state, KubeClusterOptions options, kube::ApiClient& client);
  ~KubeCluster();

  void start();
  void stop();

  // Why decisions cannot be made (a reflector has not synced, or has been down for longer than
  // kubernetes.stale_after, and its last error), or nullopt.
  std::optional<std::string> not_ready() const override;
  // A PersistentVolumeClaim by namespace and name, as demand computation needs it.
  std::optional<model::ClaimInfo> claim(const std::string& ns, const std::string& name) const override;
  // A pod not yet bound to a node, by uid (what /bind needs when /filter was not seen here).
  std::optional<model::Pod> pending_pod(const std::string& uid) const override;
  // The pod read from the API server within options.fetch_timeout (a pod the watch has not shown yet).
  std::optional<model::Pod> fetch_pod(const std::string& ns, const std::string& name) const override;
  // The StorageClass marked default in the cluster, or empty.
  std::string default_storage_class() const override;
  // Each reflector's resource and status (for /metrics: synced, down since when, lists).
  std::vector<std::pair<std::string, kube::ReflectorStatus>> watch_status() const;

  // DRA: whether the API server serves resource.k8s.io/v1 (false while unknown and when it does
  // not), the inventory of the watched slices and claims (rebuilt after changes), the classes.
  bool dra_served() const { return dra_state_ == kDraServed; }
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
  std::chrono::milliseconds stale_after_;
  std::chrono::milliseconds fetch_timeout_;
  std::unique_ptr<Lookups> lookups_;
  std::vector<std::unique_ptr<kube::ReflectorSink>> sinks_;
  std::vector<std::unique_ptr<kube::Reflector>> reflectors_;
  std::vector<std::thread> threads_;

  enum DraState { kDraProbing, kDraAbsent, kDraServed };
  void probe_dra();
  std::unique_ptr<DraStore> dra_;
  std::vector<std::unique_ptr<kube::Reflector>> dra_reflectors_;
  std::atomic<int> dra_state_{kDraProbing};
  std::thread dra_probe_;
  mutable std::mutex dra_mu_;  // guards the three below
  std::condition_variable dra_wake_;
  bool stopping_ = false;
  std::string dra_probe_error_;
  std::vector<std::thread> dra_threads_;
};

}  // namespace extender::sources
