// KubeCluster over the fake API server: after the first lists the cluster state holds the nodes'
// supply, the GPUs of bound pods and the space of claimed local volumes; watch events move it;
// cuts and expired versions still converge on the server's truth; readiness waits for all four
// kinds.
#include "extender/sources/kube_cluster.h"

#include <gtest/gtest.h>

#include <set>

#include "support/cluster_harness.h"

namespace extender::sources {
namespace {

using namespace std::chrono_literals;
using kube::testing::claim_object;
using kube::testing::ClusterHarness;
using kube::testing::eventually;
using kube::testing::json;
using kube::testing::Kind;
using kube::testing::node_object;
using kube::testing::pod_object;
using kube::testing::storage_class_object;
using kube::testing::view_of;

constexpr const char* kGpu = "nvidia.com/gpu";

// gpu-1: 4 GPUs of 80 GiB, a 2 TiB pool; gpu-2: 2 GPUs, a pool of two devices; cpu-1: no GPUs.
// Pods: two bound to gpu-1 (one terminating), two finished on gpu-2, one pending. Claims: one
// managed and placed on gpu-1, one managed and not yet placed, one of an unmanaged class.
void seed(kube::testing::FakeCluster& fake) {
  fake.put(Kind::kNodes, node_object("gpu-1", 4, {{"scheduler-extender.io/pool.local", "2Ti"}},
                                     {{"nvidia.com/gpu.memory", "81920"}}));
  fake.put(Kind::kNodes, node_object("gpu-2", 2, {{"scheduler-extender.io/pool.local", "nvme0=1Ti,nvme1=1Ti"}}));
  fake.put(Kind::kNodes, node_object("cpu-1", 0));
  fake.put(Kind::kPods, pod_object("team", "bound", "u-bound", 2, "gpu-1"));
  json terminating = pod_object("team", "terminating", "u-term", 1, "gpu-1");
  terminating["metadata"]["deletionTimestamp"] = "2024-05-01T10:00:00Z";
  fake.put(Kind::kPods, terminating);
  fake.put(Kind::kPods, pod_object("team", "done", "u-done", 1, "gpu-2", "Succeeded"));
  fake.put(Kind::kPods, pod_object("team", "failed", "u-failed", 2, "gpu-2", "Failed"));
  fake.put(Kind::kPods, pod_object("team", "waiting", "u-wait", 1));
  fake.put(Kind::kClaims, claim_object("team", "data", "c-data", "local-storage", "100Gi", "gpu-1"));
  fake.put(Kind::kClaims, claim_object("team", "scratch", "c-scratch", "local-storage", "50Gi"));
  fake.put(Kind::kClaims, claim_object("team", "remote", "c-remote", "standard", "10Gi", "gpu-2"));
  fake.put(Kind::kClasses, storage_class_object("local-storage", false));
  fake.put(Kind::kClasses, storage_class_object("standard", true));
}

std::int64_t gpus_held(const state::ClusterState& state, const std::string& node) {
  const state::NodeState* n = state.snapshot().find(node);
  return n ? n->usage_excluding("", SteadyClock::now()).gpus_used(kGpu) : -1;
}

TEST(KubeCluster, AfterSyncTheStateHoldsSupplyPodsAndVolumes) {
  ClusterHarness h;
  seed(h.fake);
  h.start();
  ASSERT_TRUE(h.wait_ready()) << *h.cluster->not_ready();

  const state::Snapshot snap = h.state.snapshot();
  ASSERT_EQ(snap.nodes().size(), 3u);
  const state::NodeState* g1 = snap.find("gpu-1");
  ASSERT_NE(g1, nullptr);
  EXPECT_EQ(g1->supply.gpus.at(kGpu), 4);
  EXPECT_EQ(g1->supply.gpu_memory_bytes.at(kGpu), std::int64_t{81920} << 20);
  ASSERT_EQ(g1->supply.pools.size(), 1u);
  EXPECT_EQ(g1->supply.pools[0].name, "local");
  EXPECT_EQ(g1->supply.pools[0].capacity_bytes, std::int64_t{2} << 40);
  // Bound pods hold their GPUs, the terminating one too; the claim holds its pool space.
  ASSERT_EQ(g1->claims.size(), 3u);
  EXPECT_EQ(g1->claims.at("u-bound").allocation.gpus.at(kGpu), 2);
  EXPECT_EQ(g1->claims.at("u-bound").owner, "team/bound");
  EXPECT_EQ(g1->claims.at("u-bound").kind, state::Claim::Kind::kPlaced);
  EXPECT_EQ(g1->claims.at("u-term").allocation.gpus.at(kGpu), 1);
  EXPECT_TRUE(g1->claims.at("u-term").terminating) << "preempt reads it on a preemptor's nominated node";
  EXPECT_FALSE(g1->claims.at("u-bound").terminating);
  const state::Claim& volume = g1->claims.at("pvc/c-data");
  EXPECT_EQ(volume.source, "volume");
  ASSERT_EQ(volume.allocation.volumes.size(), 1u);
  EXPECT_EQ(volume.allocation.volumes[0].pool, "local");
  EXPECT_EQ(volume.allocation.volumes[0].bytes, std::int64_t{100} << 30);
  EXPECT_EQ(g1->placed.gpus_used(kGpu), 3);
  EXPECT_EQ(g1->placed.pool_used("local"), std::int64_t{100} << 30);
  EXPECT_EQ(g1->placed.pods, 2) << "each bound pod takes a pod slot; the claimed volume does not";

  const state::NodeState* g2 = snap.find("gpu-2");
  ASSERT_NE(g2, nullptr);
  EXPECT_EQ(g2->supply.gpus.at(kGpu), 2);
  ASSERT_EQ(g2->supply.pools.size(), 1u);
  EXPECT_EQ(g2->supply.pools[0].devices.size(), 2u);
  EXPECT_TRUE(g2->claims.empty()) << "finished pods hold nothing; an unmanaged class holds nothing";
  EXPECT_EQ(g2->placed.gpus_used(kGpu), 0);

  EXPECT_EQ(view_of(h.state), view_of(h.fake));

  // Lookups.
  auto waiting = h.cluster->pending_pod("u-wait");
  ASSERT_TRUE(waiting);
  EXPECT_EQ(waiting->display_name(), "team/waiting");
  EXPECT_FALSE(h.cluster->pending_pod("u-bound"));
  EXPECT_FALSE(h.cluster->pending_pod("u-done"));
  auto scratch = h.cluster->claim("team", "scratch");
  ASSERT_TRUE(scratch);
  EXPECT_EQ(scratch->storage_class, "local-storage");
  EXPECT_EQ(scratch->bytes, std::int64_t{50} << 30);
  EXPECT_FALSE(scratch->bound);
  auto data = h.cluster->claim("team", "data");
  ASSERT_TRUE(data);
  EXPECT_TRUE(data->bound) << "a selected node means the claim needs no new capacity";
  EXPECT_FALSE(h.cluster->claim("team", "nope"));
  EXPECT_FALSE(h.cluster->claim("other", "data"));
  EXPECT_EQ(h.cluster->default_storage_class(), "standard");

  // What was asked of the API server.
  const auto pod_lists = h.server.lists("/api/v1/pods");
  ASSERT_GE(pod_lists.size(), 1u);
  EXPECT_EQ(pod_lists[0].param("fieldSelector"), "status.phase!=Succeeded,status.phase!=Failed");
  EXPECT_EQ(pod_lists[0].param("limit"), "500");
  EXPECT_EQ(pod_lists[0].authorization, "Bearer extender-token");
  for (const char* path :
       {"/api/v1/nodes", "/api/v1/pods", "/api/v1/persistentvolumeclaims", "/apis/storage.k8s.io/v1/storageclasses"}) {
    SCOPED_TRACE(path);
    ASSERT_TRUE(eventually([&] { return !h.server.watches(path).empty(); }));
    const auto w = h.server.watches(path).front();
    EXPECT_FALSE(h.server.lists(path).front().has("resourceVersion"));
    EXPECT_EQ(w.param("resourceVersion"), std::to_string(h.fake.resource_version())) << "the version of the list";
    EXPECT_EQ(w.param("timeoutSeconds"), "5");
    EXPECT_EQ(w.param("allowWatchBookmarks"), "true");
  }
  EXPECT_EQ(h.server.watches("/api/v1/pods").front().param("fieldSelector"),
            "status.phase!=Succeeded,status.phase!=Failed");
}

TEST(KubeCluster, WatchEventsMoveTheState) {
  ClusterHarness h;
  seed(h.fake);
  h.start();
  ASSERT_TRUE(h.wait_ready());
  ASSERT_TRUE(eventually([&] {
    return h.fake.open_watches(Kind::kPods) == 1 && h.fake.open_watches(Kind::kNodes) == 1 &&
           h.fake.open_watches(Kind::kClaims) == 1 && h.fake.open_watches(Kind::kClasses) == 1;
  }));

  // A deleted pod's claim goes.
  h.fake.remove(Kind::kPods, "team/bound");
  ASSERT_TRUE(eventually([&] { return !h.state.claim_of("u-bound"); }));
  EXPECT_EQ(gpus_held(h.state, "gpu-1"), 1);

  // A pending pod that becomes bound is placed, and is no longer pending.
  h.fake.put(Kind::kPods, pod_object("team", "waiting", "u-wait", 1, "gpu-2"));
  ASSERT_TRUE(eventually([&] { return h.state.claim_of("u-wait").has_value(); }));
  EXPECT_EQ(h.state.claim_of("u-wait")->node, "gpu-2");
  EXPECT_EQ(h.state.claim_of("u-wait")->kind, state::Claim::Kind::kPlaced);
  EXPECT_FALSE(h.cluster->pending_pod("u-wait"));

  // A new pending pod is known for /bind; a pod that finishes stops holding its GPUs.
  h.fake.put(Kind::kPods, pod_object("team", "late", "u-late", 2));
  ASSERT_TRUE(eventually([&] { return h.cluster->pending_pod("u-late").has_value(); }));
  json finished = pod_object("team", "terminating", "u-term", 1, "gpu-1", "Succeeded");
  h.fake.put(Kind::kPods, finished);
  ASSERT_TRUE(eventually([&] { return !h.state.claim_of("u-term"); }));
  EXPECT_EQ(gpus_held(h.state, "gpu-1"), 0);

  // A claim gets its node; another is deleted.
  h.fake.put(Kind::kClaims, claim_object("team", "scratch", "c-scratch", "local-storage", "50Gi", "gpu-2"));
  ASSERT_TRUE(eventually([&] { return h.state.claim_of("pvc/c-scratch").has_value(); }));
  EXPECT_TRUE(h.cluster->claim("team", "scratch")->bound);
  // The deletion reaches the state and the claims' own store from one watch event, but not at
  // one instant: wait for both.
  h.fake.remove(Kind::kClaims, "team/data");
  ASSERT_TRUE(eventually([&] { return !h.state.claim_of("pvc/c-data") && !h.cluster->claim("team", "data"); }));

  // Nodes change and go; the default class moves.
  h.fake.put(Kind::kNodes, node_object("gpu-2", 8, {{"scheduler-extender.io/pool.local", "nvme0=1Ti,nvme1=1Ti"}}));
  h.fake.remove(Kind::kNodes, "cpu-1");
  h.fake.put(Kind::kClasses, storage_class_object("standard", false));
  h.fake.put(Kind::kClasses, storage_class_object("local-storage", true));
  ASSERT_TRUE(eventually([&] { return view_of(h.state) == view_of(h.fake); }))
      << "state:" << view_of(h.state) << "\nserver:" << view_of(h.fake);
  EXPECT_EQ(h.state.snapshot().find("cpu-1"), nullptr);
  ASSERT_TRUE(eventually([&] { return h.cluster->default_storage_class() == "local-storage"; }));

  // Each kind was listed once: events alone did all of this.
  for (Kind k : {Kind::kNodes, Kind::kPods, Kind::kClaims, Kind::kClasses}) {
    EXPECT_EQ(h.server.lists(kube::testing::kind_path(k)).size(), 1u) << kube::testing::kind_path(k);
  }
}

TEST(KubeCluster, EveryRowOfTheWatchedKindsTableIsWatchedAndReported) {
  ClusterHarness h;
  seed(h.fake);
  h.start();
  ASSERT_TRUE(h.wait_ready());
  std::set<std::string> rows;
  for (const sources::WatchedKind& row : sources::kWatchedKinds) {
    rows.emplace(row.resource);
    EXPECT_TRUE(eventually([&] { return h.fake.open_watches(row.kind) == 1; })) << row.resource;
  }
  std::set<std::string> reported;
  for (const auto& [resource, status] : h.cluster->watch_status()) {
    EXPECT_TRUE(status.synced) << resource;
    reported.insert(resource);
  }
  EXPECT_EQ(reported, rows);
}

TEST(KubeCluster, AGroupTurnedOffIsNeitherProbedNorWatchedNorWaitedFor) {
  ClusterHarness h([](config::Config& c) { c.storage.capacity_tracking = false; });
  seed(h.fake);
  h.start();
  ASSERT_TRUE(h.wait_ready());
  for (Kind k : {Kind::kCapacities, Kind::kCsiDrivers}) {
    EXPECT_TRUE(h.server.requests("GET", kube::testing::kind_path(k)).empty()) << kube::testing::kind_path(k);
  }
  for (const auto& [resource, status] : h.cluster->watch_status()) {
    EXPECT_NE(resource, "csistoragecapacities");
    EXPECT_NE(resource, "csidrivers");
  }
}

TEST(KubeCluster, CutsAndExpiredVersionsConvergeOnTheServersTruth) {
  ClusterHarness h;
  seed(h.fake);
  h.start();
  ASSERT_TRUE(h.wait_ready());
  ASSERT_TRUE(
      eventually([&] { return h.fake.open_watches(Kind::kPods) == 1 && h.fake.open_watches(Kind::kNodes) == 1; }));

  // 1. Cut every watch; the server changes while the reflectors reconnect: the resumed watches
  //    replay what they missed.
  for (Kind k : {Kind::kNodes, Kind::kPods, Kind::kClaims, Kind::kClasses}) h.fake.cut_watches(k);
  h.fake.put(Kind::kPods, pod_object("team", "p1", "u-p1", 1, "gpu-2"));
  h.fake.remove(Kind::kPods, "team/bound");
  h.fake.put(Kind::kClaims, claim_object("team", "scratch", "c-scratch", "local-storage", "50Gi", "gpu-1"));
  ASSERT_TRUE(eventually([&] { return view_of(h.state) == view_of(h.fake); }))
      << "state:" << view_of(h.state) << "\nserver:" << view_of(h.fake);
  for (Kind k : {Kind::kNodes, Kind::kPods, Kind::kClaims, Kind::kClasses}) {
    EXPECT_EQ(h.server.lists(kube::testing::kind_path(k)).size(), 1u) << "resumed, not listed again";
  }

  // 2. Pods change without the watch seeing it, the history is compacted, then the watch drops:
  //    resuming, it is told 410 (ERROR event) and lists again. What changed appears, what went
  //    is gone.
  ASSERT_TRUE(eventually([&] { return h.fake.open_watches(Kind::kPods) == 1; }));
  h.fake.hold(Kind::kPods);
  h.fake.put(Kind::kPods, pod_object("team", "p2", "u-p2", 2, "gpu-2"));
  h.fake.remove(Kind::kPods, "team/terminating");
  h.fake.put(Kind::kPods, pod_object("team", "p3", "u-p3", 1));
  h.fake.compact(Kind::kPods, kube::testing::FakeCluster::ExpiredAs::kErrorEvent);
  h.fake.cut_watches(Kind::kPods);
  ASSERT_TRUE(eventually([&] { return h.server.lists("/api/v1/pods").size() == 2; })) << "pods were listed again";
  ASSERT_TRUE(eventually([&] { return view_of(h.state) == view_of(h.fake); }))
      << "state:" << view_of(h.state) << "\nserver:" << view_of(h.fake);
  // The pending lookup is its own store, filled just after the placements: wait for it too.
  EXPECT_TRUE(eventually([&] { return h.cluster->pending_pod("u-p3").has_value(); }));

  // 3. The same for nodes, told with an HTTP 410; a node vanished meanwhile.
  ASSERT_TRUE(eventually([&] { return h.fake.open_watches(Kind::kNodes) == 1; }));
  h.fake.hold(Kind::kNodes);
  h.fake.remove(Kind::kNodes, "cpu-1");
  h.fake.put(Kind::kNodes, node_object("gpu-3", 8));
  h.fake.compact(Kind::kNodes, kube::testing::FakeCluster::ExpiredAs::kHttp410);
  h.fake.cut_watches(Kind::kNodes);
  ASSERT_TRUE(eventually([&] { return h.server.lists("/api/v1/nodes").size() == 2; })) << "nodes were listed again";
  ASSERT_TRUE(eventually([&] { return view_of(h.state) == view_of(h.fake); }))
      << "state:" << view_of(h.state) << "\nserver:" << view_of(h.fake);

  // 4. A live ERROR 410 on the open claim watch; after the relist, events flow again.
  ASSERT_TRUE(eventually([&] { return h.fake.open_watches(Kind::kClaims) == 1; }));
  h.fake.expire_watches(Kind::kClaims);
  ASSERT_TRUE(eventually([&] { return h.server.lists("/api/v1/persistentvolumeclaims").size() == 2; }));
  ASSERT_TRUE(eventually([&] { return h.fake.open_watches(Kind::kClaims) == 1; }));
  h.fake.put(Kind::kClaims, claim_object("team", "more", "c-more", "local-storage", "20Gi", "gpu-3"));
  h.fake.put(Kind::kPods, pod_object("team", "p4", "u-p4", 4, "gpu-3"));
  ASSERT_TRUE(eventually([&] { return view_of(h.state) == view_of(h.fake); }))
      << "state:" << view_of(h.state) << "\nserver:" << view_of(h.fake);
  EXPECT_EQ(h.state.snapshot().find("gpu-3")->placed.gpus_used(kGpu), 4);

  // Pending pods match the server too.
  for (const auto& uid : kube::testing::pending_uids(h.fake)) EXPECT_TRUE(h.cluster->pending_pod(uid)) << uid;
  for (const char* uid : {"u-p1", "u-p2", "u-bound", "u-term"}) EXPECT_FALSE(h.cluster->pending_pod(uid)) << uid;
  EXPECT_EQ(h.cluster->not_ready(), std::nullopt);
}

TEST(KubeCluster, NotReadyUntilEveryKindIsListed) {
  ClusterHarness h;
  seed(h.fake);
  // Before anything runs, every kind is named.
  auto before = h.cluster->not_ready();
  ASSERT_TRUE(before);
  for (const char* kind : {"nodes", "pods", "persistentvolumeclaims", "storageclasses"}) {
    EXPECT_NE(before->find(std::string(kind) + " not synced yet"), std::string::npos) << *before;
  }
  // The service account may not list storage classes (yet).
  h.fake.forbid(Kind::kClasses, true);
  h.start();
  ASSERT_TRUE(eventually([&] {
    auto why = h.cluster->not_ready();
    return why && why->find("pods") == std::string::npos && why->find("nodes") == std::string::npos &&
           why->find("persistentvolumeclaims") == std::string::npos && why->find("HTTP 403") != std::string::npos;
  }));
  const std::string why = *h.cluster->not_ready();
  EXPECT_NE(why.find("storageclasses not synced yet (listing: HTTP 403: "), std::string::npos) << why;
  EXPECT_NE(why.find("is forbidden"), std::string::npos) << why;
  // The kinds that did list are already in the state.
  EXPECT_EQ(h.state.snapshot().nodes().size(), 3u);
  // RBAC fixed: the reflector's retry gets through and the daemon becomes ready.
  h.fake.forbid(Kind::kClasses, false);
  ASSERT_TRUE(h.wait_ready()) << *h.cluster->not_ready();
  EXPECT_EQ(h.cluster->default_storage_class(), "standard");
}

TEST(KubeCluster, AWatchDownLongerThanStaleAfterMakesItNotReadyUntilItIsBack) {
  ClusterHarness h([](config::Config& c) { c.kubernetes.stale_after = 300ms; });
  seed(h.fake);
  h.start();
  ASSERT_TRUE(h.wait_ready()) << *h.cluster->not_ready();
  const auto down_at = SteadyClock::now();
  h.fake.forbid(Kind::kPods, true);
  h.fake.cut_watches(Kind::kPods);
  std::optional<std::string> reason;
  ASSERT_TRUE(eventually([&] {
    reason = h.cluster->not_ready();
    return reason.has_value();
  }));
  EXPECT_GE(SteadyClock::now() - down_at, 300ms) << "a blip shorter than stale_after is not reported";
  EXPECT_EQ(reason->rfind("pods watch down for ", 0), 0u) << *reason;
  EXPECT_NE(reason->find("s (last error: watch: "), std::string::npos) << *reason;
  EXPECT_EQ(reason->find("nodes"), std::string::npos) << *reason;
  EXPECT_EQ(reason->find("not synced"), std::string::npos) << *reason;
  // The state it learned stays; decisions wait until the watch is back.
  EXPECT_EQ(gpus_held(h.state, "gpu-1"), 3);
  h.fake.forbid(Kind::kPods, false);
  ASSERT_TRUE(h.wait_ready()) << *h.cluster->not_ready();
  // And it follows the server again.
  h.fake.put(Kind::kPods, pod_object("team", "late", "u-late", 1, "gpu-1"));
  EXPECT_TRUE(eventually([&] { return gpus_held(h.state, "gpu-1") == 4; }));
}

TEST(KubeCluster, StopEndsEveryWatchAndCanBeCalledTwice) {
  ClusterHarness h;
  seed(h.fake);
  h.start();
  ASSERT_TRUE(h.wait_ready());
  ASSERT_TRUE(eventually([&] {
    return h.fake.open_watches(Kind::kPods) + h.fake.open_watches(Kind::kNodes) + h.fake.open_watches(Kind::kClaims) +
               h.fake.open_watches(Kind::kClasses) ==
           4;
  }));
  h.cluster->stop();
  // The server notices the four clients went away.
  EXPECT_TRUE(eventually([&] {
    return h.fake.open_watches(Kind::kPods) + h.fake.open_watches(Kind::kNodes) + h.fake.open_watches(Kind::kClaims) +
               h.fake.open_watches(Kind::kClasses) ==
           0;
  }));
  h.cluster->stop();
  // The state stays as it was last seen.
  EXPECT_EQ(view_of(h.state), view_of(h.fake));
}

}  // namespace
}  // namespace extender::sources

namespace extender::sources {
namespace {

TEST(KubeClusterAsPodSource, APodTheWatchHasNotShownIsReadFromTheApiServer) {
  ClusterHarness h;
  h.fake.put(Kind::kNodes, node_object("gpu-1", 8));
  h.start();
  ASSERT_TRUE(h.wait_ready());
  const json late = pod_object("ml", "late", "uid-late", 1);
  h.server.route("GET", "/api/v1/namespaces/ml/pods/late", [late](const httplib::Request&, httplib::Response& res) {
    res.status = 200;
    res.set_content(late.dump(), "application/json");
  });
  const engine::PodSource& pods = *h.cluster;
  EXPECT_FALSE(pods.pending_pod("uid-late")) << "the watch has not shown it";
  auto fetched = pods.fetch_pod("ml", "late");
  ASSERT_TRUE(fetched && *fetched) << fetched.message();
  EXPECT_EQ((*fetched)->uid, "uid-late");
  auto never = pods.fetch_pod("ml", "never");
  ASSERT_TRUE(never) << never.message();
  EXPECT_FALSE(*never) << "a pod the API server does not have";
  h.server.route("GET", "/api/v1/namespaces/ml/pods/broken", [](const httplib::Request&, httplib::Response& res) {
    res.status = 500;
    res.set_content(R"({"kind":"Status","message":"etcdserver: request timed out"})", "application/json");
  });
  auto broken = pods.fetch_pod("ml", "broken");
  ASSERT_FALSE(broken) << "a read that fails is not a pod that does not exist";
  EXPECT_NE(broken.message().find("etcdserver: request timed out"), std::string::npos) << broken.message();
}

}  // namespace
}  // namespace extender::sources
