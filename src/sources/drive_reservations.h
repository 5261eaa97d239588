#pragma once
// DriveReservations (private to sources): writes, as engine::DriveReserver, the
// AvailableCapacityReservation csi-baremetal's CreateVolume reads, named <namespace>-<pod>:
// RESERVED, the nodes that passed (by their csi-baremetal id) requested and reserved, and per
// claim (CapacityRequest: the claim's name, its storage type, its requested bytes) the AC the
// filter's fit chose on each of them. It creates the object, or replaces it guarded by the
// resourceVersion the store has (a conflict: read again, replace once more), deletes it when no
// node passed, and applies what it wrote to the store at once, so the next pod's filter counts
// the drives held. collect() deletes the reservations of pods that are no longer pending (bound,
// gone, or finished), as csi-baremetal's own reservation validator does. Thread-safe: concurrent
// filters of one pod are serialised per reservation name only by the API server (a conflict).
#include <chrono>
#include <functional>
#include <span>
#include <string>

#include "baremetal_store.h"
#include "extender/common/clock.h"
#include "extender/engine/ports.h"
#include "extender/kube/api_client.h"

namespace extender::sources {

class DriveReservations : public engine::DriveReserver {
 public:
  // `pending(namespace, name)`: whether the pod waits to be scheduled.
  using PendingLookup = std::function<bool(const std::string&, const std::string&)>;
  DriveReservations(BaremetalStore& store, kube::ApiClient& client, PendingLookup pending,
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(3'000));

  Status reserve(const model::PodDemand& pod, std::span<const engine::DriveChoice> choices) override;
  // Deletes the reservations unchanged for `grace` whose pods are not pending; returns how many.
  std::size_t collect(TimePoint now, Duration grace);

  // The collection's path, and one reservation's.
  static std::string path(const std::string& name = {});

 private:
  Result<wire::CapacityReservation> write(const wire::CapacityReservation& acr);
  Status remove(const std::string& name);

  BaremetalStore& store_;
  kube::ApiClient& client_;
  PendingLookup pending_;
  std::chrono::milliseconds timeout_;
};

}  // namespace extender::sources
