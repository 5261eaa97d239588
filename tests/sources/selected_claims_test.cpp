// Claims selected for a node (volume.kubernetes.io/selected-node) without a volume, in kubernetes
// mode against the fake API server: any user of a namespace can write the annotation on a claim of
// any size, so such a claim counts against the node's published pool only while it could be a
// scheduler's selection that is provisioning (policy/capacity_accounting.h): never when larger than
// the pool could provision, and for storage.selected_claim_timeout at most. A claim whose volume
// appears counts as before, until the published figure reflects it.
#include <gtest/gtest.h>

#include "extender/server/debug_view.h"
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
using kube::testing::node_object;
using kube::testing::pod_object;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;
constexpr const char* kTopology = "openebs.io/nodename";
constexpr const char* kClass = "openebs-lvmpv";
constexpr const char* kDriver = "local.csi.openebs.io";
// storage.selected_claim_timeout: the steps before it passes take a second or two, several under a
// sanitizer on a loaded machine.
constexpr auto kTimeout = 20s;

json claim(const std::string& name, std::int64_t gib, const std::string& node, bool bound = false) {
  json pvc = claim_object("ml", name, "pvc-" + name, kClass, std::to_string(gib) + "Gi", node);
  if (bound) {
    pvc["spec"]["volumeName"] = "pv-" + name;
    pvc["status"]["phase"] = "Bound";
  }
  return pvc;
}

class SelectedClaims : public kube::testing::EngineFixture {
 protected:
  SelectedClaims() : EngineFixture([](config::Config& c) { c.storage.selected_claim_timeout = kTimeout; }) {}

  std::optional<std::int64_t> free(const std::string& node) {
    const model::Pool* p = pool_of(node, kClass);
    if (!p) return std::nullopt;
    return p->capacity_bytes - snap_.find(node)->usage_excluding("", SteadyClock::now()).pool_used(kClass);
  }
  std::int64_t ignored(const std::string& node) {
    const model::Pool* p = pool_of(node, kClass);
    if (!p) return -1;
    const json view = json::parse(server::render_node(*snap_.find(node), SteadyClock::now()));
    return view["pools"][0].value("ignored_bytes", std::int64_t{0});
  }
  // Writes the claim and waits until the claim watch has delivered it (a marker written after it).
  void put_claim(const json& pvc) {
    h_.fake.put(Kind::kClaims, pvc);
    const std::string marker = "marker-" + std::to_string(++markers_);
    h_.fake.put(Kind::kClaims, claim_object("other", marker, "pvc-" + marker, "nfs", "1Gi"));
    ASSERT_TRUE(eventually([&] { return h_.cluster->claim("other", marker).has_value(); }));
  }
  int markers_ = 0;
};

struct Held {
  std::string name;
  std::int64_t gib;
  bool hand_set;     // written by a namespace user: never gets a volume
  bool provisioned;  // its volume appears before the timeout
};

struct Row {
  const char* node;
  std::vector<Held> claims;
  std::int64_t free_gib;  // before the timeout
  std::int64_t ignored_gib;
  std::int64_t free_after;  // after it
  std::int64_t ignored_after;
};

// Four nodes of 100Gi pools; the attack's shape is 1Ti claims hand-annotated for each node.
const Row kRows[] = {
    {"n1", {{"attack-1", 1024, true, false}}, 100, 1024, 100, 1024},
    {"n2", {{"attack-2a", 1024, true, false}, {"attack-2b", 1024, true, false}}, 100, 2048, 100, 2048},
    {"n3", {{"stuck", 60, true, false}, {"legit-3", 30, false, true}}, 10, 0, 70, 60},
    {"n4", {{"attack-4", 1024, true, false}, {"slow-4", 20, false, false}}, 80, 1024, 100, 1044},
};

TEST_F(SelectedClaims, HandSetAnnotationsAreBoundedByThePoolAndExpire) {
  h_.fake.put(Kind::kCsiDrivers, csi_driver_object(kDriver, true));
  h_.fake.put(Kind::kClasses, csi_class_object(kClass, kDriver));
  h_.fake.put(Kind::kClasses, csi_class_object("nfs", "nfs.csi.k8s.io"));
  for (const Row& r : kRows) {
    h_.fake.put(Kind::kNodes, node_object(r.node, 8, {}, {{kTopology, r.node}}));
    h_.fake.put(Kind::kCapacities, capacity_object(std::string("csisc-") + r.node, kClass, kTopology, r.node, "100Gi"));
    for (const Held& c : r.claims) h_.fake.put(Kind::kClaims, claim(c.name, c.gib, r.node));
  }
  h_.fake.put(Kind::kClaims, claim_object("ml", "small-0", "pvc-small-0", kClass, "10Gi"));
  json pod = pod_object("ml", "small", "uid-small", 0);
  pod["spec"]["volumes"] = json::array({{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "small-0"}}}}});
  h_.fake.put(Kind::kPods, pod);
  const auto started = SteadyClock::now();
  start();
  for (const Row& r : kRows) {
    ASSERT_TRUE(eventually([&] { return free(r.node) == r.free_gib * kGiB; }))
        << r.node << ": " << free(r.node).value_or(-1);
    EXPECT_EQ(ignored(r.node), r.ignored_gib * kGiB) << r.node;
  }
  FilterAnswer a = filter("small", {"n1", "n2", "n3", "n4"});
  EXPECT_EQ(a.result.node_names, (std::vector<std::string_view>{"n1", "n2", "n3", "n4"}))
      << "hand-set 1Ti claims do not fill 100Gi pools: a 10Gi claim fits everywhere";
  for (const Row& r : kRows) {
    for (const Held& c : r.claims) {
      if (c.provisioned) put_claim(claim(c.name, c.gib, r.node, true));
    }
  }
  ASSERT_LT(SteadyClock::now() - started, kTimeout) << "the machine is too slow for this test's timeout";
  for (const Row& r : kRows) {
    // The hold's end and the pool's count of what it ignores change one after the other.
    EXPECT_TRUE(
        eventually([&] { return free(r.node) == r.free_after * kGiB && ignored(r.node) == r.ignored_after * kGiB; },
                   kTimeout + 10s))
        << r.node << ": free " << free(r.node).value_or(-1) << ", ignored " << ignored(r.node);
  }
  EXPECT_GE(SteadyClock::now() - started, kTimeout) << "claims within the pool count until the timeout";
  // A selected claim whose volume appears late counts again, until the figure reflects it.
  put_claim(claim("stuck", 60, "n3", true));
  EXPECT_EQ(free("n3"), 10 * kGiB);
  EXPECT_EQ(ignored("n3"), 0);
}

// A class storage.classes maps to a hand-written pool (the default configuration's local-storage,
// sized by each node's scheduler-extender.io/pool.local annotation) has no figure to reflect
// anything: its claims without a volume count by the same bound and timeout.
constexpr auto kHandTimeout = 3s;

class HandWrittenPoolClaims : public ::testing::Test {
 protected:
  std::int64_t used(const std::string& node) {
    return h_.state.snapshot().find(node)->usage_excluding("", SteadyClock::now()).pool_used("local");
  }
  kube::testing::ClusterHarness h_{[](config::Config& c) { c.storage.selected_claim_timeout = kHandTimeout; }};
};

TEST_F(HandWrittenPoolClaims, ClaimsWithoutAVolumeAreBoundedByThePoolAndExpire) {
  constexpr const char* kPool = "scheduler-extender.io/pool.local";
  h_.fake.put(Kind::kClasses, kube::testing::storage_class_object("local-storage", false));
  h_.fake.put(Kind::kNodes, node_object("cap", 0, {{kPool, "100Gi"}}));
  h_.fake.put(Kind::kNodes, node_object("dev", 0, {{kPool, "d0=50Gi,d1=50Gi"}}));
  auto selected = [](const std::string& name, const std::string& size, const std::string& node, bool bound = false) {
    json pvc = claim_object("ml", name, "pvc-" + name, "local-storage", size, node);
    if (bound) {
      pvc["spec"]["volumeName"] = "pv-" + name;
      pvc["status"]["phase"] = "Bound";
    }
    return pvc;
  };
  h_.fake.put(Kind::kClaims, selected("attack-cap", "1Ti", "cap"));
  h_.fake.put(Kind::kClaims, selected("bound-cap", "30Gi", "cap", true));
  h_.fake.put(Kind::kClaims, selected("attack-dev", "60Gi", "dev"));
  h_.fake.put(Kind::kClaims, selected("pending-dev", "40Gi", "dev"));
  const auto started = SteadyClock::now();
  h_.start();
  ASSERT_TRUE(h_.wait_ready());
  ASSERT_TRUE(eventually([&] { return used("cap") == 30 * kGiB && used("dev") == 40 * kGiB; }))
      << "cap " << used("cap") << ", dev " << used("dev")
      << ": a 1Ti claim on a 100Gi pool and a 60Gi one on 50Gi devices are not counted";
  ASSERT_LT(SteadyClock::now() - started, kHandTimeout) << "the machine is too slow for this test's timeout";
  EXPECT_TRUE(eventually([&] { return used("dev") == 0; }, kHandTimeout + 5s))
      << "the 40Gi claim still without a volume stops counting once the timeout has passed";
  EXPECT_GE(SteadyClock::now() - started, kHandTimeout);
  EXPECT_EQ(used("cap"), 30 * kGiB) << "a claim with a volume counts whatever its age";
}

}  // namespace
}  // namespace extender::engine
