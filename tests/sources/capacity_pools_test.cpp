// Pools from the capacity CSI drivers publish, in kubernetes mode against the fake API server: a
// class whose driver has storageCapacity is managed without configuration, each node's pool is the
// CSIStorageCapacity that selects it, and claims count by the accounting rule
// (policy/capacity_accounting.h) across republishes, provisioning and a restart.
#include <gtest/gtest.h>

#include "extender/engine/extender.h"
#include "extender/kube/api_binder.h"
#include "extender/server/debug_view.h"
#include "extender/state/demand_cache.h"
#include "support/cluster_harness.h"
#include "support/engine_fixture.h"

namespace extender::engine {
namespace {

using namespace std::chrono_literals;
using kube::testing::capacity_object;
using kube::testing::claim_object;
using kube::testing::csi_class_object;
using kube::testing::csi_driver_object;
using kube::testing::eventually;
using kube::testing::json;
using kube::testing::Kind;
using kube::testing::kind_path;
using kube::testing::node_object;
using kube::testing::pod_object;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;
constexpr const char* kTopology = "openebs.io/nodename";
constexpr const char* kClass = "openebs-lvmpv";
constexpr const char* kDriver = "local.csi.openebs.io";

json with_claims(json pod, const std::vector<std::string>& claims) {
  json volumes = json::array();
  for (const auto& c : claims) volumes.push_back({{"name", c}, {"persistentVolumeClaim", {{"claimName", c}}}});
  pod["spec"]["volumes"] = volumes;
  return pod;
}

json claim(const std::string& name, const std::string& size, const std::string& node = {}, bool bound = false) {
  json pvc = claim_object("ml", name, "pvc-" + name, kClass, size, node);
  if (bound) {
    pvc["spec"]["volumeName"] = "pv-" + name;
    pvc["status"]["phase"] = "Bound";
  }
  return pvc;
}

json capacity(const std::string& node, const std::string& size, const std::string& max_volume = {}) {
  return capacity_object("csisc-" + node, kClass, kTopology, node, size, max_volume);
}

class CapacityPools : public kube::testing::EngineFixture {
 protected:
  explicit CapacityPools(std::chrono::milliseconds settle = std::chrono::minutes(2))
      : EngineFixture([settle](config::Config& c) { c.storage.capacity_settle = settle; }) {}

  void cluster(const std::map<std::string, std::string>& nodes) {
    h_.fake.put(Kind::kCsiDrivers, csi_driver_object(kDriver, true));
    h_.fake.put(Kind::kCsiDrivers, csi_driver_object("nfs.csi.k8s.io", false));
    h_.fake.put(Kind::kClasses, csi_class_object(kClass, kDriver));
    h_.fake.put(Kind::kClasses, csi_class_object("nfs", "nfs.csi.k8s.io"));
    for (const auto& [node, size] : nodes) {
      h_.fake.put(Kind::kNodes, node_object(node, 8, {}, {{kTopology, node}}));
      h_.fake.put(Kind::kCapacities, capacity(node, size));
    }
  }
  const model::Pool* pool(const std::string& node) { return pool_of(node, kClass); }
  // The pool's free space as placement decides it: its size less every claim on it.
  std::optional<std::int64_t> free(const std::string& node) {
    const model::Pool* p = pool(node);
    if (!p) return std::nullopt;
    return p->capacity_bytes - snap_.find(node)->usage_excluding("", SteadyClock::now()).pool_used(kClass);
  }
  bool free_becomes(const std::string& node, std::int64_t want,
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    return eventually([&] { return free(node) == want; }, timeout);
  }
  // Binds the claim to a volume and waits until the claim watch has delivered it (a marker claim
  // written after it is seen).
  void provision(const std::string& name, const std::string& size, const std::string& node) {
    h_.fake.put(Kind::kClaims, claim(name, size, node, true));
    const std::string marker = "marker-" + std::to_string(++markers_);
    h_.fake.put(Kind::kClaims, claim_object("other", marker, "pvc-" + marker, "nfs", "1Gi"));
    ASSERT_TRUE(eventually([&] { return h_.cluster->claim("other", marker).has_value(); }));
  }
  int markers_ = 0;
  // Publishes a new figure for the node and waits until the state has it.
  void republish(const std::string& node, const std::string& size) {
    h_.fake.put(Kind::kCapacities, capacity(node, size));
    const std::int64_t bytes = kube::testing::test_bytes(size);
    ASSERT_TRUE(eventually([&] { return pool(node) && pool(node)->published_bytes == bytes; })) << size;
  }
};

TEST_F(CapacityPools, AClassWhoseDriverPublishesCapacityIsManagedWithoutConfiguration) {
  cluster({{"n1", "100Gi"}, {"n2", "30Gi"}});
  h_.fake.put(Kind::kCapacities, capacity_object("nfs-n1", "nfs", kTopology, "n1", "1Ti"));
  h_.fake.put(Kind::kNodes, node_object("gpu-only", 8));
  start();
  ASSERT_TRUE(eventually([&] { return pool("n1") && pool("n2"); }));
  EXPECT_EQ(pool("n1")->capacity_bytes, 100 * kGiB);
  EXPECT_EQ(pool("n2")->capacity_bytes, 30 * kGiB);
  EXPECT_EQ(pool("gpu-only"), nullptr) << "no object selects it";
  EXPECT_EQ(h_.state.snapshot().find("n1")->supply.find_pool("nfs"), nullptr) << "its driver publishes no capacity";
  ASSERT_TRUE(h_.cluster->capacity_class_pools());
  EXPECT_EQ(*h_.cluster->capacity_class_pools(), (std::map<std::string, std::string, std::less<>>{{kClass, kClass}}));

  h_.fake.put(Kind::kCapacities, capacity("n2", "50Gi", "20Gi"));
  ASSERT_TRUE(eventually([&] { return pool("n2") && pool("n2")->capacity_bytes == 50 * kGiB; }));
  EXPECT_EQ(pool("n2")->max_volume_bytes, 20 * kGiB);
  h_.fake.remove(Kind::kCapacities, "kube-system/csisc-n2");
  EXPECT_TRUE(eventually([&] { return pool("n2") == nullptr; }));
  h_.fake.put(Kind::kCsiDrivers, csi_driver_object(kDriver, false));
  EXPECT_TRUE(eventually([&] { return pool("n1") == nullptr; })) << "the driver stopped publishing";
}

TEST_F(CapacityPools, AnUnreadableFigureDeletedDropsItsPool) {
  cluster({{"n1", "100Gi"}, {"n2", "5Gi"}});
  start();
  ASSERT_TRUE(eventually([&] { return pool("n2") != nullptr; }));
  json unreadable = capacity("n2", "5Gi");
  unreadable["capacity"] = "a great deal";
  h_.fake.put(Kind::kCapacities, unreadable);
  h_.fake.remove(Kind::kCapacities, "kube-system/csisc-n2");
  EXPECT_TRUE(eventually([&] { return pool("n2") == nullptr; }))
      << "dropped by its key, though its body cannot be read";
  EXPECT_NE(pool("n1"), nullptr);
}

TEST_F(CapacityPools, AMadeUpPodNeitherWaitsNorMakesKubeSchedulersPodsWait) {
  cluster({{"n1", "100Gi"}});
  h_.cfg.storage.placement_wait = std::chrono::seconds(3);
  h_.fake.put(Kind::kClaims, claim("real-data", "10Gi"));
  h_.fake.put(Kind::kPods, with_claims(pod_object("ml", "real", "uid-real", 0), {"real-data"}));
  start();
  ASSERT_TRUE(eventually([&] { return h_.cluster->pending_pod("uid-real") && h_.cluster->claim("ml", "real-data"); }));
  wire::ExtenderArgs made_up;
  made_up.pod = *h_.cluster->pending_pod("uid-real");
  made_up.pod.uid = "uid-made-up";
  made_up.pod.name = "made-up";
  made_up.set_node_names({"n1"});
  const auto refused = ext_->filter(made_up);
  EXPECT_NE(refused.result.error.find("not a pod the API server has"), std::string::npos) << refused.result.error;
  const auto start = SteadyClock::now();
  const auto real = filter("real", {"n1"});
  EXPECT_TRUE(real.result.error.empty()) << real.result.error;
  EXPECT_LT(SteadyClock::now() - start, std::chrono::milliseconds(1500))
      << "kube-scheduler's pod did not wait 3s for the made-up pod's claims to show a node";
}

TEST_F(CapacityPools, AStrangerReplayingARealPodsFilterMakesOnlyItsOwnFiltersWait) {
  cluster({{"n1", "100Gi"}});
  h_.cfg.storage.placement_wait = std::chrono::seconds(2);
  for (const char* name : {"replayed", "real", "other"}) {
    h_.fake.put(Kind::kClaims, claim(std::string(name) + "-data", "10Gi"));
    h_.fake.put(Kind::kPods,
                with_claims(pod_object("ml", name, std::string("uid-") + name, 0), {std::string(name) + "-data"}));
  }
  start();
  ASSERT_TRUE(
      eventually([&] { return h_.cluster->pending_pod("uid-other") && h_.cluster->claim("ml", "other-data"); }));
  const std::string stranger = "10.0.9.9";
  const auto args_of = [&](const std::string& uid) {
    wire::ExtenderArgs args;
    args.pod = *h_.cluster->pending_pod(uid);
    args.set_node_names({"n1"});
    return args;
  };
  const auto replayed = args_of("uid-replayed");
  ASSERT_TRUE(ext_->filter(replayed, std::nullopt, engine::PodScope::kUnmanaged, stranger).result.error.empty());

  auto start = SteadyClock::now();
  const auto real = filter("real", {"n1"});
  EXPECT_TRUE(real.result.error.empty()) << real.result.error;
  EXPECT_LT(SteadyClock::now() - start, std::chrono::milliseconds(1000))
      << "kube-scheduler's pod did not wait for the placement of a pod the stranger filtered";

  start = SteadyClock::now();
  const auto other = args_of("uid-other");
  EXPECT_TRUE(ext_->filter(other, std::nullopt, engine::PodScope::kUnmanaged, stranger).result.error.empty());
  EXPECT_GE(SteadyClock::now() - start, std::chrono::milliseconds(1000)) << "the stranger's own next filter waited";
}

TEST_F(CapacityPools, TwoClaimsOfAPodCountTogetherAndSelectedClaimsHoldTheirSpace) {
  cluster({{"n1", "100Gi"}, {"n2", "60Gi"}});
  h_.fake.put(Kind::kCapacities, capacity("n1", "100Gi", "50Gi"));
  for (const char* p : {"a", "b", "huge"}) {
    const std::string name = p;
    const std::string size = name == "huge" ? "60Gi" : "40Gi";
    h_.fake.put(Kind::kClaims, claim(name + "-0", size));
    if (name != "huge") h_.fake.put(Kind::kClaims, claim(name + "-1", size));
    h_.fake.put(Kind::kPods, with_claims(pod_object("ml", name, "uid-" + name, name == "a" ? 1 : 0),
                                         name == "huge" ? std::vector<std::string>{"huge-0"}
                                                        : std::vector<std::string>{name + "-0", name + "-1"}));
  }
  h_.fake.put(Kind::kClaims, claim("small-0", "10Gi"));
  h_.fake.put(Kind::kPods, with_claims(pod_object("ml", "small", "uid-small", 0), {"small-0"}));
  h_.cfg.scoring.volume_balance_weight = 0;  // capacity alone ranks
  start();
  FilterAnswer a = filter("a", {"n1", "n2"});
  EXPECT_EQ(a.result.node_names, std::vector<std::string_view>{"n1"});
  EXPECT_EQ(a.result.failed_unresolvable.at("n2"),
            "pool openebs-lvmpv: pod needs 80 GiB, node has 60 GiB free of 60 GiB")
      << "each 40 GiB claim fits alone, the two together do not";
  // VolumeBinding's PreBind selects the node for both claims.
  h_.fake.put(Kind::kClaims, claim("a-0", "40Gi", "n1"));
  h_.fake.put(Kind::kClaims, claim("a-1", "40Gi", "n1"));
  ASSERT_TRUE(free_becomes("n1", 20 * kGiB));
  FilterAnswer b = filter("b", {"n1"});
  EXPECT_EQ(b.result.failed_unresolvable.at("n1"),
            "pool openebs-lvmpv: pod needs 80 GiB, node has 20 GiB free of 100 GiB")
      << "the published figure has not moved yet; the daemon's own accounting has";
  wire::ExtenderArgs ranking;
  ranking.pod = *h_.cluster->pending_pod("uid-small");
  ranking.set_node_names({"n1", "n2"});
  PrioritizeAnswer ranked = ext_->prioritize(ranking);
  ASSERT_EQ(ranked.scores.size(), 2u);
  EXPECT_LT(ranked.scores[0].score, ranked.scores[1].score)
      << "n1 publishes more free space than n2, but the daemon has 80 GiB selected there: a 10 GiB claim ranks n2 "
         "first";
  FilterAnswer huge = filter("huge", {"n1"});
  EXPECT_EQ(huge.result.failed_unresolvable.at("n1"),
            "pool openebs-lvmpv: volume huge-0 needs 60 GiB, the node's largest volume is 50 GiB");
}

TEST_F(CapacityPools, AClaimIsSubtractedUntilAFigureObservedAfterItsVolumeAppeared) {
  cluster({{"n1", "100Gi"}});
  h_.fake.put(Kind::kClaims, claim("a-0", "40Gi", "n1"));
  h_.fake.put(Kind::kClaims, claim("a-1", "40Gi", "n1"));
  start();
  ASSERT_TRUE(free_becomes("n1", 20 * kGiB));
  republish("n1", "90Gi");
  EXPECT_EQ(free("n1"), 10 * kGiB) << "republished before provisioning: both claims still count";
  provision("a-0", "40Gi", "n1");
  EXPECT_EQ(free("n1"), 10 * kGiB) << "provisioned, but the figure predates the volume";
  republish("n1", "50Gi");
  EXPECT_EQ(free("n1"), 10 * kGiB) << "the new figure counts a-0: it is not subtracted again";
  EXPECT_EQ(pool("n1")->capacity_bytes, 90 * kGiB) << "published 50 + reflected 40";
  const json view = json::parse(server::render_node(*snap_.find("n1"), SteadyClock::now()));
  ASSERT_EQ(view["pools"].size(), 1u);
  const json& p = view["pools"][0];
  EXPECT_EQ(p["source"], "CSIStorageCapacity kube-system/csisc-n1");
  EXPECT_EQ(p["published_bytes"], 50 * kGiB);
  EXPECT_EQ(p["reflected_bytes"], 40 * kGiB);
  EXPECT_EQ(p["subtracted_bytes"], 40 * kGiB) << "a-1, not provisioned yet";
  EXPECT_EQ(p["free_bytes"], 10 * kGiB);
  provision("a-1", "40Gi", "n1");
  republish("n1", "10Gi");
  EXPECT_EQ(free("n1"), 10 * kGiB);
  EXPECT_EQ(pool("n1")->capacity_bytes, 90 * kGiB);
  h_.fake.remove(Kind::kClaims, "ml/a-0");
  // The pool's size and the deleted claim's hold change one after the other.
  EXPECT_TRUE(eventually([&] { return pool("n1")->capacity_bytes == 50 * kGiB && free("n1") == 10 * kGiB; }))
      << "deleted: the figure rises only when the driver says so; free " << free("n1").value_or(-1);
  republish("n1", "50Gi");
  EXPECT_EQ(free("n1"), 50 * kGiB);
}

TEST_F(CapacityPools, WithoutRightsToReadCapacityClassesAreManagedByConfigurationAlone) {
  cluster({{"n1", "100Gi"}});
  h_.fake.forbid(Kind::kCapacities, true);
  start();
  EXPECT_EQ(pool("n1"), nullptr);
  EXPECT_TRUE(h_.server.requests("GET", kind_path(Kind::kCsiDrivers)).empty()) << "nothing of it is watched";
}

json topolvm_class(const std::string& name, const std::string& device_class) {
  json sc = csi_class_object(name, "topolvm.io");
  if (!device_class.empty()) sc["parameters"] = {{"topolvm.io/device-class", device_class}};
  return sc;
}

json topolvm_node(const std::string& name, const std::map<std::string, std::int64_t>& gib_by_device_class) {
  std::map<std::string, std::string> annotations;
  for (const auto& [dc, gib] : gib_by_device_class)
    annotations["capacity.topolvm.io/" + dc] = std::to_string(gib * kGiB);
  return node_object(name, 8, annotations, {{kTopology, name}});
}

TEST_F(CapacityPools, TopoLvmsNodeAnnotationIsAPoolWhereNoObjectSelectsTheNode) {
  h_.fake.put(Kind::kClasses, topolvm_class("ssd", "ssd"));
  h_.fake.put(Kind::kClasses, topolvm_class("lvm", ""));
  h_.fake.put(Kind::kNodes, topolvm_node("t1", {{"ssd", 100}, {"00default", 50}}));
  h_.fake.put(Kind::kNodes, topolvm_node("t2", {{"ssd", 70}}));
  h_.fake.put(Kind::kCapacities, capacity_object("csisc-ssd-t2", "ssd", kTopology, "t2", "30Gi"));
  h_.fake.put(Kind::kClaims, claim_object("ml", "s-0", "pvc-s-0", "ssd", "40Gi", "t1"));
  start();
  auto pool_of = [&](const std::string& node, const std::string& cls) -> const model::Pool* {
    snap_ = h_.state.snapshot();
    return snap_.find(node) ? snap_.find(node)->supply.find_pool(cls) : nullptr;
  };
  ASSERT_TRUE(eventually([&] { return pool_of("t1", "ssd") && pool_of("t1", "lvm") && pool_of("t2", "ssd"); }));
  EXPECT_EQ(pool_of("t1", "ssd")->source, "annotation capacity.topolvm.io/ssd");
  EXPECT_EQ(pool_of("t1", "ssd")->published_bytes, 100 * kGiB);
  EXPECT_EQ(pool_of("t1", "lvm")->published_bytes, 50 * kGiB) << "no device-class parameter: TopoLVM's default";
  EXPECT_EQ(pool_of("t2", "ssd")->source, "CSIStorageCapacity kube-system/csisc-ssd-t2")
      << "an object that selects the node wins";
  EXPECT_EQ(pool_of("t2", "lvm"), nullptr);
  EXPECT_EQ(pool_of("t1", "ssd")->capacity_bytes, 100 * kGiB) << "s-0 has no volume yet: subtracted";

  h_.fake.put(Kind::kClaims, claim_object("ml", "s-0", "pvc-s-0", "ssd", "40Gi", "t1"));
  json bound = claim_object("ml", "s-0", "pvc-s-0", "ssd", "40Gi", "t1");
  bound["spec"]["volumeName"] = "pv-s-0";
  h_.fake.put(Kind::kClaims, bound);
  h_.fake.put(Kind::kClaims, claim_object("other", "marker", "pvc-marker", "nfs", "1Gi"));
  ASSERT_TRUE(eventually([&] { return h_.cluster->claim("other", "marker").has_value(); }));
  h_.fake.put(Kind::kNodes, topolvm_node("t1", {{"ssd", 60}, {"00default", 50}}));
  ASSERT_TRUE(eventually([&] { return pool_of("t1", "ssd") && pool_of("t1", "ssd")->published_bytes == 60 * kGiB; }));
  EXPECT_EQ(pool_of("t1", "ssd")->capacity_bytes, 100 * kGiB)
      << "the new annotation counts s-0: 60 published + 40 reflected";
}

class CapacityPoolsAfterRestart : public CapacityPools {
 protected:
  // Long enough that a loaded machine still reads the pool within it after start() (1.5 s was not
  // under a full CI run), short enough to wait out.
  CapacityPoolsAfterRestart() : CapacityPools(std::chrono::milliseconds(4000)) {}
};

TEST_F(CapacityPoolsAfterRestart, VolumesListedBoundCountUntilTheyHaveSettled) {
  cluster({{"n1", "60Gi"}});
  h_.fake.put(Kind::kClaims, claim("old", "40Gi", "n1", true));
  start();
  EXPECT_EQ(free("n1"), 20 * kGiB) << "whether the listed figure counts the volume is not known: it is subtracted";
  EXPECT_TRUE(free_becomes("n1", 60 * kGiB, std::chrono::milliseconds(15000)))
      << "after the settle time, the figure counts it";
}

}  // namespace
}  // namespace extender::engine
