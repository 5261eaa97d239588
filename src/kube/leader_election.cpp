#include "extender/kube/leader_election.h"

#include <random>

namespace extender::kube {

namespace {
constexpr std::chrono::milliseconds kSyncPoll{100};
constexpr double kJitter = 0.2;
}  // namespace

LeaderElection::LeaderElection(LeaseStore& store, std::string identity, ElectionTiming timing, Hooks hooks,
                               const Clock& clock)
    : clock_(clock),
      elector_(store, std::move(identity), timing, [&clock] { return clock.now(); }),
      hooks_(std::move(hooks)) {}

LeaderElection::~LeaderElection() { stop(); }

void LeaderElection::start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable() || stop_) return;
  thread_ = std::thread([this] { run(); });
}

void LeaderElection::stop() {
  {
    std::lock_guard lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  const bool led = elector_.view(clock_.now()).leading;
  elector_.release(clock_.now(), clock_.wall_now());
  const auto& heard = hooks_.on_release ? hooks_.on_release : hooks_.on_transition;
  if (led && heard) heard(elector_.view(clock_.now()));
  if (hooks_.after_step) hooks_.after_step(false);
}

void LeaderElection::run() {
  const ElectionTiming& t = elector_.timing();
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> jitter(0.0, kJitter);
  bool reported = false;
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    const TimePoint started = clock_.now();
    bool leads = elector_.leads(started);
    const bool campaign = leads || !hooks_.may_campaign || hooks_.may_campaign();
    if (campaign) leads = elector_.try_acquire_or_renew(started, clock_.wall_now());
    if (leads != reported) {
      reported = leads;
      if (hooks_.on_transition) hooks_.on_transition(elector_.view(clock_.now()));
    }
    if (campaign && hooks_.after_step) hooks_.after_step(leads);
    TimePoint next = clock_.now() + t.retry_period;
    if (!campaign) {
      next = clock_.now() + std::min<Duration>(t.retry_period, kSyncPoll);
    } else if (!leads) {
      next += std::chrono::duration_cast<Duration>(t.retry_period * jitter(rng));
      if (auto ends = elector_.others_lease_ends(); ends && *ends < next) next = std::max(*ends, clock_.now());
    } else {
      next = std::min(next, elector_.valid_until());
    }
    lock.lock();
    clock_.wait(lock, cv_, next, [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    if (elector_.note_deadline(clock_.now(), clock_.wall_now())) {
      reported = false;
      if (hooks_.on_transition) hooks_.on_transition(elector_.view(clock_.now()));
      if (hooks_.after_step) hooks_.after_step(false);
    }
    lock.lock();
  }
}

}  // namespace extender::kube
