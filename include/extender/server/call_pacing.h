#pragma once
// CallPacing: which verb calls are answered late, so that a caller looping on calls kube-scheduler
// never makes waits between them instead of keeping the daemon's CPUs (and its own) busy. A
// caller is a peer address. kube-scheduler calls each verb once for a pod per scheduling attempt
// (twice when the pod has a nominated node) and waits at least a second between attempts (its
// backoff), and it rarely gets an error. So a call is paced when, within one second, it is past
// `repeats_per_second` calls of its verb for one pod from its caller, or when its answer is an
// error past the caller's budget of `errors_per_second` (a token bucket, bursts of twice that:
// made-up pods, malformed bodies). A paced answer is held before it is sent
// (http::HttpResponse::not_before): `hold` for an error; for a repeated call `hold` times its
// number over the limit, at most kMostHolds times (calls 11 to 19 of a pod's second once, from
// the 20th twice), so that a caller repeating one pod from many connections gets fewer answers
// the longer it goes on, while every held answer still leaves within the relay's upstream
// timeout (a stranger calling through the relay cannot open its breaker with held answers). A
// held answer stays right. Memory is bounded: at most `max_pods` (caller, verb, pod) windows are
// kept, those ended forgotten in one walk at most once a second, and past that new ones go
// uncounted (never paced); the error budgets are a LogBudget's (bounded the same way). Pure
// bookkeeping: no I/O, no clock (the caller passes `now`). Thread-safe: one mutex, held for a
// hash lookup.
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "extender/common/clock.h"
#include "extender/server/log_budget.h"

namespace extender::server {

class CallPacing {
 public:
  struct Options {
    Duration hold{};  // 0: no pacing
    int repeats_per_second = 10;
    double errors_per_second = 20;
    std::size_t max_pods = 16'384;
    std::size_t max_callers = 4'096;
  };

  static constexpr int kMostHolds = 2;

  enum class Reason { kNone, kRepeated, kErrors };
  struct Verdict {
    Reason reason = Reason::kNone;
    TimePoint answer_at{};  // when paced: when the answer may be sent
    int repeats = 0;        // the call's number among its pod's calls of its verb in the window
  };

  explicit CallPacing(Options options) : options_(options), errors_({options.errors_per_second, options.max_callers}) {}
  // Counts `caller`'s call of `verb` for pod `pod_uid` (empty: none known) answered at `now`,
  // `error` when its answer is an error, and says whether its answer is held.
  Verdict judge(std::string_view caller, std::string_view verb, std::string_view pod_uid, bool error, TimePoint now);
  std::size_t windows() const;

 private:
  struct Window {
    TimePoint start{};
    int calls = 0;
  };
  int count_repeat(std::string_view caller, std::string_view verb, std::string_view pod_uid, TimePoint now);
  void forget_ended(TimePoint now);  // needs mu_

  const Options options_;
  LogBudget errors_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Window> windows_;
  TimePoint forgotten_{};  // the last walk of forget_ended
};

}  // namespace extender::server
