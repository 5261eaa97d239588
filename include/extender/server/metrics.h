#pragma once
// Metrics: what GET /metrics serves, through prometheus-cpp's core library (registry, counters,
// histograms) and its TextSerializer (exposition format 0.0.4); the text is served by our own
// listener. Event metrics (requests and latency per verb and outcome, filter verdicts, refusals
// of who may bind, reservation expiries, overcommit episodes) live in a registry. State metrics
// (nodes, claims, per-node GPUs allocatable/used/reserved per resource, pool capacity and use,
// reservations in flight, demand-cache size, watch staleness, leadership) are computed from the caller's view
// at each scrape, so per-node series exist exactly for the nodes the daemon knows: their number
// is bounded by the node count and a removed node's series are gone at the next scrape.
// Every name has the scheduler_extender_ prefix. Thread-safe.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "extender/common/clock.h"
#include "extender/engine/refusal.h"
#include "extender/model/dra_inventory.h"
#include "extender/server/leadership_view.h"
#include "extender/state/cluster_state.h"
#include "extender/state/overcommit.h"

namespace prometheus {
class Registry;
class Counter;
class Histogram;
struct MetricFamily;
}  // namespace prometheus

namespace extender::server {

enum class Verb { kFilter, kPrioritize, kBind, kPreempt, kPrioritizeUnmanaged, kFilterUnmanaged, kCount };
enum class Outcome { kOk, kRejected, kError, kCount };  // rejected: 4xx; error: Error field set

// One reflector of Kubernetes mode as a scrape sees it.
struct WatchView {
  std::string resource;  // "nodes", "pods", ...
  bool synced = false;
  std::optional<TimePoint> down_since;
  std::uint64_t lists = 0;
};

// What a scrape reads besides the registry.
struct ScrapeView {
  const state::Snapshot* snapshot = nullptr;  // nullptr: no state metrics
  TimePoint now{};
  std::optional<std::size_t> demand_cache_entries;
  std::vector<WatchView> watches;            // empty outside Kubernetes mode
  std::optional<LeadershipView> leadership;  // Kubernetes mode with leader election
  const model::DraInventory* dra = nullptr;  // Kubernetes mode, while DRA is served
};

class Metrics {
 public:
  // `gpu_resources`: the managed GPU resource names; every node gets their series, 0 when it has none.
  explicit Metrics(std::vector<std::string> gpu_resources = {});
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  void observe_request(Verb verb, Outcome outcome, std::chrono::nanoseconds latency);
  void observe_filter(std::size_t passed, std::size_t failed, std::size_t unresolvable);
  // A bind or preempt refused by the rules of who may bind.
  void observe_refusal(Verb verb, engine::Refusal reason);
  // Reservations dropped because their bind was never confirmed in time.
  void observe_expired_reservations(std::size_t n);
  // An overcommit episode that starts (see state/overcommit.h).
  void observe_overcommit(const state::Overcommit& o);
  // A verb's answer held by CallPacing: `repeated` (one pod's calls past the limit) or not (a
  // caller's errors past its budget).
  void observe_paced(bool repeated);

  // The whole exposition text.
  std::string render(const ScrapeView& view) const;

 private:
  std::vector<std::string> gpu_resources_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Counter* requests_[static_cast<int>(Verb::kCount)][static_cast<int>(Outcome::kCount)] = {};
  prometheus::Histogram* latency_[static_cast<int>(Verb::kCount)] = {};
  prometheus::Counter* verdicts_[3] = {};                                             // passed, failed, unresolvable
  prometheus::Counter* refusals_[2][static_cast<int>(engine::Refusal::kCount)] = {};  // bind, preempt
  prometheus::Counter* expired_ = nullptr;
  prometheus::Counter* overcommits_[2] = {};  // gpu, pool
  prometheus::Counter* paced_[2] = {};        // repeated, errors
};

// The state families of one scrape (exposed for tests).
std::vector<prometheus::MetricFamily> state_families(const ScrapeView& view,
                                                     const std::vector<std::string>& gpu_resources);

}  // namespace extender::server
