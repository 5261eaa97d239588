#pragma once
// PendingView: why a pod waits. From the daemon's last /filter refusal of the pod (DecisionLog)
// and the current snapshot: the pod's demand, and per group of nodes the daemon refused for the
// same reason (nodes alike in what matters to the pod) the reason, how many nodes, a few names,
// and what it would take to fit, worked out now by policy::check_fit on the group's first node
// still known (device-plugin view; a DRA reason is quoted as the daemon gave it). As values, and
// as indented JSON for /debug/pods/<namespace>/<name> (what `inspect --pod` reads). Pure; thread-safe.
#include <string>
#include <vector>

#include "extender/common/clock.h"
#include "extender/policy/fit.h"
#include "extender/server/decision_log.h"
#include "extender/state/cluster_state.h"

namespace extender::server {

struct PendingGroup {
  std::string reason;  // the daemon's last answer for these nodes
  bool unresolvable = false;
  std::size_t nodes = 0;
  std::vector<std::string> sample;
  std::string to_fit;  // what it would take, as of now
};

struct PendingView {
  std::string pod;
  std::string demand;  // "2 nvidia.com/gpu, 40 GiB per GPU, 100 GiB in pool local"; "" when unknown
  double age_seconds = 0;
  std::size_t nodes_in = 0;
  std::size_t nodes_passed = 0;
  std::string error;
  std::vector<PendingGroup> groups;
  std::size_t other_nodes = 0;
};

PendingView pending_view(const PodRefusal& refusal, const state::Snapshot& snapshot, TimePoint now);
std::string demand_text(const model::PodDemand& demand);
// What would make the pod fit where check_fit gave `reason`; "fits now" for kNone.
std::string what_would_fit(const policy::FitReason& reason);
std::string render_pending_json(const PendingView& view);

}  // namespace extender::server
