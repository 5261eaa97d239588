#include "extender/state/demand_cache.h"

namespace extender::state {

void DemandCache::remember(const model::PodDemand& demand, TimePoint now) {
  if (capacity_ == 0 || demand.uid.empty()) return;
  std::lock_guard lock(mu_);
  if (auto it = index_.find(demand.uid); it != index_.end()) {
    order_.erase(it->second);
    index_.erase(it);
  }
  order_.push_front({demand, now});
  index_[demand.uid] = order_.begin();
  while (order_.size() > capacity_ || (!order_.empty() && now - order_.back().stored > max_age_)) {
    index_.erase(order_.back().demand.uid);
    order_.pop_back();
  }
}

std::optional<model::PodDemand> DemandCache::find(std::string_view uid, TimePoint now) const {
  std::lock_guard lock(mu_);
  auto it = index_.find(std::string(uid));
  if (it == index_.end() || now - it->second->stored > max_age_) return std::nullopt;
  return it->second->demand;
}

std::size_t DemandCache::size() const {
  std::lock_guard lock(mu_);
  return order_.size();
}

}  // namespace extender::state
