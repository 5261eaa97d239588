#pragma once
// DemandCache: each pod's demand by UID, remembered from its latest /filter or /prioritize because
// /bind carries only names. Bounded in count (least recently stored goes first) and in age.
// Thread-safe.
#include <chrono>
#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "extender/common/clock.h"
#include "extender/model/demand.h"
#include "extender/state/cluster_state.h"

namespace extender::state {

class DemandCache {
 public:
  DemandCache(std::size_t capacity, Duration max_age) : capacity_(capacity), max_age_(max_age) {}

  void remember(const model::PodDemand& demand, TimePoint now);
  std::optional<model::PodDemand> find(std::string_view uid, TimePoint now) const;
  std::size_t size() const;

 private:
  struct Entry {
    model::PodDemand demand;
    TimePoint stored;
  };
  using Order = std::list<Entry>;

  std::size_t capacity_;
  Duration max_age_;
  mutable std::mutex mu_;
  Order order_;  // most recently stored first
  std::unordered_map<std::string, Order::iterator> index_;
};

}  // namespace extender::state
