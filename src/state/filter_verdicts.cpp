#include "extender/state/filter_verdicts.h"

#include <algorithm>
#include <functional>

namespace extender::state {
namespace {

std::uint64_t hash_of(std::string_view name) { return std::hash<std::string_view>{}(name); }

}  // namespace

void FilterVerdicts::record(std::string_view uid, const std::vector<std::string_view>& passed, TimePoint now) {
  std::vector<std::uint64_t> hashes;
  hashes.reserve(passed.size());
  for (std::string_view name : passed) hashes.push_back(hash_of(name));
  std::sort(hashes.begin(), hashes.end());
  std::lock_guard lock(mu_);
  if (auto it = index_.find(uid); it != index_.end()) {
    names_ -= it->second->hashes.size();
    Order::iterator entry = it->second;
    index_.erase(it);
    order_.erase(entry);
  }
  if (hashes.size() > max_names_) return;
  forget_oldest_until(max_names_ - hashes.size(), now);
  order_.push_front(Entry{std::string(uid), std::move(hashes), now});
  index_.emplace(order_.front().uid, order_.begin());
  names_ += order_.front().hashes.size();
}

void FilterVerdicts::forget_oldest_until(std::size_t room, TimePoint now) {
  while (!order_.empty() && (names_ > room || now - order_.back().stored > max_age_)) {
    names_ -= order_.back().hashes.size();
    index_.erase(order_.back().uid);
    order_.pop_back();
  }
}

FilterVerdicts::Verdict FilterVerdicts::verdict(std::string_view uid, std::string_view node, TimePoint now) const {
  std::lock_guard lock(mu_);
  auto it = index_.find(uid);
  if (it == index_.end() || now - it->second->stored > max_age_) return Verdict::kNotFiltered;
  const auto& hashes = it->second->hashes;
  return std::binary_search(hashes.begin(), hashes.end(), hash_of(node)) ? Verdict::kPassed : Verdict::kNotPassed;
}

std::size_t FilterVerdicts::names() const {
  std::lock_guard lock(mu_);
  return names_;
}

}  // namespace extender::state
