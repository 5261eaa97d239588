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

void InFlightHolds::hold(const std::string& uid, std::string group, Claim claim, TimePoint now) {
  std::lock_guard lock(mu_);
  drop_locked(uid);
  while (options_.capacity > 0 && entries_.size() >= options_.capacity) {
    auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                   [](const auto& a, const auto& b) { return a.second.view.since < b.second.view.since; });
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
