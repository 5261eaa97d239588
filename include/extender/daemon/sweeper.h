#pragma once
// Sweeper: every `interval`, ends the holds of pod groups in flight whose lifetime ended (with
// `in_flight`; before the reservations, so that they are not reported as binds never confirmed),
// drops the reservations whose bind the cluster never confirmed by their expiry on `clock`, and reports nodes that
// became overcommitted (once per node and episode), to the log and the metrics, and, with `dra`, nodes whose GPUs come
// from a device plugin and DRA at once (once per node, resource and episode, to the log; /metrics and /debug/dra show
// them while they last). Runs its own thread from construction until destroyed; sweep() is the pass the thread makes,
// for a caller that drives the time itself (not concurrently with the thread's pass: a Sweeper built with interval 0
// makes none).
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "extender/common/clock.h"
#include "extender/engine/ports.h"
#include "extender/server/metrics.h"
#include "extender/state/cluster_state.h"
#include "extender/state/in_flight_holds.h"
#include "extender/state/mixed_gpu_sources.h"
#include "extender/state/overcommit.h"

namespace extender::daemon {

class Sweeper {
 public:
  struct Pass {
    std::size_t expired = 0;                     // reservations dropped
    std::size_t holds_ended = 0;                 // holds of pod groups in flight ended
    std::vector<state::Overcommit> overcommits;  // episodes that started
    std::vector<state::MixedGpuSources> mixed;   // episodes that started
  };

  // interval 0: no thread; only sweep() sweeps.
  Sweeper(state::ClusterState& state, server::Metrics& metrics, const Clock& clock, std::chrono::milliseconds interval,
          const engine::DraSource* dra = nullptr, state::InFlightHolds* in_flight = nullptr);
  ~Sweeper();
  Sweeper(const Sweeper&) = delete;
  Sweeper& operator=(const Sweeper&) = delete;

  Pass sweep();

 private:
  state::ClusterState& state_;
  server::Metrics& metrics_;
  const Clock& clock_;
  const engine::DraSource* dra_;
  state::InFlightHolds* in_flight_;
  state::OvercommitTracker overcommits_;
  state::MixedGpuSourcesTracker mixed_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace extender::daemon
