#pragma once
// What the engine asks of the world around it besides the cluster state: the pods the cluster
// has (kubernetes mode), the claims and storage classes demand computation reads, the GPUs
// Dynamic Resource Allocation offers, where the nodes of `Nodes` requests go (standalone), and
// whether this process may decide at all.
// Implementations must be thread-safe: the engine calls them from every worker at once.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "extender/common/change_signal.h"
#include "extender/common/clock.h"
#include "extender/common/result.h"
#include "extender/model/demand.h"
#include "extender/model/dra.h"
#include "extender/model/dra_inventory.h"
#include "extender/model/node.h"
#include "extender/model/pod.h"
#include "extender/model/usage.h"
#include "extender/policy/dra_demand.h"

namespace extender::engine {

// Pods as the API server has them (kubernetes mode: /bind and /preempt act only on these).
class PodSource {
 public:
  virtual ~PodSource() = default;
  // The pod by uid while it is pending, as the watch has it; nullopt when the watch has no
  // pending pod of that uid.
  virtual std::optional<model::Pod> pending_pod(const std::string& uid) const = 0;
  // The pod read from the API server by namespace and name, for a uid the watch has not shown
  // yet; nullopt when the API server has no such pod; an error when it could not be read (the
  // read failed, or the source's limit on such reads refused it).
  virtual Result<std::optional<model::Pod>> fetch_pod(const std::string& ns, const std::string& name) const = 0;
  // The pending pods the watch shows nominated to a node (status.nominatedNodeName); usually few.
  virtual std::vector<model::Pod> nominated_pods() const { return {}; }
  // The members of pod group `group` in namespace `ns` the watch shows pending and bound.
  struct GroupMembers {
    std::size_t pending = 0;
    std::size_t bound = 0;
  };
  virtual GroupMembers group_members(const std::string& ns, const std::string& group) const {
    (void)ns;
    (void)group;
    return {};
  }
};

// PersistentVolumeClaims and the cluster's default StorageClass, as demand computation reads them.
// A claim shows a selected node only once the cluster state counts its space there (a filter that
// waits for an earlier pod's claims then decides on top of them).
class ClaimSource {
 public:
  virtual ~ClaimSource() = default;
  virtual std::optional<model::ClaimInfo> claim(const std::string& ns, const std::string& name) const = 0;
  // The StorageClass marked default in the cluster, or empty.
  virtual std::string default_storage_class() const = 0;
  // Classes managed without configuration (their driver publishes capacity) -> their pool; null
  // or empty when none.
  virtual std::shared_ptr<const std::map<std::string, std::string, std::less<>>> capacity_class_pools() const {
    return nullptr;
  }
  // Classes of csi-baremetal's provisioner -> their storage type (HDD, SSDLVG, ...), their claims
  // placed on its drives (model::Pool::drives); null or empty when none.
  virtual std::shared_ptr<const std::map<std::string, std::string, std::less<>>> drive_classes() const {
    return nullptr;
  }
  // Notified after each change to what claim() answers, for a filter waiting on a placement to
  // show; null: the source does not tell (the waiter then waits its whole time, then reads once).
  virtual const ChangeSignal* claim_changes() const { return nullptr; }
};

// The drives a pod's csi-baremetal volumes would take on one node that passed /filter.
struct DriveChoice {
  std::string node;
  std::vector<model::VolumePlacement> volumes;  // each with its claim and its AvailableCapacity (device)
};

// What a reservation holds of the choices /filter handed over.
struct DriveHold {
  // The nodes whose drives are held as chosen; nullopt: every choice's. The others do not pass.
  std::optional<std::vector<std::string>> only;
  std::string others_why;  // why the others do not (set with `only`)
};

// csi-baremetal (kubernetes mode): CreateVolume provisions a claim only on a drive listed for the selected node
// by the first RESERVED AvailableCapacityReservation of the claim's namespace with a request named after the claim.
// /filter hands over, before it answers, the drives of every node it passed (none: the reservation is dropped),
// and passes only the nodes the answer holds; an error fails the filter, and kube-scheduler tries the pod again.
class DriveReserver {
 public:
  virtual ~DriveReserver() = default;
  virtual Result<DriveHold> reserve(const model::PodDemand& pod, std::span<const DriveChoice> choices) = 0;
};

// Dynamic Resource Allocation (resource.k8s.io/v1) as the watches have it (kubernetes mode).
class DraSource {
 public:
  virtual ~DraSource() = default;
  // The current inventory (per node: GPUs of complete pools, which are allocated); an immutable
  // snapshot the caller may keep. Null while the API server is not known to serve DRA.
  virtual std::shared_ptr<const model::DraInventory> dra_snapshot() const = 0;
  // The DeviceClasses the API server has, as read (what /debug/dra shows); empty when it serves none.
  virtual std::vector<model::DeviceClass> dra_device_classes() const = 0;
  // The same classes compiled (selectors parsed), what the verbs decide with: an immutable
  // snapshot built when a DeviceClass changes, not per call; the caller may keep it. Never null
  // (no classes: an empty one).
  virtual std::shared_ptr<const policy::DraClasses> dra_classes() const = 0;
};

// Standalone: takes the nodes carried in `Nodes` requests (sources::RequestNodes).
class NodeSink {
 public:
  virtual ~NodeSink() = default;
  // Upserts the nodes; returns how many were left out (a cap reached).
  virtual std::size_t observe(std::span<const model::Node* const> nodes) = 0;
};

// Whether this process may decide. Asked before every verb and again just before a bind is
// made official.
class Gate {
 public:
  virtual ~Gate() = default;
  // Why the daemon cannot decide yet (caches not synced, shutting down), or nullopt.
  virtual std::optional<std::string> not_ready() const = 0;
  // Why this replica may not decide because another leads (a standby, or a leader past its renew
  // deadline), or nullopt while it leads or when there is no election.
  virtual std::optional<std::string> not_leading() const { return std::nullopt; }
  // The latest instant by which a write to the API server sent now must be answered, so that none
  // lands once another replica may decide (the leadership term's fence); nullopt without election.
  virtual std::optional<TimePoint> write_fence() const { return std::nullopt; }
};

}  // namespace extender::engine
