#include "extender/state/in_flight_holds.h"

#include <algorithm>

namespace extender::state {

const char* InFlightHolds::phase_name(Phase p) {
  switch (p) {
    case Phase::kFiltered: return "filtered";
    case Phase::kNominated: return "nominated";
    case Phase::kPreBind: return "prebind";
  }
  return "?";
}

void InFlightHolds::drop_locked(std::string_view uid) {
  auto it = entries_.find(uid);
  if (it == entries_.end()) return;
  state_.drop_reservation(uid, kInFlightSource);
  entries_.erase(it);
}

std::size_t InFlightHolds::drop_unpublished_locked(std::string_view group) {
  std::vector<std::string> ended;
  for (const auto& [held, e] : entries_) {
    if (e.view.group == group && e.view.phase == Phase::kFiltered) ended.push_back(held);
  }
  for (const auto& held : ended) drop_locked(held);
  return ended.size();
}

void InFlightHolds::group_min_count(const std::string& group, std::int64_t min_count) {
  std::lock_guard lock(mu_);
  if (min_count > 0) {
    min_counts_.insert_or_assign(group, min_count);
  } else {
    min_counts_.erase(group);
  }
}

std::size_t InFlightHolds::refused(const std::string& uid, const std::string& group, std::size_t pending,
                                   std::size_t bound) {
  std::lock_guard lock(mu_);
  auto cycle = cycles_.find(group);
  auto min = min_counts_.find(group);
  if (cycle == cycles_.end() || min == min_counts_.end()) return 0;
  cycle->second.refused.insert(uid);
  const std::size_t refused = cycle->second.refused.size();
  const std::size_t reachable = (pending > refused ? pending - refused : 0) + bound;
  if (static_cast<std::int64_t>(reachable) >= min->second) return 0;
  return drop_unpublished_locked(group);
}

std::size_t InFlightHolds::cycle(const std::string& uid, const std::string& group, TimePoint now) {
  if (group.empty()) return 0;
  std::lock_guard lock(mu_);
  Cycle& current = cycles_.try_emplace(group).first->second;
  std::size_t dropped = 0;
  if (current.filtered.count(uid) > 0) {
    dropped = drop_unpublished_locked(group);
    current.filtered.clear();
    current.refused.clear();
  }
  if (current.filtered.empty()) current.began = now;
  current.filtered.insert(uid);
  for (const auto& member : current.filtered) {
    auto it = entries_.find(member);
    if (it == entries_.end() || it->second.view.phase != Phase::kFiltered) continue;
    if (state_.extend_reservation(member, kInFlightSource, now + options_.settle)) {
      it->second.view.expires = now + options_.settle;
    }
  }
  while (options_.capacity > 0 && cycles_.size() > options_.capacity) {
    auto oldest = std::min_element(cycles_.begin(), cycles_.end(),
                                   [](const auto& a, const auto& b) { return a.second.began < b.second.began; });
    cycles_.erase(oldest);
  }
  return dropped;
}

void InFlightHolds::hold(const std::string& uid, std::string group, Claim claim, TimePoint now) {
  std::lock_guard lock(mu_);
  drop_locked(uid);
  while (options_.capacity > 0 && entries_.size() >= options_.capacity) {
    auto oldest = std::min_element(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) {
      return a.second.view.since < b.second.view.since;
    });
    drop_locked(oldest->first);
  }
  if (options_.capacity == 0) return;
  Entry e;
  e.view.uid = uid;
  e.view.owner = claim.owner;
  e.view.group = std::move(group);
  e.view.node = claim.node;
  e.view.allocation = claim.allocation;
  e.view.since = now;
  e.view.expires = now + options_.settle;
  claim.source = std::string(kInFlightSource);
  state_.reserve(uid, std::move(claim), options_.settle, now);
  entries_.emplace(uid, std::move(e));
}

void InFlightHolds::advance(std::string_view uid, std::string_view node, Phase phase, TimePoint now) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(uid);
  if (it == entries_.end()) return;
  if (it->second.view.node != node) {
    drop_locked(uid);
    return;
  }
  if (!state_.extend_reservation(uid, kInFlightSource, now + options_.lifetime)) {
    entries_.erase(it);
    return;
  }
  it->second.view.phase = std::max(it->second.view.phase, phase);
  it->second.view.expires = now + options_.lifetime;
}

void InFlightHolds::nominated(std::string_view uid, std::string_view node, TimePoint now) {
  advance(uid, node, Phase::kNominated, now);
}

void InFlightHolds::pre_bound(std::string_view uid, std::string_view node, TimePoint now) {
  advance(uid, node, Phase::kPreBind, now);
}

void InFlightHolds::claim_selected(std::string_view claim, std::string_view node, TimePoint now) {
  std::string uid;
  {
    std::lock_guard lock(mu_);
    for (const auto& [held, e] : entries_) {
      for (const auto& v : e.view.allocation.volumes) {
        if (v.claim == claim) uid = held;
      }
    }
  }
  if (!uid.empty()) advance(uid, node, Phase::kPreBind, now);
}

void InFlightHolds::bound(std::string_view uid) {
  std::lock_guard lock(mu_);
  if (auto it = entries_.find(uid); it != entries_.end()) entries_.erase(it);
}

void InFlightHolds::released(std::string_view uid) {
  std::lock_guard lock(mu_);
  drop_locked(uid);
}

std::size_t InFlightHolds::group_failed(std::string_view group, TimePoint when) {
  if (group.empty()) return 0;
  std::lock_guard lock(mu_);
  std::vector<std::string> failed;
  for (const auto& [uid, e] : entries_) {
    if (e.view.group == group && e.view.since <= when) failed.push_back(uid);
  }
  for (const auto& uid : failed) drop_locked(uid);
  if (auto it = cycles_.find(group); it != cycles_.end() && it->second.began <= when) cycles_.erase(it);
  return failed.size();
}

bool InFlightHolds::ledger_has_hold(const Entry& e) const {
  auto claim = state_.claim_of(e.view.uid);
  return claim && claim->kind == Claim::Kind::kReserved && claim->source == kInFlightSource &&
         claim->node == e.view.node;
}

std::size_t InFlightHolds::sweep(TimePoint now) {
  std::lock_guard lock(mu_);
  std::vector<std::string> ended;
  for (const auto& [uid, e] : entries_) {
    if (e.view.expires <= now || !ledger_has_hold(e)) ended.push_back(uid);
  }
  for (const auto& uid : ended) drop_locked(uid);
  return ended.size();
}

std::vector<InFlightHolds::HoldView> InFlightHolds::holds() const {
  std::lock_guard lock(mu_);
  std::vector<HoldView> out;
  out.reserve(entries_.size());
  for (const auto& [uid, e] : entries_) out.push_back(e.view);
  return out;
}

std::size_t InFlightHolds::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace extender::state
