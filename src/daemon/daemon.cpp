#include "extender/daemon/daemon.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "extender/common/logging.h"
#include "extender/common/yaml_reader.h"
#include "extender/daemon/sweeper.h"
#include "extender/engine/engine_builder.h"
#include "extender/http/listener.h"
#include "extender/kube/api_binder.h"
#include "extender/kube/api_client.h"
#include "extender/kube/credentials.h"
#include "extender/kube/leader_election.h"
#include "extender/kube/leader_label.h"
#include "extender/kube/lease.h"
#include "extender/kube/token_bucket.h"
#include "extender/server/api.h"
#include "extender/server/metrics.h"
#include "extender/sources/inventory.h"
#include "extender/sources/kube_cluster.h"
#include "extender/sources/local_binder.h"
#include "extender/sources/request_nodes.h"
#include "extender/state/demand_cache.h"
#include "extender/version.h"

namespace extender::daemon {
namespace {

// What feeds the cluster state and makes placements official: an inventory, request nodes and
// the local binder, or the API server's watches and binder.
struct Feed {
  std::unique_ptr<sources::RequestNodes> request_nodes;
  std::unique_ptr<kube::ApiClient> api;
  std::unique_ptr<kube::RateLimiter> api_writes;
  std::unique_ptr<sources::KubeCluster> cluster;
  std::unique_ptr<kube::ApiBinder> api_binder;
  std::unique_ptr<sources::LocalBinder> local_binder;

  engine::Binder* binder() const {
    if (api_binder) return api_binder.get();
    return local_binder.get();
  }
};

Result<Feed> standalone_feed(const config::Config& cfg, state::ClusterState& state) {
  Feed feed;
  std::vector<model::NodeSupply> inventory;
  if (!cfg.standalone.inventory.empty()) {
    auto loaded = sources::load_inventory(cfg.standalone.inventory, cfg.gpu.resources);
    if (!loaded) return Error{"inventory: " + loaded.message()};
    inventory = std::move(*loaded);
    spdlog::info("inventory {}: {} node(s)", cfg.standalone.inventory, inventory.size());
  }
  state.upsert_nodes(inventory);
  if (cfg.standalone.upsert_request_nodes) {
    feed.request_nodes = std::make_unique<sources::RequestNodes>(
        state, inventory, cfg.supply_rules(), static_cast<std::size_t>(cfg.standalone.max_request_nodes));
  }
  feed.local_binder = std::make_unique<sources::LocalBinder>(state);
  spdlog::warn(
      "standalone mode: /bind records placements in this process's memory only; it creates no Binding "
      "objects in any cluster, and placements are lost on restart");
  return feed;
}

Result<Feed> kubernetes_feed(const config::Config& cfg, state::ClusterState& state, state::InFlightHolds& in_flight) {
  auto access = cfg.kubernetes.kubeconfig.empty() ? kube::in_cluster_access()
                                                  : kube::kubeconfig_access(cfg.kubernetes.kubeconfig);
  if (!access) return access.error();
  kube::ApiClient::Options options;
  options.user_agent = cfg.kubernetes.user_agent + "/" + kVersion;
  options.token_reload = cfg.kubernetes.token_reload;
  auto api = kube::ApiClient::create(std::move(*access), options);
  if (!api) return api.error();
  Feed feed;
  feed.api = std::move(*api);
  feed.cluster = std::make_unique<sources::KubeCluster>(state, cfg.kube_cluster_options(), *feed.api, &in_flight);
  feed.api_writes = std::make_unique<kube::RateLimiter>(cfg.kubernetes.api_qps, cfg.kubernetes.api_burst);
  feed.api_binder = std::make_unique<kube::ApiBinder>(*feed.api, feed.api_writes.get());
  spdlog::info(
      "kubernetes mode: API server {} ({}); not ready until nodes, pods, claims and storage classes are listed",
      feed.api->server(), cfg.kubernetes.kubeconfig.empty() ? "in-cluster service account" : cfg.kubernetes.kubeconfig);
  return feed;
}

// Kubernetes mode with ha.enabled: this replica's part in leader election on the Lease, and the
// label that points the leader-only Service at the leader's pod.
struct Election {
  std::unique_ptr<kube::ApiLeaseStore> store;
  std::unique_ptr<kube::LeaderLabel> label;
  std::unique_ptr<kube::LeaderElection> election;

  server::LeadershipView view() const {
    const kube::Leadership l = election->view();
    return {l.leading, l.identity, l.holder, l.since, l.transitions, store->where(), l.last_error};
  }
};

kube::LeaderElection::Hooks election_hooks(const std::string& where, sources::KubeCluster* cluster,
                                           kube::LeaderLabel* label) {
  kube::LeaderElection::Hooks hooks;
  hooks.may_campaign = [cluster] { return !cluster->not_ready().has_value(); };
  hooks.on_transition = [where](const kube::Leadership& l) {
    if (l.leading) {
      spdlog::info("leader election: this replica ({}) now leads through Lease {} and decides verbs", l.identity,
                   where);
    } else {
      spdlog::warn(
          "leader election: this replica ({}) stopped leading (Lease {} holder now \"{}\"{}{}); verbs are "
          "refused here",
          l.identity, where, l.holder, l.last_error.empty() ? "" : "; last error: ", printable(l.last_error, 512));
    }
  };
  hooks.on_release = [where](const kube::Leadership& l) {
    if (l.last_error.empty()) {
      spdlog::info(
          "leader election: this replica ({}) stopped leading on shutdown and released Lease {} for a "
          "standby to take at its next attempt",
          l.identity, where);
    } else {
      spdlog::warn(
          "leader election: this replica ({}) stopped leading on shutdown but could not release Lease {} "
          "({}); a standby takes it once it expires",
          l.identity, where, printable(l.last_error, 512));
    }
  };
  hooks.after_step = [label](bool leading) {
    if (label) label->reconcile(leading);
  };
  return hooks;
}

std::unique_ptr<Election> make_election(const config::Config& cfg, Feed& feed) {
  auto e = std::make_unique<Election>();
  const kube::ElectionTiming timing{cfg.ha.lease_duration, cfg.ha.renew_deadline, cfg.ha.retry_period};
  const std::string ns = cfg.ha.lease_namespace.empty() ? kube::election_namespace() : cfg.ha.lease_namespace;
  const std::string identity = kube::election_identity();
  const auto timeout = cfg.ha.renew_deadline / 2;
  e->store = std::make_unique<kube::ApiLeaseStore>(*feed.api, ns, cfg.ha.lease_name, timeout);
  const char* pod = std::getenv("POD_NAME");
  if (!cfg.ha.leader_label.empty() && pod && *pod) {
    e->label =
        std::make_unique<kube::LeaderLabel>(*feed.api, kube::election_namespace(), pod, cfg.ha.leader_label, timeout);
  } else if (!cfg.ha.leader_label.empty()) {
    spdlog::warn("POD_NAME is not set: the leader label {} cannot be put on this replica's pod", cfg.ha.leader_label);
  }
  const std::string where = e->store->where();
  e->election = std::make_unique<kube::LeaderElection>(*e->store, identity, timing,
                                                       election_hooks(where, feed.cluster.get(), e->label.get()));
  spdlog::info(
      "leader election on Lease {} as {} (lease {} ms, renew deadline {} ms, retry {} ms); a standby "
      "answers verbs with an error until it leads",
      where, identity, cfg.ha.lease_duration.count(), cfg.ha.renew_deadline.count(), cfg.ha.retry_period.count());
  return e;
}

// Ready once the watches are synced and the API server has not refused the binder a permission,
// until shutdown; leading while the election says so (always without one).
class DaemonGate final : public engine::Gate {
 public:
  DaemonGate(const Feed& feed, const Election* election) : feed_(feed), election_(election) {}
  void shut_down() { shutting_down_ = true; }
  std::optional<std::string> not_ready() const override {
    if (shutting_down_) return "shutting down";
    if (feed_.api_binder) {
      if (std::string refused = feed_.api_binder->refused_permission(); !refused.empty()) return refused;
    }
    if (feed_.cluster) return feed_.cluster->not_ready();
    return std::nullopt;
  }
  std::optional<std::string> not_leading() const override {
    if (election_) return election_->election->not_leading();
    return std::nullopt;
  }
  std::optional<TimePoint> write_fence() const override {
    if (election_) return election_->election->write_fence();
    return std::nullopt;
  }

 private:
  const Feed& feed_;
  const Election* election_;
  std::atomic<bool> shutting_down_{false};
};

// The admin listener serves probes, metrics and the debug view: small bodies, few workers.
http::ListenerOptions admin_listener_options(const config::Config& c) {
  http::ListenerOptions o = http::listener_options(c.server, "admin");
  o.threads = 1;
  o.bind_threads = 1;
  o.max_body_bytes = 1 << 20;
  o.max_buffered_bytes = 16 << 20;
  o.tls = {};
  return o;
}

std::vector<std::string> gpu_resource_names(const config::Config& cfg) {
  std::vector<std::string> names;
  for (const auto& r : cfg.gpu.resources) names.push_back(r.name);
  return names;
}

}  // namespace

constexpr std::size_t kMaxFilteredNames = std::size_t{4} << 20;

struct Daemon::Parts {
  Parts(const config::Config& c, Feed f)
      : cfg(c),
        demands(static_cast<std::size_t>(c.state.demand_cache_size), c.state.demand_cache_ttl),
        verdicts(kMaxFilteredNames, c.state.demand_cache_ttl),
        feed(std::move(f)),
        metrics(gpu_resource_names(c)) {}

  config::Config cfg;
  state::ClusterState state;
  state::DemandCache demands;
  wire::PodMemo pods;
  state::FilterVerdicts verdicts;             // what passed /filter, for /bind: at most 4M names (32 MiB)
  state::InFlightHolds in_flight{state, {}};  // pod groups' members decided but not yet published
  Feed feed;
  std::unique_ptr<Election> election;
  std::unique_ptr<DaemonGate> gate;
  std::unique_ptr<engine::Extender> extender;
  server::Metrics metrics;
  server::DecisionLog decisions;  // the last 50 answers and the last 512 refused pods, for /ui
  std::unique_ptr<server::Api> scheduler_api;
  std::unique_ptr<server::Api> admin_api;
  std::unique_ptr<http::Listener> scheduler_listener;
  std::unique_ptr<http::Listener> admin_listener;
  bool separate_admin = false;
  bool started = false;
  std::thread scheduler_thread;
  std::thread admin_thread;
  std::unique_ptr<Sweeper> sweeper;

  server::ApiDeps api_deps();
  Status listen();
};

server::ApiDeps Daemon::Parts::api_deps() {
  const bool kubernetes = cfg.mode == config::Mode::kKubernetes;
  server::ApiDeps deps{extender.get(),
                       &state,
                       &metrics,
                       [g = gate.get()] { return g->not_ready(); },
                       kubernetes ? "kubernetes" : "standalone",
                       cfg.server.request_deadline,
                       !kubernetes,
                       cfg.node_fields(),
                       cfg.decode_limits(),
                       &demands,
                       &pods,
                       {},
                       {}};
  deps.decisions = &decisions;
  deps.in_flight = &in_flight;
  deps.log_lines_per_caller = cfg.logging.lines_per_caller;
  deps.pacing.hold = cfg.server.pacing.hold;
  deps.pacing.repeats_per_second = static_cast<int>(cfg.server.pacing.repeats_per_second);
  deps.pacing.errors_per_second = cfg.server.pacing.errors_per_second;
  if (feed.cluster) {
    deps.watches = [kc = feed.cluster.get()] {
      std::vector<server::WatchView> out;
      for (auto& [resource, st] : kc->watch_status()) out.push_back({resource, st.synced, st.down_since, st.lists});
      return out;
    };
    deps.dra = feed.cluster.get();
  }
  if (election) deps.leadership = [e = election.get()] { return e->view(); };
  return deps;
}

Status Daemon::Parts::listen() {
  separate_admin = !cfg.admin.listen.empty();
  scheduler_api = std::make_unique<server::Api>(
      api_deps(), server::RouterOptions{cfg.server.path_prefix, true, !separate_admin, !separate_admin});
  admin_api =
      std::make_unique<server::Api>(api_deps(), server::RouterOptions{cfg.server.path_prefix, false, true, true});
  http::ListenerOptions scheduler_options = http::listener_options(cfg.server, "scheduler");
  scheduler_options.lane_of = [api = scheduler_api.get()](std::string_view m, std::string_view p) {
    return api->lane_of(m, p);
  };
  http::ListenerOptions admin_options = admin_listener_options(cfg);
  admin_options.lane_of = [api = admin_api.get()](std::string_view m, std::string_view p) {
    return api->lane_of(m, p);
  };
  scheduler_listener = std::make_unique<http::Listener>(
      std::move(scheduler_options), [api = scheduler_api.get()](const http::HttpRequest& r) { return api->handle(r); });
  admin_listener = std::make_unique<http::Listener>(
      std::move(admin_options), [api = admin_api.get()](const http::HttpRequest& r) { return api->handle(r); });
  auto listen_at = parse_host_port(cfg.server.listen);
  if (!listen_at) return listen_at.error();
  EXTENDER_TRY(scheduler_listener->bind(listen_at->host, listen_at->port));
  if (separate_admin) {
    auto admin_at = parse_host_port(cfg.admin.listen);
    if (!admin_at) return admin_at.error();
    EXTENDER_TRY(admin_listener->bind(admin_at->host, admin_at->port));
    spdlog::info(
        "admin and debug endpoints on http://{}:{} (/healthz, /readyz, /metrics; /debug/state, "
        "/debug/nodes/<name>, /admin/pods/<uid> for loopback peers only)",
        admin_at->host, admin_listener->port());
  }
  spdlog::info("scheduler-extender {} ({}) serving {} on {}:{}{}, verbs at /<verb> and {}/<verb>", kVersion, kGitCommit,
               cfg.server.tls.cert_file.empty() ? "http" : "https", listen_at->host, scheduler_listener->port(),
               cfg.server.tls.client_ca_file.empty() ? "" : " (client certificates required)",
               cfg.server.path_prefix.empty() ? "" : cfg.server.path_prefix);
  return {};
}

Result<std::unique_ptr<Daemon>> Daemon::create(const config::Config& cfg) {
  auto parts = std::make_unique<Parts>(cfg, Feed{});
  const bool kubernetes = cfg.mode == config::Mode::kKubernetes;
  auto feed = kubernetes ? kubernetes_feed(cfg, parts->state, parts->in_flight) : standalone_feed(cfg, parts->state);
  if (!feed) return feed.error();
  parts->feed = std::move(*feed);
  if (parts->feed.cluster && cfg.ha.enabled) parts->election = make_election(cfg, parts->feed);
  parts->gate = std::make_unique<DaemonGate>(parts->feed, parts->election.get());
  if (parts->feed.cluster) parts->feed.cluster->set_write_terms(parts->feed.api_writes.get(), parts->gate.get());
  parts->extender = engine::EngineBuilder(cfg.extender_options(), parts->state, parts->demands, *parts->feed.binder())
                        .cluster(parts->feed.cluster.get())
                        .gate(parts->gate.get())
                        .request_nodes(parts->feed.request_nodes.get())
                        .verdicts(&parts->verdicts)
                        .in_flight(&parts->in_flight)
                        .drives(parts->feed.cluster ? parts->feed.cluster->drive_reserver() : nullptr)
                        .build_owned();
  EXTENDER_TRY(parts->listen());
  return std::unique_ptr<Daemon>(new Daemon(std::move(parts)));
}

Daemon::Daemon(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

Daemon::~Daemon() { stop(); }

void Daemon::start() {
  Parts& p = *parts_;
  if (p.started) return;
  p.started = true;
  if (p.feed.cluster) p.feed.cluster->start();
  if (p.election) p.election->election->start();
  p.scheduler_thread = std::thread([&p] { p.scheduler_listener->serve(); });
  if (p.separate_admin) p.admin_thread = std::thread([&p] { p.admin_listener->serve(); });
  p.sweeper = std::make_unique<Sweeper>(p.state, p.metrics, steady_clock(), std::chrono::seconds(1),
                                        p.feed.cluster.get(), &p.in_flight);
}

void Daemon::stop() {
  Parts& p = *parts_;
  if (!p.started) return;
  p.started = false;
  p.gate->shut_down();
  p.scheduler_listener->stop();
  p.admin_listener->stop();
  if (p.scheduler_thread.joinable()) p.scheduler_thread.join();
  if (p.admin_thread.joinable()) p.admin_thread.join();
  if (p.election) p.election->election->stop();
  p.sweeper.reset();
  if (p.feed.cluster) p.feed.cluster->stop();
}

int Daemon::port() const { return parts_->scheduler_listener->port(); }
int Daemon::admin_port() const { return parts_->separate_admin ? parts_->admin_listener->port() : 0; }
engine::Extender& Daemon::extender() { return *parts_->extender; }
state::ClusterState& Daemon::state() { return parts_->state; }

}  // namespace extender::daemon
