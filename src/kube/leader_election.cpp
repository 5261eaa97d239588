#include "extender/kube/leader_election.h"

#include <random>

namespace extender::kube {

namespace {
constexpr std::chrono::milliseconds kSyncPoll{100};
constexpr double kJitter = 0.2;
}  // namespace

LeaderElection::LeaderElection(LeaseStore& store, std::string identity, ElectionTiming timing, Hooks hooks)
    : elector_(store, std::move(identity), timing), hooks_(std::move(hooks)) {}

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
  const bool led = elector_.view(SteadyClock::now()).leading;
  elector_.release(SteadyClock::now(), LeaderElector::WallClock::now());
  const auto& heard = hooks_.on_release ? hooks_.on_release : hooks_.on_transition;
  if (led && heard) heard(elector_.view(SteadyClock::now()));
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
    const TimePoint started = SteadyClock::now();
    bool leads = elector_.leads(started);
    const bool campaign = leads || !hooks_.may_campaign || hooks_.may_campaign();
    if (campaign) leads = elector_.try_acquire_or_renew(started, LeaderElector::WallClock::now());
    if (leads != reported) {
      reported = leads;
      if (hooks_.on_transition) hooks_.on_transition(elector_.view(SteadyClock::now()));
    }
    if (campaign && hooks_.after_step) hooks_.after_step(leads);
    TimePoint next = SteadyClock::now() + t.retry_period;
    if (!campaign) {
      next = SteadyClock::now() + std::min<Duration>(t.retry_period, kSyncPoll);
    } else if (!leads) {
      next += std::chrono::duration_cast<Duration>(t.retry_period * jitter(rng));
      if (auto ends = elector_.others_lease_ends(); ends && *ends < next) next = std::max(*ends, SteadyClock::now());
    } else {
      next = std::min(next, elector_.valid_until());
    }
    lock.lock();
    cv_.wait_until(lock, next, [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    if (elector_.note_deadline(SteadyClock::now(), LeaderElector::WallClock::now())) {
      reported = false;
      if (hooks_.on_transition) hooks_.on_transition(elector_.view(SteadyClock::now()));
      if (hooks_.after_step) hooks_.after_step(false);
    }
    lock.lock();
  }
}

}  // namespace extender::kube
