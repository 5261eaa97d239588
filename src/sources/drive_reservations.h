#pragma once
// DriveReservations (private to sources): writes, as engine::DriveReserver, the
// AvailableCapacityReservation csi-baremetal's CreateVolume reads, named <namespace>-<pod>:
// RESERVED, the nodes that passed (by their csi-baremetal id) requested and reserved, and per
// claim (CapacityRequest: the claim's name, its storage type, its requested bytes) the AC the
// filter's fit chose on each of them. It creates the object, or replaces it guarded by the
// resourceVersion the store has (a conflict: read again, replace once more).
// Who may change one (docs/security.md): only a filter of the pod it is named after (the engine
// hands over the demand of the pod the API server has, never the request's); one whose claims
// already show a selected node is kept as it is (CreateVolume may be reading it), and a filter
// that passes no node deletes nothing (the sweep does, below). A name that another pod's
// reservation has (`a-b/c` and `a/b-c` both give `a-b-c`) is refused, never overwritten.
// Budget: the drives count as held in the store at once, before the write; the write then goes to
// a fixed pool of kWriters threads through a queue of at most kQueued writes (a newer write of
// the same reservation replaces one not yet sent), each send waiting its turn under the API
// client's write rate limit (kubernetes.api_qps, shared with the binder), one write of a
// reservation at a time. reserve() waits for it at most options.reservation_write_wait: a slow API
// server does not make the filter miss kube-scheduler's timeout. One reservation changes at most
// once per options.reservation_rewrite_interval: within it, a filter that would rewrite it is
// answered from the reservation as it stands (the nodes it holds as the filter chose them pass,
// the others fail with why), so one pod's rewrites take neither the budget everyone's writes
// share nor the node cache's publishing. A write that fails, or that finds the queue full or no
// writer thread, puts the store back as it was (a hold never written is dropped); one that fails
// within that wait fails the filter.
// Fencing: with an election (set_terms' gate), a write is sent only while this replica leads and
// each request must be answered by the term's write fence (engine::Gate::write_fence), as
// Bindings are; collect() runs on the leader only. The idle time counts the leader's own
// confirmations (its filters'): a replica that starts leading counts every reservation as
// confirmed at that moment, since the previous leader's confirmations lived in its memory.
// collect() deletes the reservations of pods that are no longer pending (bound, gone, or
// finished), as csi-baremetal's own reservation validator does, and those no filter has
// confirmed for a while whose pods are not being placed (waiting in kube-scheduler's queue).
// Thread-safe.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "baremetal_store.h"
#include "extender/common/clock.h"
#include "extender/engine/ports.h"
#include "extender/kube/api_client.h"
#include "extender/kube/token_bucket.h"

namespace extender::sources {

class DriveReservations : public engine::DriveReserver {
 public:
  static constexpr std::size_t kWriters = 4;
  static constexpr std::size_t kQueued = 256;

  // `pending(namespace, name)`: whether the pod waits to be scheduled.
  using PendingLookup = std::function<bool(const std::string&, const std::string&)>;
  DriveReservations(BaremetalStore& store, kube::ApiClient& client, PendingLookup pending,
                    const BaremetalOptions& options,
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(3'000),
                    const Clock& clock = steady_clock());
  // Drops the writes not yet sent and waits for those in flight.
  ~DriveReservations() override;

  // The write rate limit and the election's gate (either may be null: none); call before writes.
  void set_terms(kube::RateLimiter* writes, const engine::Gate* gate);

  Result<engine::DriveHold> reserve(const model::PodDemand& pod, std::span<const engine::DriveChoice> choices) override;
  // Deletes the reservations BaremetalStore::stale_reservations names for the options' grace and
  // idle times; returns how many. Nothing while another replica leads.
  std::size_t collect(TimePoint now);

  // The collection's path, and one reservation's.
  static std::string path(const std::string& name = {});

 private:
  // A write's outcome: set once (by the writer, a newer write of the same reservation, or the
  // shutdown), awaited by reserve() for write_wait on the clock.
  struct Outcome {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<Status> status;
    void set(Status s);
  };
  struct Job {
    wire::CapacityReservation acr;
    std::optional<wire::CapacityReservation> before;  // what the store had before the first unsent write
    std::shared_ptr<Outcome> done;
  };
  // The choices `current`, changed `age` ago, holds as chosen (reserve() within the interval).
  engine::DriveHold standing(const wire::CapacityReservation& current, std::span<const engine::DriveChoice> choices,
                             Duration age) const;
  Result<wire::CapacityReservation> write(const wire::CapacityReservation& acr);
  Status remove(const std::string& name);
  // Why no request may be sent now (not leading, the fence passed, the rate limit), or the
  // request's timeout.
  Result<std::chrono::milliseconds> send_terms();
  // Queues the write (replacing one of the same reservation not yet sent).
  Status enqueue(Job job);
  // The first queued job whose reservation is not being sent, or none; under mu_.
  std::optional<Job> take_ready();
  void run_writer();
  void finish(const Job& job, Result<wire::CapacityReservation> written);

  BaremetalStore& store_;
  kube::ApiClient& client_;
  PendingLookup pending_;
  const Clock& clock_;
  std::chrono::milliseconds write_wait_;
  std::chrono::milliseconds grace_;
  std::chrono::milliseconds idle_;
  std::chrono::milliseconds rewrite_interval_;
  std::chrono::milliseconds timeout_;
  std::atomic<kube::RateLimiter*> writes_{nullptr};
  std::atomic<const engine::Gate*> gate_{nullptr};
  std::optional<TimePoint> leading_since_;  // collect()'s thread only

  std::mutex change_mu_;  // held by reserve() from reading the store to queuing; guards changed_
  std::unordered_map<std::string, TimePoint> changed_;  // when reserve() last changed each, by name

  std::mutex mu_;  // guards queue_, sending_, stopping_
  std::condition_variable wake_;
  std::deque<Job> queue_;
  std::unordered_set<std::string> sending_;  // names a writer is sending
  bool stopping_ = false;
  std::vector<std::thread> writers_;
};

}  // namespace extender::sources
