#pragma once
// The options of KubeCluster (kube_cluster.h), each with its default. Config composes WatchOptions
// under kubernetes.* (the DRA drivers: kubernetes.dra.drivers) and fills the rest from its gpu and
// storage sections. A value type.
#include <chrono>
#include <string>
#include <vector>

#include "extender/model/demand.h"
#include "extender/model/dra_inventory.h"
#include "extender/model/supply.h"
#include "extender/policy/capacity_accounting.h"

namespace extender::sources {

struct WatchOptions {
  std::chrono::milliseconds watch_timeout{45'000};  // timeoutSeconds of each watch request (at most 45s)
  std::chrono::milliseconds stale_after{60'000};    // not ready while a watch has been down this long
};

// Pools from the capacity CSI drivers publish (CSIStorageCapacity, capacity_store.h).
struct CapacityOptions {
  bool enabled = true;  // watch CSIDrivers and CSIStorageCapacities
  std::vector<std::string>
      classes;  // the classes to manage so (local PV classes too); empty: every class whose driver publishes
  policy::CapacityRule rule;  // when a claim's volume counts as reflected
};

// csi-baremetal's drives (baremetal_store.h), read as its own extender's flags say.
struct BaremetalOptions {
  bool enabled = true;                        // watch its kinds when the API server serves them
  std::string provisioner = "csi-baremetal";  // the StorageClasses whose claims go on its drives
  std::string node_id_annotation;             // set: a node's id is this annotation's value; empty: baremetal_node_id.h
  model::StringMap node_selector;             // labels a node must carry to have drives; empty: any node
  // A reservation unchanged this long whose pod is no longer pending is deleted.
  std::chrono::milliseconds reservation_grace{10'000};
  // A reservation no filter has written or confirmed this long, none of whose claims has a
  // selected node yet, is deleted too: its pod waits in kube-scheduler's queue, and the drives
  // it holds go back to the others until its next filter writes it again.
  std::chrono::milliseconds reservation_idle{60'000};
  // How long /filter waits for its reservation's write before it answers (the drives count as
  // held meanwhile, and the write goes on; drive_reservations.h).
  std::chrono::milliseconds reservation_write_wait{50};
  // A pod's reservation changes at most once per this interval: within it, /filter is answered
  // from the reservation as it stands (the nodes it holds pass). One pod re-filtered with changing
  // node lists so takes one write a second of the shared budget, and republishes no drive more.
  std::chrono::milliseconds reservation_rewrite_interval{1'000};
};

struct KubeClusterOptions {
  model::DemandRules demand;  // which pods and claims hold what
  model::SupplyRules supply;  // what nodes offer
  WatchOptions watch;
  std::chrono::milliseconds fetch_timeout{2'000};  // a pod read from the API server (fetch_pod)
  model::DraRules dra;  // which drivers' ResourceSlices offer GPUs, and how their devices read
  CapacityOptions capacity;
  BaremetalOptions baremetal;
};

}  // namespace extender::sources
