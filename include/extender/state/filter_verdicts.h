#pragma once
// FilterVerdicts: for each pod UID, the nodes that passed its latest /filter, for /bind to check
// that a bind lands only where kube-scheduler's own filters passed (it sends /filter exactly the
// nodes that passed all of its filters) and the daemon's filter passed too. Names are kept as
// 64-bit hashes, sorted. Bounded: a verdict older than max_age is forgotten, and at most
// max_names names are kept in all (the least recently filtered pods are forgotten first; a pod
// with more names than that keeps none and counts as never filtered). Thread-safe.
#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "extender/common/clock.h"
#include "extender/state/cluster_state.h"

namespace extender::state {

class FilterVerdicts {
 public:
  enum class Verdict { kPassed, kNotPassed, kNotFiltered };

  FilterVerdicts(std::size_t max_names, Duration max_age) : max_names_(max_names), max_age_(max_age) {}

  // The nodes of `passed` passed the filter of pod `uid` at `now` (replacing what it had).
  void record(std::string_view uid, const std::vector<std::string_view>& passed, TimePoint now);
  Verdict verdict(std::string_view uid, std::string_view node, TimePoint now) const;
  std::size_t names() const;

 private:
  struct Entry {
    std::string uid;
    std::vector<std::uint64_t> hashes;
    TimePoint stored;
  };
  using Order = std::list<Entry>;
  void forget_oldest_until(std::size_t room, TimePoint now);  // needs mu_

  const std::size_t max_names_;
  const Duration max_age_;
  mutable std::mutex mu_;
  Order order_;                                                  // most recently filtered first
  std::unordered_map<std::string_view, Order::iterator> index_;  // keys view Entry::uid
  std::size_t names_ = 0;
};

}  // namespace extender::state
