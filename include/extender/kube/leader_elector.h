#pragma once
// LeaderElector: leader election on a Lease with the semantics of client-go's leaderelection.
// Each attempt (try_acquire_or_renew) reads the lease (a leader's renewal does not, see below);
// one that does not exist is created; one held by another identity is left alone while it is
// live, i.e. until its leaseDurationSeconds have passed on this replica's monotonic clock since
// the record was last seen to change: since the read that showed the change returned (client-go's
// observedTime), not since that read started, which a slow API server may make seconds earlier
// (clocks of different machines are never compared). An expired or released (empty holder) lease,
// or one already naming this identity, is written with this identity, guarded by the
// resourceVersion read, so of two replicas racing for it one gets 409 and stays a candidate.
//
// Fencing by time: this replica leads only until renew_deadline has passed since the start of its
// last successful write (`not_leading` answers from the clock, whatever the caller's thread is
// doing). Another replica can take the lease at the earliest lease_duration after a read of its
// showed that write, which returned after the write started; with renew_deadline <
// lease_duration the old leader has stopped deciding before anyone else can start.
// Writes it sent before stopping must be answered within half the gap between the two after its
// term ends (write_fence; the other half is margin for the rates of two machines' clocks), so none
// lands once another replica may decide; the binder gives up on them at the fence.
//
// A leader renews with one update guarded by the resourceVersion it last wrote (no read first);
// when that conflicts (someone else wrote the lease) the same attempt reads and decides anew.
//
// The start of an attempt is passed in by the caller; the time a read returned is taken from
// `clock` (tests drive both with a fake clock). try_acquire_or_renew and release are called from
// one thread (the election loop); not_leading, view and holds may be called from any thread.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "extender/common/clock.h"
#include "extender/kube/lease.h"

namespace extender::kube {

struct ElectionTiming {
  std::chrono::milliseconds lease_duration{2'000};
  std::chrono::milliseconds renew_deadline{1'500};
  std::chrono::milliseconds retry_period{500};
};

// What this replica knows of the election, for /readyz, /version, /debug/state and metrics.
struct Leadership {
  bool leading = false;
  std::string identity;           // this replica
  std::string holder;             // the lease's holder as last read; empty when released or unknown
  std::string since;              // wall time (RFC 3339) this replica last started or stopped leading
  std::uint64_t transitions = 0;  // times this replica started or stopped leading
  std::string last_error;         // of the last attempt that failed; empty after a success
};

class LeaderElector {
 public:
  using WallClock = std::chrono::system_clock;

  LeaderElector(
      LeaseStore& store, std::string identity, ElectionTiming timing,
      std::function<TimePoint()> clock = [] { return steady_clock().now(); });

  // One attempt to acquire the lease or renew it, started at `now` (`wall` is what the lease
  // records; a term it wins runs from `now`). Whether another holder's lease is live is judged
  // by `clock` once the read returns. True when this replica leads after it. A failed renewal
  // keeps the leadership until its deadline.
  bool try_acquire_or_renew(TimePoint now, WallClock::time_point wall);
  // Gives the lease up if this replica holds it (holder emptied, duration 1 s, as client-go's
  // ReleaseOnCancel), so that a standby takes it at its next attempt. Leads no longer either way.
  void release(TimePoint now, WallClock::time_point wall);

  // Why this replica may not decide at `now`: a standby (and who leads), or a leader whose renew
  // deadline has passed; nullopt while it leads.
  std::optional<std::string> not_leading(TimePoint now) const;
  bool leads(TimePoint now) const { return now.time_since_epoch().count() < valid_until_.load(); }
  // The end of the current term (time_point{} when not leading).
  TimePoint valid_until() const { return TimePoint(Duration(valid_until_.load())); }
  // The latest instant by which a write sent now must be answered: the end of the term plus half
  // of (lease_duration - renew_deadline); time_point{} when not leading.
  TimePoint write_fence() const;
  // When the lease another replica holds expires on this replica's clock if it is not renewed;
  // nullopt when nobody else holds it (as last read).
  std::optional<TimePoint> others_lease_ends() const;
  // Records a step down once the deadline has passed; true when this call did (for the log line).
  bool note_deadline(TimePoint now, WallClock::time_point wall);
  Leadership view(TimePoint now) const;
  const ElectionTiming& timing() const { return timing_; }

 private:
  std::optional<LeaseRecord> renewable(TimePoint now) const;
  bool won(const LeaseRecord& written, TimePoint now, WallClock::time_point wall);
  void lead_until(TimePoint until, WallClock::time_point wall);
  void step_down(WallClock::time_point wall);

  LeaseStore& store_;
  const std::string identity_;
  const ElectionTiming timing_;
  const std::function<TimePoint()> clock_;

  mutable std::mutex mu_;
  LeaseRecord observed_;     // the lease as last read or written
  TimePoint observed_at_{};  // when a read or write that showed it changed returned
  bool leading_ = false;     // the state transitions were reported for
  bool lapsed_ = false;      // stepped down at the renew deadline, nobody else seen since
  std::string since_;
  std::uint64_t transitions_ = 0;
  std::string last_error_;
  std::atomic<SteadyClock::rep> valid_until_{0};  // end of the term, in SteadyClock ticks; 0 when not leading
};

// This replica's identity: "<POD_NAME>_<POD_UID>" from the downward API, else "<hostname>_<pid>".
std::string election_identity();
// The namespace the lease lives in: POD_NAMESPACE, else "default".
std::string election_namespace();

}  // namespace extender::kube
