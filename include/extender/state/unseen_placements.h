#pragma once
// UnseenPlacements: pods with claims still to be placed that passed the daemon's filter. Where
// kube-scheduler put such a pod shows first on its claims: VolumeBinding writes
// volume.kubernetes.io/selected-node at the start of its PreBind, some milliseconds after the
// choice, and provisioning starts then, before any extender's /bind is called (and for a pod that
// needs no GPU, kube-scheduler binds it itself). The next such pod's filter waits for the earlier
// ones to show (kube-scheduler schedules one pod at a time, so that is one pod, rarely two), at
// most `wait` past the earlier pod's filter, so that a burst is counted pod by pod instead of
// being decided on the same free space. Records are kept per caller (the peer address of the
// filter's request): a filter waits only for the placements of pods the same caller filtered,
// since kube-scheduler waits on its own decisions only, so a stranger replaying /filter for real
// pending pods delays its own filters, never kube-scheduler's, and cannot replace or end the
// records kube-scheduler's filters made. Bounded: at most `capacity` pods are kept per caller
// and 4 x `capacity` in all (the oldest forgotten first). A pod makes others wait only within
// `wait` of its first record in a window of kCooldownWaits waits: filtering it again
// (kube-scheduler's retry, or a caller re-sending it to stall its own) neither extends nor renews
// its wait until the window has passed. Thread-safe; the caller waits, this class never sleeps.
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "extender/common/clock.h"

namespace extender::state {

class UnseenPlacements {
 public:
  // Whether the claim "namespace/name" shows a placement (a selected node, or bound).
  using Placed = std::function<bool(const std::string& claim)>;

  static constexpr int kCooldownWaits = 20;

  UnseenPlacements(Duration wait, std::size_t capacity = 64) : wait_(wait), capacity_(capacity) {}

  // Pod `uid` passed a filter of `caller` at `now` with these claims, none placed yet (replacing
  // what that caller's filters recorded for it; its wait still counted from its first record in
  // the window).
  void record(const std::string& caller, const std::string& uid, std::vector<std::string> claims, TimePoint now);
  // Forgets the pods whose claims all show a placement or whose wait has passed by `now`, and
  // returns when the latest wait of the rest that `caller` filtered, other than `uid`, ends
  // (`now` or earlier: none to wait for).
  TimePoint wait_ends(const std::string& caller, const std::string& uid, const Placed& placed, TimePoint now);
  std::size_t size() const;

 private:
  struct Entry {
    std::string caller;
    std::string uid;
    std::vector<std::string> claims;
    TimePoint filtered;
  };
  struct First {
    std::string caller;
    std::string uid;
    TimePoint at;
  };
  const Duration wait_;
  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::deque<Entry> entries_;
  std::deque<First> firsts_;  // each (caller, uid)'s first record in its window
};

}  // namespace extender::state
