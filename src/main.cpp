#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include "extender/sim/simulator.h"
#include "extender/common/logging.h"
#include "extender/common/yaml_reader.h"
#include "extender/config/config.h"
#include "extender/engine/extender.h"
#include "extender/kube/api_client.h"
#include "extender/kube/binder.h"
#include "extender/kube/credentials.h"
#include "extender/kube/leader_election.h"
#include "extender/kube/leader_label.h"
#include "extender/kube/lease.h"
#include "extender/kube/pod_reader.h"
#include "extender/kube/token_bucket.h"
#include "extender/server/api.h"
#include "extender/server/listener.h"
#include "extender/sources/inventory.h"
#include "extender/sources/kube_cluster.h"
#include "extender/sources/request_nodes.h"
#include "extender/state/cluster_state.h"
#include "extender/state/demand_cache.h"
#include "extender/state/overcommit.h"
#include "extender/version.h"

namespace {

using namespace extender;

// The admin listener serves probes, metrics and the debug view: small bodies, few workers.
server::ListenerOptions admin_listener_options(const config::Config& c) {
  server::ListenerOptions o = server::listener_options(c.server, "admin");
  o.threads = 1;
  o.bind_threads = 1;
  o.max_body_bytes = 1 << 20;
  o.max_buffered_bytes = 16 << 20;
  o.tls = {};
  return o;
}

// Large request bodies are allocated with mmap and given back whole when freed (a fixed threshold
// also stops glibc from raising it after the first large free); few malloc arenas, so that memory
// freed by one worker is reused by the next instead of staying in a per-thread arena; and as many
// descriptors as the hard limit allows, for the connection caps to be the limit that bites.
void tune_process() {
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_ARENA_MAX, 4);
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
}

// Wakes every `interval` to drop expired reservations and to report nodes that became
// overcommitted (once per node and episode), until destroyed.
class Sweeper {
 public:
  Sweeper(state::ClusterState& state, server::Metrics& metrics, std::chrono::milliseconds interval)
      : thread_([this, &state, &metrics, interval] {
          state::OvercommitTracker overcommits;
          std::unique_lock lock(mu_);
          while (!cv_.wait_for(lock, interval, [this] { return stop_; })) {
            lock.unlock();
            if (std::size_t n = state.sweep_expired(state::Clock::now())) {
              metrics.observe_expired_reservations(n);
              spdlog::warn("{} reservation(s) expired before the cluster confirmed their bind", n);
            }
            for (const auto& o : overcommits.update(state.snapshot())) {
              metrics.observe_overcommit(o);
              spdlog::error("{}", state::describe(o));
            }
            lock.lock();
          }
        }) {}
  ~Sweeper() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// What feeds the cluster state: an inventory and request nodes, or the API server.
struct Feed {
  std::unique_ptr<sources::RequestNodes> request_nodes;
  std::unique_ptr<kube::ApiClient> api;
  std::unique_ptr<kube::RateLimiter> api_writes;
  std::unique_ptr<sources::KubeCluster> cluster;
  std::unique_ptr<kube::ApiBinder> binder;
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
  spdlog::warn("standalone mode: /bind records placements in this process's memory only; it creates no Binding "
               "objects in any cluster, and placements are lost on restart");
  return feed;
}

Result<Feed> kubernetes_feed(const config::Config& cfg, state::ClusterState& state) {
  auto access = cfg.kubernetes.kubeconfig.empty() ? kube::in_cluster_access() : kube::kubeconfig_access(cfg.kubernetes.kubeconfig);
  if (!access) return access.error();
  kube::ApiClient::Options options;
  options.user_agent = cfg.kubernetes.user_agent + "/" + kVersion;
  options.token_reload = cfg.kubernetes.token_reload;
  auto api = kube::ApiClient::create(std::move(*access), options);
  if (!api) return api.error();
  Feed feed;
  feed.api = std::move(*api);
  feed.cluster = std::make_unique<sources::KubeCluster>(state, cfg, *feed.api);
  feed.api_writes = std::make_unique<kube::RateLimiter>(cfg.kubernetes.api_qps, cfg.kubernetes.api_burst);
  feed.binder = std::make_unique<kube::ApiBinder>(*feed.api, feed.api_writes.get());
  spdlog::info("kubernetes mode: API server {} ({}); not ready until nodes, pods, claims and storage classes are listed",
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

std::unique_ptr<Election> start_election(const config::Config& cfg, Feed& feed) {
  auto e = std::make_unique<Election>();
  const kube::ElectionTiming timing{cfg.ha.lease_duration, cfg.ha.renew_deadline, cfg.ha.retry_period};
  const std::string ns = cfg.ha.lease_namespace.empty() ? kube::election_namespace() : cfg.ha.lease_namespace;
  const std::string identity = kube::election_identity();
  const auto timeout = cfg.ha.renew_deadline / 2;
  e->store = std::make_unique<kube::ApiLeaseStore>(*feed.api, ns, cfg.ha.lease_name, timeout);
  const char* pod = std::getenv("POD_NAME");
  if (!cfg.ha.leader_label.empty() && pod && *pod) {
    e->label = std::make_unique<kube::LeaderLabel>(*feed.api, kube::election_namespace(), pod, cfg.ha.leader_label, timeout);
  } else if (!cfg.ha.leader_label.empty()) {
    spdlog::warn("POD_NAME is not set: the leader label {} cannot be put on this replica's pod", cfg.ha.leader_label);
  }
  kube::LeaderElection::Hooks hooks;
  sources::KubeCluster* cluster = feed.cluster.get();
  hooks.may_campaign = [cluster] { return !cluster->not_ready().has_value(); };
  const std::string where = e->store->where();
  hooks.on_transition = [where](const kube::Leadership& l) {
    if (l.leading) {
      spdlog::info("leader election: this replica ({}) now leads through Lease {} and decides verbs", l.identity, where);
    } else {
      spdlog::warn("leader election: this replica ({}) stopped leading (Lease {} holder now \"{}\"{}{}); verbs are "
                   "refused here", l.identity, where, l.holder, l.last_error.empty() ? "" : "; last error: ",
                   printable(l.last_error, 512));
    }
  };
  hooks.on_release = [where](const kube::Leadership& l) {
    if (l.last_error.empty()) {
      spdlog::info("leader election: this replica ({}) stopped leading on shutdown and released Lease {} for a "
                   "standby to take at its next attempt", l.identity, where);
    } else {
      spdlog::warn("leader election: this replica ({}) stopped leading on shutdown but could not release Lease {} "
                   "({}); a standby takes it once it expires", l.identity, where, printable(l.last_error, 512));
    }
  };
  kube::LeaderLabel* label = e->label.get();
  hooks.after_step = [label](bool leading) {
    if (label) label->reconcile(leading);
  };
  e->election = std::make_unique<kube::LeaderElection>(*e->store, identity, timing, std::move(hooks));
  spdlog::info("leader election on Lease {} as {} (lease {} ms, renew deadline {} ms, retry {} ms); a standby "
               "answers verbs with an error until it leads", where, identity, cfg.ha.lease_duration.count(),
               cfg.ha.renew_deadline.count(), cfg.ha.retry_period.count());
  return e;
}

int run(const config::Config& cfg) {
  state::ClusterState cluster_state;
  state::DemandCache demands(static_cast<std::size_t>(cfg.state.demand_cache_size), cfg.state.demand_cache_ttl);
  std::atomic<bool> shutting_down{false};
  const bool kubernetes = cfg.mode == config::Mode::kKubernetes;

  auto feed = kubernetes ? kubernetes_feed(cfg, cluster_state) : standalone_feed(cfg, cluster_state);
  if (!feed) {
    spdlog::critical("{}", feed.message());
    return 2;
  }
  auto not_ready = [&]() -> std::optional<std::string> {
    if (shutting_down) return "shutting down";
    if (feed->binder) {
      if (std::string refused = feed->binder->refused_permission(); !refused.empty()) return refused;
    }
    if (feed->cluster) return feed->cluster->not_ready();
    return std::nullopt;
  };
  std::unique_ptr<Election> election;
  if (feed->cluster && cfg.ha.enabled) election = start_election(cfg, *feed);
  engine::ExtenderDeps deps;
  if (election) {
    deps.not_leading = [e = election->election.get()] { return e->not_leading(); };
  }
  deps.state = &cluster_state;
  deps.demands = &demands;
  deps.request_nodes = feed->request_nodes.get();
  deps.binder = feed->binder.get();
  deps.not_ready = not_ready;
  if (feed->cluster) {
    sources::KubeCluster* kc = feed->cluster.get();
    deps.claims = [kc](const std::string& ns, const std::string& name) { return kc->claim(ns, name); };
    deps.default_storage_class = [kc] { return kc->default_storage_class(); };
    deps.pending_pod = [kc](const std::string& uid) { return kc->pending_pod(uid); };
    kube::ApiClient* api = feed->api.get();
    const auto timeout = cfg.kubernetes.bind_timeout / 2;
    deps.fetch_pod = [api, timeout](const std::string& ns, const std::string& name) {
      return kube::read_pod(*api, ns, name, timeout);
    };
  }
  engine::Extender extender(cfg, std::move(deps));

  std::vector<std::string> gpu_resources;
  for (const auto& r : cfg.gpu.resources) gpu_resources.push_back(r.name);
  server::Metrics metrics(gpu_resources);
  server::ApiDeps api_deps{&extender, &cluster_state, &metrics, not_ready, kubernetes ? "kubernetes" : "standalone",
                           cfg.server.request_deadline, !kubernetes, cfg.node_fields(), cfg.decode_limits(), &demands,
                           {}, {}};
  if (feed->cluster) {
    api_deps.watches = [kc = feed->cluster.get()] {
      std::vector<server::WatchView> out;
      for (auto& [resource, st] : kc->watch_status()) out.push_back({resource, st.synced, st.down_since, st.lists});
      return out;
    };
  }
  if (election) api_deps.leadership = [e = election.get()] { return e->view(); };
  const bool separate_admin = !cfg.admin.listen.empty();
  server::Api scheduler_api(api_deps, {cfg.server.path_prefix, true, !separate_admin, !separate_admin});
  server::Api admin_api(api_deps, {cfg.server.path_prefix, false, true, true});
  server::ListenerOptions scheduler_options = server::listener_options(cfg.server, "scheduler");
  scheduler_options.lane_of = [&](std::string_view m, std::string_view p) { return scheduler_api.lane_of(m, p); };
  server::ListenerOptions admin_options = admin_listener_options(cfg);
  admin_options.lane_of = [&](std::string_view m, std::string_view p) { return admin_api.lane_of(m, p); };
  server::Listener scheduler_listener(std::move(scheduler_options),
                                      [&](const server::HttpRequest& r) { return scheduler_api.handle(r); });
  server::Listener admin_listener(std::move(admin_options),
                                  [&](const server::HttpRequest& r) { return admin_api.handle(r); });
  auto listen_at = parse_host_port(cfg.server.listen);
  if (auto st = scheduler_listener.bind(listen_at->host, listen_at->port); !st) {
    spdlog::critical("{}", st.message());
    return 2;
  }
  if (separate_admin) {
    auto admin_at = parse_host_port(cfg.admin.listen);
    if (auto st = admin_listener.bind(admin_at->host, admin_at->port); !st) {
      spdlog::critical("{}", st.message());
      return 2;
    }
    spdlog::info("admin and debug endpoints on http://{}:{} (/healthz, /readyz, /metrics; /debug/state, "
                 "/debug/nodes/<name>, /admin/pods/<uid> for loopback peers only)",
                 admin_at->host, admin_listener.port());
  }
  spdlog::info("scheduler-extender {} ({}) serving {} on {}:{}{}, verbs at /<verb> and {}/<verb>", kVersion, kGitCommit,
               cfg.server.tls.cert_file.empty() ? "http" : "https", listen_at->host, scheduler_listener.port(),
               cfg.server.tls.client_ca_file.empty() ? "" : " (client certificates required)",
               cfg.server.path_prefix.empty() ? "" : cfg.server.path_prefix);

  if (feed->cluster) feed->cluster->start();
  if (election) election->election->start();
  std::thread scheduler_thread([&] { scheduler_listener.serve(); });
  std::thread admin_thread([&] {
    if (separate_admin) admin_listener.serve();
  });
  {
    Sweeper sweeper(cluster_state, metrics, std::chrono::seconds(1));
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    int signal = 0;
    sigwait(&signals, &signal);
    spdlog::info("received {}: no longer ready; finishing requests in flight", signal == SIGTERM ? "SIGTERM" : "SIGINT");
    shutting_down = true;
    scheduler_listener.stop();
    admin_listener.stop();
    scheduler_thread.join();
    admin_thread.join();
    if (election) election->election->stop();
  }
  if (feed->cluster) feed->cluster->stop();
  spdlog::info("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  tune_process();

  if (argc > 1 && std::string_view(argv[1]) == "simulate") return sim::run_simulate_command(argc - 2, argv + 2);
  auto cli = config::parse_command_line(argc, argv);
  if (!cli) {
    std::fprintf(stderr, "scheduler-extender: %s\n", cli.message().c_str());
    return 2;
  }
  if (cli->show_help) {
    std::fputs(config::usage_text().c_str(), stdout);
    return 0;
  }
  if (cli->show_version) {
    std::printf("scheduler-extender %s (%s)\n", kVersion, kGitCommit);
    return 0;
  }
  auto cfg = config::resolve_config(*cli);
  if (!cfg) {
    std::fprintf(stderr, "scheduler-extender: %s\n", cfg.message().c_str());
    return 2;
  }
  if (auto st = setup_logging(cfg->logging.level, cfg->logging.format == "json"); !st) {
    std::fprintf(stderr, "scheduler-extender: %s\n", st.message().c_str());
    return 2;
  }
  return run(*cfg);
}
