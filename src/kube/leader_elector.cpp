#include "extender/kube/leader_elector.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace extender::kube {

namespace {

// A lease duration read from the API server is held to a year (no time arithmetic overflows).
constexpr std::int64_t kMaxLeaseSeconds = std::int64_t{365} * 24 * 3600;

std::int64_t whole_seconds_at_least(std::chrono::milliseconds d) {
  return std::max<std::int64_t>(1, (d.count() + 999) / 1000);
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

LeaderElector::LeaderElector(LeaseStore& store, std::string identity, ElectionTiming timing,
                             std::function<TimePoint()> clock)
    : store_(store), identity_(std::move(identity)), timing_(timing), clock_(std::move(clock)) {}

bool LeaderElector::try_acquire_or_renew(TimePoint now, WallClock::time_point wall) {
  auto fail = [&](std::string why) {
    std::lock_guard lock(mu_);
    last_error_ = std::move(why);
    return leads(now);
  };
  LeaseRecord next;
  next.holder = identity_;
  next.lease_duration_seconds = whole_seconds_at_least(timing_.lease_duration);
  next.renew_time = micro_time(wall);

  if (std::optional<LeaseRecord> held = renewable(now)) {
    next.acquire_time = held->acquire_time;
    next.transitions = held->transitions;
    next.resource_version = held->resource_version;
    auto written = store_.update(next);
    if (!written) return fail(written.message());
    if (*written == WriteOutcome::kWritten) return won(next, now, wall);
  }
  auto got = store_.get();
  if (!got) return fail(got.message());
  if (!got->has_value()) {
    next.acquire_time = next.renew_time;
    auto written = store_.create(next);
    if (!written) return fail(written.message());
    if (*written == WriteOutcome::kConflict) {
      return fail("Lease " + store_.where() + " was created by another replica meanwhile");
    }
  } else {
    const LeaseRecord& old = **got;
    const TimePoint seen = std::max(now, clock_());
    std::unique_lock lock(mu_);
    if (!old.same_spec(observed_)) {
      observed_ = old;
      observed_at_ = seen;
    }
    const bool live =
        observed_at_ + std::chrono::seconds(std::clamp<std::int64_t>(old.lease_duration_seconds, 0, kMaxLeaseSeconds)) >
        seen;
    if (!old.holder.empty() && old.holder != identity_ && live) {
      last_error_.clear();
      lapsed_ = false;
      if (leading_) step_down(wall);
      return false;
    }
    lock.unlock();
    if (old.holder == identity_) {
      next.acquire_time = old.acquire_time;
      next.transitions = old.transitions;
    } else {
      next.acquire_time = next.renew_time;
      next.transitions = old.transitions + 1;
    }
    next.resource_version = old.resource_version;
    auto written = store_.update(next);
    if (!written) return fail(written.message());
    if (*written == WriteOutcome::kConflict) return fail("Lease " + store_.where() + " changed meanwhile (409)");
  }
  return won(next, now, wall);
}

std::optional<LeaseRecord> LeaderElector::renewable(TimePoint now) const {
  std::lock_guard lock(mu_);
  if (!leads(now) || observed_.holder != identity_ || observed_.resource_version.empty()) return std::nullopt;
  return observed_;
}

bool LeaderElector::won(const LeaseRecord& written, TimePoint now, WallClock::time_point wall) {
  std::lock_guard lock(mu_);
  observed_ = written;
  observed_at_ = now;
  last_error_.clear();
  lead_until(now + timing_.renew_deadline, wall);
  return true;
}

std::optional<TimePoint> LeaderElector::others_lease_ends() const {
  std::lock_guard lock(mu_);
  if (observed_.holder.empty() || observed_.holder == identity_ || observed_at_ == TimePoint{}) return std::nullopt;
  return observed_at_ +
         std::chrono::seconds(std::clamp<std::int64_t>(observed_.lease_duration_seconds, 0, kMaxLeaseSeconds));
}

TimePoint LeaderElector::write_fence() const {
  const TimePoint until = valid_until();
  if (until == TimePoint{}) return until;
  return until + (timing_.lease_duration - timing_.renew_deadline) / 2;
}

void LeaderElector::release(TimePoint now, WallClock::time_point wall) {
  LeaseRecord released;
  {
    std::lock_guard lock(mu_);
    const bool held = leads(now) && observed_.holder == identity_;
    if (leading_) step_down(wall);
    if (!held) return;
    released = observed_;
  }
  released.holder.clear();
  released.lease_duration_seconds = 1;
  released.acquire_time = micro_time(wall);
  released.renew_time = released.acquire_time;
  auto written = store_.update(released);
  std::lock_guard lock(mu_);
  if (!written) {
    last_error_ = "releasing Lease " + store_.where() + ": " + written.message();
  } else if (*written == WriteOutcome::kConflict) {
    last_error_ = "releasing Lease " + store_.where() + ": it changed meanwhile (409)";
  } else {
    observed_ = released;
    observed_at_ = now;
    last_error_.clear();
  }
}

std::optional<std::string> LeaderElector::not_leading(TimePoint now) const {
  if (leads(now)) return std::nullopt;
  std::lock_guard lock(mu_);
  if (leading_ || lapsed_) {
    return "this replica's leadership lapsed: Lease " + store_.where() + " was not renewed within the renew deadline" +
           (last_error_.empty() ? std::string() : " (" + last_error_ + ")");
  }
  if (observed_.holder.empty() || observed_.holder == identity_) {
    return "this replica is not the leader; no replica holds Lease " + store_.where() + " now";
  }
  return "this replica is a standby; " + observed_.holder + " leads (Lease " + store_.where() + ")";
}

bool LeaderElector::note_deadline(TimePoint now, WallClock::time_point wall) {
  std::lock_guard lock(mu_);
  if (!leading_ || leads(now)) return false;
  step_down(wall);
  lapsed_ = true;
  return true;
}

Leadership LeaderElector::view(TimePoint now) const {
  std::lock_guard lock(mu_);
  return {leads(now), identity_, observed_.holder, since_, transitions_, last_error_};
}

void LeaderElector::lead_until(TimePoint until, WallClock::time_point wall) {
  valid_until_.store(until.time_since_epoch().count());
  lapsed_ = false;
  if (leading_) return;
  leading_ = true;
  since_ = micro_time(wall);
  ++transitions_;
}

void LeaderElector::step_down(WallClock::time_point wall) {
  valid_until_.store(0);
  leading_ = false;
  since_ = micro_time(wall);
  ++transitions_;
}

std::string election_identity() {
  const std::string name = env("POD_NAME");
  const std::string uid = env("POD_UID");
  if (!name.empty()) return name + "_" + (uid.empty() ? std::to_string(getpid()) : uid);
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::snprintf(host, sizeof host, "unknown-host");
  return std::string(host) + "_" + std::to_string(getpid());
}

std::string election_namespace() {
  std::string ns = env("POD_NAMESPACE");
  return ns.empty() ? "default" : ns;
}

}  // namespace extender::kube
