#pragma once
// DriveReservations (private to sources): writes, as engine::DriveReserver, the
// AvailableCapacityReservation csi-baremetal's CreateVolume reads, named <namespace>-<pod>:
// RESERVED, the nodes that passed (by their csi-baremetal id) requested and reserved, and per
// claim (CapacityRequest: the claim's name, its storage type, its requested bytes) the AC the
// filter's fit chose on each of them. It creates the object, or replaces it guarded by the
// resourceVersion the store has (a conflict: read again, replace once more), deletes it when no
// node passed. The drives count as held in the store at once, before the write, so the next
// pod's filter counts them; the write then runs on its own thread, and reserve() waits for it at
// most options.reservation_write_wait: a slow API server does not make the filter miss kube-scheduler's timeout
// (CreateVolume reads the reservation only after kube-scheduler's binding cycle wrote the claim's
// selected node).
// A write that fails puts the store back as it was, logged; one that fails within that wait
// fails the filter. collect() deletes the reservations of pods that are no longer pending (bound,
// gone, or finished), as csi-baremetal's own reservation validator does, and those no filter has
// confirmed for a while whose pods are not being placed (waiting in kube-scheduler's queue). Thread-safe: concurrent
// filters of one pod are serialised per reservation name only by the API server (a conflict).
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <span>
#include <string>
#include <vector>

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
                    const BaremetalOptions& options,
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(3'000));
  // Waits for the writes still in flight.
  ~DriveReservations() override;

  Status reserve(const model::PodDemand& pod, std::span<const engine::DriveChoice> choices) override;
  // Deletes the reservations BaremetalStore::stale_reservations names for the options' grace and
  // idle times; returns how many.
  std::size_t collect(TimePoint now);

  // The collection's path, and one reservation's.
  static std::string path(const std::string& name = {});

 private:
  Result<wire::CapacityReservation> write(const wire::CapacityReservation& acr);
  Status remove(const std::string& name);

  BaremetalStore& store_;
  kube::ApiClient& client_;
  PendingLookup pending_;
  std::chrono::milliseconds write_wait_;
  std::chrono::milliseconds grace_;
  std::chrono::milliseconds idle_;
  std::chrono::milliseconds timeout_;
  std::mutex mu_;  // guards in_flight_
  std::vector<std::future<Status>> in_flight_;
};

}  // namespace extender::sources
