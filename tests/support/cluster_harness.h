#pragma once
// A KubeCluster fed by a FakeCluster over the fake API server, with the state it fills, and
// helpers to compare that state with the server's objects.
#include <memory>
#include <ostream>
#include <set>

#include "extender/config/config.h"
#include "extender/engine/engine_builder.h"
#include "extender/kube/api_client.h"
#include "extender/model/supply.h"
#include "extender/sources/kube_cluster.h"
#include "extender/state/cluster_state.h"
#include "extender/state/demand_cache.h"
#include "extender/state/in_flight_holds.h"
#include "support/fake_cluster.h"

namespace extender::kube::testing {

inline constexpr const char* kGpu = "nvidia.com/gpu";
inline constexpr const char* kPoolPrefix = "scheduler-extender.io/pool.";
inline constexpr const char* kSelectedNode = "volume.kubernetes.io/selected-node";

class ClusterHarness {
 public:
  explicit ClusterHarness(const std::function<void(config::Config&)>& tweak = {}) : fake(server) {
    cfg.mode = config::Mode::kKubernetes;
    cfg.kubernetes.watch_timeout = std::chrono::seconds(5);
    cfg.kubernetes.bind_timeout = std::chrono::milliseconds(2000);
    if (tweak) tweak(cfg);
    ClusterAccess access;
    access.server = server.url();
    access.token = "extender-token";
    auto c = ApiClient::create(access, {});
    if (!c) throw std::runtime_error(c.message());
    client = std::move(*c);
    cluster = std::make_unique<sources::KubeCluster>(state, cfg.kube_cluster_options(), *client, &in_flight);
  }
  ~ClusterHarness() {
    server.release_hangs();
    if (cluster) cluster->stop();
    cluster.reset();
    client.reset();
    server.stop();
  }

  void start() { cluster->start(); }
  // The engine over this cluster as the daemon wires it in kubernetes mode: the KubeCluster is its
  // pod source, claim source, DRA source and readiness gate, and reserves csi-baremetal's drives;
  // it binds through `binder`.
  std::unique_ptr<engine::Extender> extender(state::DemandCache& demands, engine::Binder& binder) {
    return engine::EngineBuilder(cfg.extender_options(), state, demands, binder)
        .cluster(cluster.get())
        .drives(cluster->drive_reserver())
        .build_owned();
  }
  bool wait_ready(std::chrono::milliseconds timeout = std::chrono::milliseconds(10'000)) {
    return eventually([&] { return !cluster->not_ready().has_value(); }, timeout);
  }

  FakeApiServer server;
  FakeCluster fake;
  config::Config cfg;
  state::ClusterState state;
  state::InFlightHolds in_flight{state, {}};  // pod groups in flight, told what the watches show
  std::unique_ptr<ApiClient> client;
  std::unique_ptr<sources::KubeCluster> cluster;
};

// /filter, as kube-scheduler sends it, for the pending pod "uid-<pod>" the watch has delivered.
inline engine::FilterAnswer filter_pending(engine::Extender& ext, const sources::KubeCluster& cluster,
                                           const std::string& pod, std::vector<std::string> nodes) {
  wire::ExtenderArgs args;
  args.pod = *cluster.pending_pod("uid-" + pod);
  args.set_node_names(std::move(nodes));
  return ext.filter(args);
}

// "100Gi" / "2Ti" / "512Mi" (what these tests use) in bytes.
inline std::int64_t test_bytes(const std::string& q) {
  const std::int64_t n = std::stoll(q.substr(0, q.size() - 2));
  const std::string unit = q.substr(q.size() - 2);
  if (unit == "Mi") return n << 20;
  if (unit == "Gi") return n << 30;
  if (unit == "Ti") return n << 40;
  throw std::runtime_error("unit of " + q);
}

// What a node looks like to placement, reduced to comparable text.
struct NodeView {
  std::int64_t gpus = 0;
  std::map<std::string, std::string> pools;   // pool -> "capacity" or "dev=capacity,..."
  std::map<std::string, std::string> claims;  // uid -> "pod <gpus>" or "volume <pool> <bytes>"
  bool operator==(const NodeView&) const = default;
};
using ClusterView = std::map<std::string, NodeView>;

inline std::ostream& operator<<(std::ostream& os, const ClusterView& v) {
  for (const auto& [name, n] : v) {
    os << "\n  " << name << ": gpus=" << n.gpus;
    for (const auto& [p, c] : n.pools) os << " pool " << p << "=" << c;
    for (const auto& [uid, c] : n.claims) os << "\n    " << uid << ": " << c;
  }
  return os;
}

inline std::string pool_text(const model::Pool& p) {
  if (p.devices.empty()) return std::to_string(p.capacity_bytes);
  std::string out;
  for (const auto& d : p.devices) out += (out.empty() ? "" : ",") + d.name + "=" + std::to_string(d.capacity_bytes);
  return out;
}

// The state as a view. Reservations are marked so that a comparison with the server fails on them.
inline ClusterView view_of(const state::ClusterState& state) {
  ClusterView view;
  const state::Snapshot snap = state.snapshot();
  for (const auto& [name, node] : snap.nodes()) {
    NodeView& v = view[std::string(name)];
    if (auto it = node->supply.gpus.find(kGpu); it != node->supply.gpus.end()) v.gpus = it->second;
    for (const auto& p : node->supply.pools) v.pools[p.name] = pool_text(p);
    for (const auto& [uid, claim] : node->claims) {
      std::string text;
      if (claim.source == "pod") {
        auto g = claim.allocation.gpus.find(kGpu);
        text = "pod " + std::to_string(g == claim.allocation.gpus.end() ? 0 : g->second);
      } else {
        text = "volume";
        for (const auto& vol : claim.allocation.volumes) text += " " + vol.pool + " " + std::to_string(vol.bytes);
      }
      if (claim.kind == state::Claim::Kind::kReserved) text += " (reserved)";
      v.claims[uid] = text;
    }
  }
  return view;
}

// What the state should hold for the server's objects, worked out here from the objects
// themselves: node supply from allocatable and pool annotations; bound pods that have not
// finished (terminating ones included) holding their GPUs; claims of the managed class
// (local-storage -> pool local) with a selected node holding their size there.
inline ClusterView view_of(const FakeCluster& fake) {
  ClusterView view;
  for (const auto& [key, node] : fake.objects(Kind::kNodes)) {
    NodeView& v = view[node["metadata"]["name"].get<std::string>()];
    v.gpus = std::stoll(node["status"]["allocatable"].value(kGpu, "0"));
    const json annotations = node["metadata"].value("annotations", json::object());
    for (const auto& [k, spec] : annotations.items()) {
      if (k.rfind(kPoolPrefix, 0) != 0) continue;
      const std::string pool = k.substr(std::string(kPoolPrefix).size());
      const std::string text = spec.get<std::string>();
      if (text.find('=') == std::string::npos) {
        v.pools[pool] = std::to_string(test_bytes(text));
      } else {
        std::string out;
        std::size_t at = 0;
        while (at <= text.size()) {
          std::size_t comma = text.find(',', at);
          if (comma == std::string::npos) comma = text.size();
          const std::string item = text.substr(at, comma - at);
          const std::size_t eq = item.find('=');
          out += (out.empty() ? "" : ",") + item.substr(0, eq) + "=" + std::to_string(test_bytes(item.substr(eq + 1)));
          at = comma + 1;
        }
        v.pools[pool] = out;
      }
    }
  }
  for (const auto& [key, pod] : fake.objects(Kind::kPods)) {
    const std::string node = pod["spec"].value("nodeName", "");
    const std::string phase = pod["status"].value("phase", "");
    if (node.empty() || phase == "Succeeded" || phase == "Failed" || !view.count(node)) continue;
    std::int64_t gpus = 0;
    for (const auto& c : pod["spec"]["containers"]) {
      if (c.contains("resources") && c["resources"].contains("requests"))
        gpus += std::stoll(c["resources"]["requests"].value(kGpu, "0"));
    }
    view[node].claims[pod["metadata"]["uid"].get<std::string>()] = "pod " + std::to_string(gpus);
  }
  for (const auto& [key, pvc] : fake.objects(Kind::kClaims)) {
    const json annotations = pvc["metadata"].value("annotations", json::object());
    const std::string node = annotations.value(kSelectedNode, "");
    if (node.empty() || pvc["spec"].value("storageClassName", "") != "local-storage" || !view.count(node)) continue;
    view[node].claims["pvc/" + pvc["metadata"]["uid"].get<std::string>()] =
        "volume local " +
        std::to_string(test_bytes(pvc["spec"]["resources"]["requests"]["storage"].get<std::string>()));
  }
  return view;
}

// The uids of the pods the server has pending (no node, not finished).
inline std::set<std::string> pending_uids(const FakeCluster& fake) {
  std::set<std::string> out;
  for (const auto& [key, pod] : fake.objects(Kind::kPods)) {
    const std::string phase = pod["status"].value("phase", "");
    if (pod["spec"].value("nodeName", "").empty() && phase != "Succeeded" && phase != "Failed") {
      out.insert(pod["metadata"]["uid"].get<std::string>());
    }
  }
  return out;
}

}  // namespace extender::kube::testing
