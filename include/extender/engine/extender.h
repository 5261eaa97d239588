#pragma once
// Extender: the four verbs over the cluster state. Decoded requests in, results to encode out;
// knows neither HTTP nor JSON. Filter and prioritize read one immutable snapshot; bind takes the
// node's bind lock for the re-check and the reservation, and releases it before calling the
// Binder. Thread-safe.
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "extender/config/config.h"
#include "extender/engine/binder.h"
#include "extender/sources/request_nodes.h"
#include "extender/state/cluster_state.h"
#include "extender/state/demand_cache.h"
#include "extender/wire/extender_args.h"
#include "extender/wire/results.h"
#include "extender/wire/verb_args.h"

namespace extender::engine {

// What a verb did, for the request log line.
struct Summary {
  std::string pod;          // namespace/name
  std::size_t nodes_in = 0;
  std::size_t nodes_out = 0;
  const char* form = "";    // "names" or "objects": how the candidates came (nodeCacheCapable or not)
  std::string note;         // why the verb could not evaluate, if so
};

struct FilterAnswer {
  wire::FilterResult result;
  Summary summary;
};
struct PrioritizeAnswer {
  std::vector<wire::HostScore> scores;
  Summary summary;
};
struct BindAnswer {
  std::string error;  // "" on success
  Summary summary;
};
struct PreemptAnswer {
  std::map<std::string, wire::MetaVictims> victims;
  Summary summary;
};

struct ExtenderDeps {
  state::ClusterState* state = nullptr;
  state::DemandCache* demands = nullptr;
  // Standalone: remembers request nodes. Null in kubernetes mode (the watch is the only source).
  sources::RequestNodes* request_nodes = nullptr;
  // Kubernetes mode: creates Bindings. Null in standalone mode (placements are recorded locally).
  Binder* binder = nullptr;
  // Kubernetes mode: resolves PersistentVolumeClaims. Empty in standalone mode.
  model::ClaimLookup claims;
  // Kubernetes mode: the cluster's default StorageClass (for claim templates without a class,
  // unless storage.default_class is set).
  std::function<std::string()> default_storage_class;
  // Kubernetes mode: a pending pod by uid, for a /bind whose /filter this process did not see.
  std::function<std::optional<model::Pod>(const std::string& uid)> pending_pod;
  // A reason while the daemon cannot decide yet (caches not synced); nullopt when ready.
  std::function<std::optional<std::string>()> not_ready;
  std::function<state::Clock::time_point()> now = [] { return state::Clock::now(); };
};

class Extender {
 public:
  Extender(const config::Config& config, ExtenderDeps deps);

  // Filter and prioritize give up with an error past `deadline` (a partial answer would be wrong).
  FilterAnswer filter(const wire::ExtenderArgs& args, std::optional<state::Clock::time_point> deadline = {});
  PrioritizeAnswer prioritize(const wire::ExtenderArgs& args, std::optional<state::Clock::time_point> deadline = {});
  BindAnswer bind(const wire::BindingArgs& args);
  PreemptAnswer preempt(const wire::PreemptionArgs& args);

  // Removes a pod's placement or reservation (standalone admin); false when there was none.
  bool remove_pod(const std::string& uid);

 private:
  Result<model::PodDemand> demand_of(const model::Pod& pod);
  std::optional<std::string> not_ready() const;

  model::DemandRules demand_rules_;
  policy::ScoringRules scoring_;
  state::Clock::duration reservation_ttl_;
  ExtenderDeps deps_;
};

}  // namespace extender::engine
