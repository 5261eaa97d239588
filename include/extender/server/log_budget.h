#pragma once
// LogBudget: how many per-call log lines each caller (a peer address) may have written, so that a
// caller sending thousands of calls a second cannot flood the log: drown kube-scheduler's lines,
// push them out of the node's rotated log files, or spend the daemon's CPU and its log lock on
// writing. A token bucket per caller: `per_second` lines a second, bursts of twice that. A call
// past its caller's budget is counted instead of written, and the count goes with the caller's
// next written line (within 1 / per_second of its last, while it keeps calling). Memory is
// bounded: past `max_callers` callers, those whose bucket is full and who owe no count (the same
// as a caller never seen) are forgotten, in one walk at most once a second; until that walk makes
// room, newcomers share one bucket. Pure bookkeeping: no I/O, no clock (the caller passes `now`).
// Thread-safe: one mutex, held for a hash lookup.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "extender/common/clock.h"

namespace extender::server {

class LogBudget {
 public:
  struct Options {
    double per_second = 0;  // 0: no budget, every line is written
    std::size_t max_callers = 4096;
  };

  struct Verdict {
    bool write = true;           // write this call's line (else it is counted)
    bool shared = false;         // `unlogged` counts the shared bucket's callers, not this one alone
    std::uint64_t unlogged = 0;  // when written: the calls not written since the bucket's last line
    Duration span{};             // from the first of those calls to now
  };

  explicit LogBudget(Options options) : options_(options) {}
  // Whether the line of `caller`'s call at `now` is written, with the calls not written before it
  // since the bucket's last line; counts it when not.
  Verdict admit(std::string_view caller, TimePoint now);
  std::size_t callers() const;

 private:
  struct Bucket {
    double tokens = 0;
    TimePoint refilled{};
    std::uint64_t unlogged = 0;
    TimePoint first_unlogged{};
  };
  double burst() const { return 2 * options_.per_second; }
  void refill(Bucket& b, TimePoint now) const;
  Bucket& bucket_of(std::string_view caller, TimePoint now, bool& shared);  // needs mu_
  void forget_idle(TimePoint now);                                          // needs mu_

  const Options options_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
  TimePoint forgotten_{};  // the last walk of forget_idle
};

}  // namespace extender::server
