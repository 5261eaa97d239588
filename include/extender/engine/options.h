#pragma once
// The options of the Extender (extender.h), each with its default. Config composes
// ReservationOptions under state.* and BindOptions under kubernetes.*, and fills the rest from
// its gpu, storage and scoring sections. Value types.
#include <chrono>
#include <string>
#include <vector>

#include "extender/model/demand.h"
#include "extender/policy/score.h"

namespace extender::engine {

struct ReservationOptions {
  std::chrono::milliseconds reservation_ttl{300'000};  // a bind's reservation until the cluster confirms it
};

struct BindOptions {
  std::chrono::milliseconds bind_timeout{4'000};  // below the scheduler's httpTimeout (5s by default)
  // /bind and /preempt act only for pods whose spec.schedulerName is one of these.
  std::vector<std::string> scheduler_names = {"default-scheduler"};
};

struct ExtenderOptions {
  model::DemandRules demand;
  policy::ScoringRules scoring;
  ReservationOptions reservations;
  BindOptions bind;
  // How long a pod with claims still to be placed waits, at most, in /filter for the placement of
  // an earlier such pod to show on its claims (state/unseen_placements.h). Below the every-pod
  // entry's httpTimeout (200ms) and the relay's upstream timeout (150ms): a filter that took
  // longer would be skipped (ignorable) or open the relay's breaker.
  std::chrono::milliseconds placement_wait{100};
};

}  // namespace extender::engine
