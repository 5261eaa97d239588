#include "extender/state/unseen_placements.h"

#include <algorithm>
#include <iterator>

namespace extender::state {

void UnseenPlacements::record(const std::string& uid, std::vector<std::string> claims, TimePoint now) {
  std::lock_guard lock(mu_);
  std::erase_if(entries_, [&](const Entry& e) { return e.uid == uid; });
  if (claims.empty() || capacity_ == 0) return;
  auto first = std::find_if(firsts_.begin(), firsts_.end(), [&](const auto& f) { return f.first == uid; });
  if (first == firsts_.end() || now - first->second >= wait_ * kCooldownWaits) {
    if (first != firsts_.end()) firsts_.erase(first);
    while (firsts_.size() >= capacity_ * 4) firsts_.pop_front();
    firsts_.emplace_back(uid, now);
    first = std::prev(firsts_.end());
  }
  const TimePoint since = first->second;
  if (since + wait_ <= now) return;  // its wait in this window is spent
  while (entries_.size() >= capacity_) entries_.pop_front();
  entries_.push_back({uid, std::move(claims), since});
}

TimePoint UnseenPlacements::wait_ends(const std::string& uid, const Placed& placed, TimePoint now) {
  std::lock_guard lock(mu_);
  std::erase_if(entries_, [&](const Entry& e) {
    return e.filtered + wait_ <= now || std::all_of(e.claims.begin(), e.claims.end(), placed);
  });
  TimePoint until = now;
  for (const Entry& e : entries_) {
    if (e.uid != uid) until = std::max(until, e.filtered + wait_);
  }
  return until;
}

std::size_t UnseenPlacements::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace extender::state
