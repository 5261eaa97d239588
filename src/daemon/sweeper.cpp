#include "extender/daemon/sweeper.h"

#include <spdlog/spdlog.h>

namespace extender::daemon {

Sweeper::Sweeper(state::ClusterState& state, server::Metrics& metrics, const Clock& clock,
                 std::chrono::milliseconds interval, const engine::DraSource* dra, state::InFlightHolds* in_flight)
    : state_(state), metrics_(metrics), clock_(clock), dra_(dra), in_flight_(in_flight) {
  if (interval.count() <= 0) return;
  thread_ = std::thread([this, interval] {
    std::unique_lock lock(mu_);
    while (!clock_.wait(lock, cv_, clock_.now() + interval, [this] { return stop_; })) {
      lock.unlock();
      sweep();
      lock.lock();
    }
  });
}

Sweeper::~Sweeper() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Sweeper::Pass Sweeper::sweep() {
  Pass pass;
  if (in_flight_) pass.holds_ended = in_flight_->sweep(clock_.now());
  pass.expired = state_.sweep_expired(clock_.now());
  if (pass.expired) {
    metrics_.observe_expired_reservations(pass.expired);
    spdlog::warn("{} reservation(s) expired before the cluster confirmed their bind", pass.expired);
  }
  const state::Snapshot snapshot = state_.snapshot();
  pass.overcommits = overcommits_.update(snapshot);
  for (const auto& o : pass.overcommits) {
    metrics_.observe_overcommit(o);
    spdlog::error("{}", state::describe(o));
  }
  if (dra_) {
    const auto inventory = dra_->dra_snapshot();
    pass.mixed = mixed_.update(inventory ? state::find_mixed_gpu_sources(snapshot, *inventory)
                                         : std::vector<state::MixedGpuSources>{});
    for (const auto& m : pass.mixed) spdlog::error("{}", state::describe(m));
  }
  return pass;
}

}  // namespace extender::daemon
