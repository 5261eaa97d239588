#include "extender/state/unseen_placements.h"

#include <algorithm>
#include <iterator>

namespace extender::state {

void UnseenPlacements::record(const std::string& caller, const std::string& uid, std::vector<std::string> claims,
                              TimePoint now) {
  std::lock_guard lock(mu_);
  const auto same = [&](const auto& e) { return e.caller == caller && e.uid == uid; };
  std::erase_if(entries_, same);
  if (claims.empty() || capacity_ == 0) return;
  auto first = std::find_if(firsts_.begin(), firsts_.end(), same);
  if (first == firsts_.end() || now - first->at >= wait_ * kCooldownWaits) {
    if (first != firsts_.end()) firsts_.erase(first);
    while (firsts_.size() >= capacity_ * 4) firsts_.pop_front();
    firsts_.push_back({caller, uid, now});
    first = std::prev(firsts_.end());
  }
  const TimePoint since = first->at;
  if (since + wait_ <= now) return;  // its wait in this window is spent
  std::erase_if(entries_, [&](const Entry& e) { return e.filtered + wait_ <= now; });
  const auto callers = [&](const Entry& e) { return e.caller == caller; };
  if (static_cast<std::size_t>(std::count_if(entries_.begin(), entries_.end(), callers)) >= capacity_) {
    entries_.erase(std::find_if(entries_.begin(), entries_.end(), callers));
  }
  while (entries_.size() >= capacity_ * 4) entries_.pop_front();
  entries_.push_back({caller, uid, std::move(claims), since});
}

TimePoint UnseenPlacements::wait_ends(const std::string& caller, const std::string& uid, const Placed& placed,
                                      TimePoint now) {
  std::lock_guard lock(mu_);
  std::erase_if(entries_, [&](const Entry& e) {
    return e.filtered + wait_ <= now || std::all_of(e.claims.begin(), e.claims.end(), placed);
  });
  TimePoint until = now;
  for (const Entry& e : entries_) {
    if (e.caller == caller && e.uid != uid) until = std::max(until, e.filtered + wait_);
  }
  return until;
}

std::size_t UnseenPlacements::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace extender::state
