#pragma once
// LeaderElection: runs a LeaderElector on a thread of its own. It campaigns (every retry_period,
// with up to 0.2x jitter, and at the instant the lease it saw another replica hold expires) only
// while `may_campaign` says this replica could decide (its caches have synced; asked every 100 ms
// until then, so a replica campaigns as soon as it is ready), renews every retry_period while it
// leads, and wakes at the end of its term to report a step down when the renew deadline passes
// (verbs stop at the deadline itself: LeaderElector answers from the clock, even while an attempt
// waits on the API server). `on_transition` hears every start and end of leadership (one log line
// each) but the end by stop(), which releases a held lease and tells `on_release` (a hand-over, not
// a loss; without `on_release`, on_transition hears it too); `after_step` runs after every attempt
// (none while it may not campaign), with whether this replica leads (the leader label follows it).
// Callbacks run on the election thread. Thread-safe.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "extender/common/clock.h"
#include "extender/kube/leader_elector.h"

namespace extender::kube {

class LeaderElection {
 public:
  struct Hooks {
    std::function<bool()> may_campaign;
    std::function<void(const Leadership&)> on_transition;
    std::function<void(const Leadership&)> on_release;  // last_error says when the release failed
    std::function<void(bool leading)> after_step;
  };

  // `clock`: the terms' and the retries' time, and the wall time the lease records.
  LeaderElection(LeaseStore& store, std::string identity, ElectionTiming timing, Hooks hooks,
                 const Clock& clock = steady_clock());
  ~LeaderElection();

  void start();
  // Stops the loop; a leader gives the lease up first, so that a standby takes over within about
  // one retry_period instead of a lease_duration.
  void stop();

  std::optional<std::string> not_leading() const { return elector_.not_leading(clock_.now()); }
  TimePoint write_fence() const { return elector_.write_fence(); }
  Leadership view() const { return elector_.view(clock_.now()); }

 private:
  void run();
  const Clock& clock_;
  LeaderElector elector_;
  Hooks hooks_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace extender::kube
