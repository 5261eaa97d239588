#include "extender/server/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <set>

#include "extender/state/mixed_gpu_sources.h"

namespace extender::server {
namespace {

constexpr const char* kVerbNames[] = {"filter",  "prioritize",           "bind",
                                      "preempt", "prioritize_unmanaged", "filter_unmanaged"};
constexpr const char* kOutcomeNames[] = {"ok", "rejected", "error"};
constexpr const char* kVerdictNames[] = {"passed", "failed", "unresolvable"};

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// A pool's source without the object it names: "CSIStorageCapacity", "annotation", "local PVs".
std::string source_kind(std::string_view source) {
  if (source.starts_with("local PVs")) return "local PVs";
  return std::string(source.substr(0, source.find(' ')));
}

MetricFamily family(std::string name, std::string help, MetricType type = MetricType::Gauge) {
  MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

void gauge(MetricFamily& f, std::vector<ClientMetric::Label> labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  if (f.type == MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(std::move(m));
}

double seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

// The families of the nodes in the cache, filled node by node.
class NodeFamilies {
 public:
  void add(const std::string& name, const state::NodeState& node, TimePoint now,
           const std::vector<std::string>& gpu_resources) {
    const model::NodeUsage held = count_claims(node, now);
    add_gpus(name, node, held, gpu_resources);
    add_pools(name, node, held);
    bool kinds[2] = {false, false};
    for (const auto& o : state::find_overcommit(node)) kinds[o.kind == state::Overcommit::Kind::kGpu ? 0 : 1] = true;
    over_[0] += kinds[0];
    over_[1] += kinds[1];
  }

  // Appends the families, with the totals over the `node_count` nodes added.
  void move_into(std::vector<MetricFamily>& out, std::size_t node_count) {
    gauge(count_, {}, static_cast<double>(node_count));
    gauge(claims_, {{"kind", "placed"}}, static_cast<double>(placed_n_));
    gauge(claims_, {{"kind", "reserved"}}, static_cast<double>(reserved_n_));
    gauge(in_flight_, {}, static_cast<double>(live_reservations_));
    gauge(overcommitted_, {{"kind", "gpu"}}, static_cast<double>(over_[0]));
    gauge(overcommitted_, {{"kind", "pool"}}, static_cast<double>(over_[1]));
    for (auto* f : {&count_, &claims_, &in_flight_, &allocatable_, &used_, &reserved_, &pool_capacity_, &pool_used_,
                    &pool_reserved_, &pool_free_, &pool_published_, &pool_subtracted_, &overcommitted_}) {
      out.push_back(std::move(*f));
    }
  }

 private:
  // Counts the node's claims; returns what its live reservations hold.
  model::NodeUsage count_claims(const state::NodeState& node, TimePoint now) {
    model::NodeUsage held;
    for (const auto& [uid, claim] : node.claims) {
      if (claim.kind == state::Claim::Kind::kPlaced) {
        ++placed_n_;
        continue;
      }
      ++reserved_n_;
      if (claim.expires > now) {
        ++live_reservations_;
        held.add(claim.allocation);
      }
    }
    return held;
  }

  void add_gpus(const std::string& name, const state::NodeState& node, const model::NodeUsage& held,
                const std::vector<std::string>& gpu_resources) {
    std::set<std::string, std::less<>> resources(gpu_resources.begin(), gpu_resources.end());
    for (const auto& [resource, n] : node.supply.gpus) resources.insert(resource);
    for (const auto& [resource, n] : node.placed.gpus) resources.insert(resource);
    for (const auto& [resource, n] : held.gpus) resources.insert(resource);
    for (const auto& resource : resources) {
      auto offered = node.supply.gpus.find(resource);
      gauge(allocatable_, {{"node", name}, {"resource", resource}},
            offered == node.supply.gpus.end() ? 0.0 : static_cast<double>(offered->second));
      gauge(used_, {{"node", name}, {"resource", resource}}, static_cast<double>(node.placed.gpus_used(resource)));
      gauge(reserved_, {{"node", name}, {"resource", resource}}, static_cast<double>(held.gpus_used(resource)));
    }
  }

  void add_pools(const std::string& name, const state::NodeState& node, const model::NodeUsage& held) {
    for (const auto& pool : node.supply.pools) {
      gauge(pool_capacity_, {{"node", name}, {"pool", pool.name}}, static_cast<double>(pool.capacity_bytes));
      gauge(pool_used_, {{"node", name}, {"pool", pool.name}}, static_cast<double>(node.placed.pool_used(pool.name)));
      gauge(pool_reserved_, {{"node", name}, {"pool", pool.name}}, static_cast<double>(held.pool_used(pool.name)));
      const std::int64_t in_use = node.placed.pool_used(pool.name) + held.pool_used(pool.name);
      gauge(pool_free_, {{"node", name}, {"pool", pool.name}}, static_cast<double>(pool.capacity_bytes - in_use));
      if (pool.source.empty()) continue;
      const std::string source = source_kind(pool.source);
      gauge(pool_published_, {{"node", name}, {"pool", pool.name}, {"source", source}},
            static_cast<double>(pool.published_bytes));
      const std::int64_t reflected = pool.capacity_bytes - pool.published_bytes;
      gauge(pool_subtracted_, {{"node", name}, {"pool", pool.name}}, static_cast<double>(in_use - reflected));
    }
  }

  MetricFamily count_ = family("scheduler_extender_nodes", "Nodes in the cache.");
  MetricFamily claims_ =
      family("scheduler_extender_claims", "Pods holding capacity, placed or reserved (bind in flight).");
  MetricFamily in_flight_ =
      family("scheduler_extender_reservations_in_flight", "Reservations (binds in flight) that have not expired.");
  MetricFamily allocatable_ = family("scheduler_extender_node_gpus_allocatable", "GPUs a node offers, per resource.");
  MetricFamily used_ =
      family("scheduler_extender_node_gpus_used", "GPUs held by pods bound to the node, per resource.");
  MetricFamily reserved_ =
      family("scheduler_extender_node_gpus_reserved", "GPUs held by binds in flight on the node, per resource.");
  MetricFamily pool_capacity_ =
      family("scheduler_extender_node_pool_capacity_bytes", "Capacity of a node's storage pool.");
  MetricFamily pool_used_ =
      family("scheduler_extender_node_pool_used_bytes", "Bytes of a node's storage pool held by placed volumes.");
  MetricFamily pool_reserved_ =
      family("scheduler_extender_node_pool_reserved_bytes", "Bytes of a node's storage pool held by binds in flight.");
  MetricFamily pool_free_ =
      family("scheduler_extender_node_pool_free_bytes",
             "Free bytes of a node's storage pool as placement decides: capacity less placed volumes "
             "and binds in flight.");
  MetricFamily pool_published_ = family("scheduler_extender_node_pool_published_bytes",
                                        "The free space a storage driver publishes for a node's pool, by source "
                                        "(CSIStorageCapacity, annotation, local PVs); hand-written pools have none.");
  MetricFamily pool_subtracted_ = family("scheduler_extender_node_pool_subtracted_bytes",
                                         "Bytes of claims on a published pool that its figure does not reflect yet "
                                         "(docs/storage.md), binds in flight included.");
  MetricFamily overcommitted_ = family("scheduler_extender_overcommitted_nodes",
                                       "Nodes now holding more than they offer (see the error log), by kind.");
  std::size_t placed_n_ = 0;
  std::size_t reserved_n_ = 0;
  std::size_t live_reservations_ = 0;
  std::size_t over_[2] = {0, 0};
};

void add_watch_families(std::vector<MetricFamily>& out, const ScrapeView& view) {
  auto synced = family("scheduler_extender_watch_synced", "1 once the resource has been listed in full, per resource.");
  auto stale = family("scheduler_extender_watch_stale_seconds",
                      "How long listing or watching the resource has been failing; 0 while the watch is up.");
  auto lists = family("scheduler_extender_watch_lists_total",
                      "Full lists of the resource delivered (relists included).", MetricType::Counter);
  for (const auto& w : view.watches) {
    gauge(synced, {{"resource", w.resource}}, w.synced ? 1 : 0);
    gauge(stale, {{"resource", w.resource}}, w.down_since ? std::max(0.0, seconds(view.now - *w.down_since)) : 0.0);
    gauge(lists, {{"resource", w.resource}}, static_cast<double>(w.lists));
  }
  out.push_back(std::move(synced));
  out.push_back(std::move(stale));
  out.push_back(std::move(lists));
}

}  // namespace

Metrics::Metrics(std::vector<std::string> gpu_resources)
    : gpu_resources_(std::move(gpu_resources)), registry_(std::make_shared<prometheus::Registry>()) {
  auto& requests = prometheus::BuildCounter()
                       .Name("scheduler_extender_requests_total")
                       .Help("Requests answered, by verb and outcome.")
                       .Register(*registry_);
  auto& latency = prometheus::BuildHistogram()
                      .Name("scheduler_extender_request_duration_seconds")
                      .Help("Time to answer a verb, from the whole body read.")
                      .Register(*registry_);
  const prometheus::Histogram::BucketBoundaries buckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                           0.05,   0.1,   0.25,   0.5,   1,    2.5};
  for (int v = 0; v < static_cast<int>(Verb::kCount); ++v) {
    for (int o = 0; o < static_cast<int>(Outcome::kCount); ++o) {
      requests_[v][o] = &requests.Add({{"verb", kVerbNames[v]}, {"outcome", kOutcomeNames[o]}});
    }
    latency_[v] = &latency.Add({{"verb", kVerbNames[v]}}, buckets);
  }
  auto& verdicts = prometheus::BuildCounter()
                       .Name("scheduler_extender_filter_nodes_total")
                       .Help("Nodes judged by filter, by verdict.")
                       .Register(*registry_);
  for (int i = 0; i < 3; ++i) verdicts_[i] = &verdicts.Add({{"verdict", kVerdictNames[i]}});
  auto& refusals = prometheus::BuildCounter()
                       .Name("scheduler_extender_refusals_total")
                       .Help("Binds and preempts refused by the rules of who may bind, by reason.")
                       .Register(*registry_);
  for (int v = 0; v < 2; ++v) {
    for (int r = 1; r < static_cast<int>(engine::Refusal::kCount); ++r) {
      refusals_[v][r] = &refusals.Add(
          {{"verb", v == 0 ? "bind" : "preempt"}, {"reason", engine::refusal_name(static_cast<engine::Refusal>(r))}});
    }
  }
  expired_ = &prometheus::BuildCounter()
                  .Name("scheduler_extender_reservation_expiries_total")
                  .Help("Reservations dropped because the cluster did not confirm their bind in time.")
                  .Register(*registry_)
                  .Add({});
  auto& overcommits = prometheus::BuildCounter()
                          .Name("scheduler_extender_overcommit_episodes_total")
                          .Help("Times a node became overcommitted (more bound than allocatable), by kind.")
                          .Register(*registry_);
  overcommits_[0] = &overcommits.Add({{"kind", "gpu"}});
  overcommits_[1] = &overcommits.Add({{"kind", "pool"}});
  auto& paced = prometheus::BuildCounter()
                    .Name("scheduler_extender_paced_calls_total")
                    .Help(
                        "Verb calls whose answer was held (server.pacing), by reason: one pod's calls past the "
                        "limit a second (repeated), or a caller's error answers past its budget (errors).")
                    .Register(*registry_);
  paced_[0] = &paced.Add({{"reason", "repeated"}});
  paced_[1] = &paced.Add({{"reason", "errors"}});
}

Metrics::~Metrics() = default;

void Metrics::observe_request(Verb verb, Outcome outcome, std::chrono::nanoseconds latency) {
  const int v = static_cast<int>(verb);
  requests_[v][static_cast<int>(outcome)]->Increment();
  latency_[v]->Observe(std::chrono::duration<double>(latency).count());
}

void Metrics::observe_filter(std::size_t passed, std::size_t failed, std::size_t unresolvable) {
  verdicts_[0]->Increment(static_cast<double>(passed));
  verdicts_[1]->Increment(static_cast<double>(failed));
  verdicts_[2]->Increment(static_cast<double>(unresolvable));
}

void Metrics::observe_refusal(Verb verb, engine::Refusal reason) {
  if (verb != Verb::kBind && verb != Verb::kPreempt) return;
  if (reason == engine::Refusal::kNone || reason == engine::Refusal::kCount) return;
  refusals_[verb == Verb::kBind ? 0 : 1][static_cast<int>(reason)]->Increment();
}

void Metrics::observe_expired_reservations(std::size_t n) { expired_->Increment(static_cast<double>(n)); }

void Metrics::observe_overcommit(const state::Overcommit& o) {
  overcommits_[o.kind == state::Overcommit::Kind::kGpu ? 0 : 1]->Increment();
}

void Metrics::observe_paced(bool repeated) { paced_[repeated ? 0 : 1]->Increment(); }

std::vector<MetricFamily> state_families(const ScrapeView& view, const std::vector<std::string>& gpu_resources) {
  std::vector<MetricFamily> out;
  if (view.snapshot) {
    NodeFamilies nodes;
    for (const auto& [name, node] : view.snapshot->nodes())
      nodes.add(node->supply.name, *node, view.now, gpu_resources);
    nodes.move_into(out, view.snapshot->nodes().size());
  }
  if (view.snapshot && view.dra) {
    auto mixed = family("scheduler_extender_mixed_gpu_source_nodes",
                        "Nodes whose GPUs come from a device plugin and from DRA at once (see the error log).");
    std::set<std::string, std::less<>> names;
    for (const auto& m : state::find_mixed_gpu_sources(*view.snapshot, *view.dra)) names.insert(m.node);
    gauge(mixed, {}, static_cast<double>(names.size()));
    out.push_back(std::move(mixed));
  }
  if (view.demand_cache_entries) {
    auto cache = family("scheduler_extender_demand_cache_entries",
                        "Pod demands remembered from filter for bind (the demand cache's size).");
    gauge(cache, {}, static_cast<double>(*view.demand_cache_entries));
    out.push_back(std::move(cache));
  }
  if (!view.watches.empty()) add_watch_families(out, view);
  if (view.leadership) {
    auto leader =
        family("scheduler_extender_leader", "1 while this replica leads (holds the Lease and decides verbs).");
    auto transitions = family("scheduler_extender_leader_transitions_total",
                              "Times this replica started or stopped leading.", MetricType::Counter);
    gauge(leader, {}, view.leadership->leading ? 1 : 0);
    gauge(transitions, {}, static_cast<double>(view.leadership->transitions));
    out.push_back(std::move(leader));
    out.push_back(std::move(transitions));
  }
  return out;
}

std::string Metrics::render(const ScrapeView& view) const {
  std::vector<MetricFamily> families = registry_->Collect();
  std::vector<MetricFamily> more = state_families(view, gpu_resources_);
  families.insert(families.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace extender::server
