// Local PersistentVolumes (as local-static-provisioner publishes them) in kubernetes mode against
// the fake API server: a no-provisioner WaitForFirstConsumer class with local volumes is managed
// without configuration, each claim takes one whole volume as VolumeBinding matches, a pod in
// flight holds its volumes, and a claim bound to a local volume holds it and pins its pod.
#include <gtest/gtest.h>

#include "extender/server/debug_view.h"
#include "support/cluster_harness.h"
#include "support/engine_fixture.h"

namespace extender::engine {
namespace {

using namespace kube::testing;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;
constexpr const char* kClass = "fast-disks";
constexpr const char* kHostname = "kubernetes.io/hostname";

json local_pv(const std::string& name, const std::string& node, const std::string& size,
              const std::string& claim = {}) {
  json pv{{"apiVersion", "v1"},
          {"kind", "PersistentVolume"},
          {"metadata", {{"name", name}, {"labels", {{kHostname, node}}}}}};
  json& spec = pv["spec"];
  spec["accessModes"] = json::array({"ReadWriteOnce"});
  spec["capacity"] = {{"storage", size}};
  spec["local"] = {{"path", "/mnt/fast-disks/" + name}};
  json requirement{{"key", kHostname}, {"operator", "In"}, {"values", json::array({node})}};
  json term{{"matchExpressions", json::array({requirement})}};
  spec["nodeAffinity"]["required"]["nodeSelectorTerms"] = json::array({term});
  spec["persistentVolumeReclaimPolicy"] = "Delete";
  spec["storageClassName"] = kClass;
  spec["volumeMode"] = "Filesystem";
  pv["status"]["phase"] = claim.empty() ? "Available" : "Bound";
  if (!claim.empty()) spec["claimRef"] = {{"kind", "PersistentVolumeClaim"}, {"namespace", "ml"}, {"name", claim}};
  return pv;
}

json claim(const std::string& name, const std::string& volume = {}) {
  json pvc = claim_object("ml", name, "pvc-" + name, kClass, "40Gi");
  if (!volume.empty()) {
    pvc["spec"]["volumeName"] = volume;
    pvc["status"]["phase"] = "Bound";
  }
  return pvc;
}

json pod_with_claims(const std::string& name, const std::vector<std::string>& claims, const std::string& node = {}) {
  json pod = pod_object("ml", name, "uid-" + name, 0, node);
  json volumes = json::array();
  for (const auto& c : claims) volumes.push_back({{"name", c}, {"persistentVolumeClaim", {{"claimName", c}}}});
  pod["spec"]["volumes"] = volumes;
  return pod;
}

class LocalVolumes : public EngineFixture {
 protected:
  void SetUp() override {
    h_.fake.put(Kind::kClasses, storage_class_object(kClass, false));
    for (const char* node : {"n1", "n2"}) h_.fake.put(Kind::kNodes, node_object(node, 0, {}, {{kHostname, node}}));
    for (const char* pv : {"pv-1a", "pv-1b", "pv-1c"}) h_.fake.put(Kind::kVolumes, local_pv(pv, "n1", "100Gi"));
    for (const char* pod : {"a", "b"}) {
      const std::string p = pod;
      h_.fake.put(Kind::kClaims, claim(p + "-0"));
      h_.fake.put(Kind::kClaims, claim(p + "-1"));
      h_.fake.put(Kind::kPods, pod_with_claims(p, {p + "-0", p + "-1"}));
    }
  }
  const model::Pool* pool(const std::string& node) { return pool_of(node, kClass); }
};

TEST_F(LocalVolumes, TwoPodsOfTwoClaimsOnThreeVolumesTheSecondDoesNotFit) {
  h_.fake.put(Kind::kVolumes, local_pv("pv-2a", "n2", "100Gi"));
  start();
  ASSERT_TRUE(eventually([&] { return pool("n1") && pool("n1")->devices.size() == 3 && pool("n2"); }));
  EXPECT_TRUE(pool("n1")->whole_devices);
  EXPECT_EQ(pool("n1")->capacity_bytes, 300 * kGiB);

  FilterAnswer a = filter("a", {"n1", "n2"});
  EXPECT_EQ(a.result.node_names, std::vector<std::string_view>{"n1"});
  EXPECT_EQ(a.result.failed_unresolvable.at("n2"),
            "pool fast-disks: volume a-1 needs a free local PersistentVolume of 40 GiB with its access modes, node has "
            "1 free of 1")
      << "two claims never take the one volume";
  // The API server takes a's Binding; the watch has not reported the pod bound yet: a is in flight.
  h_.fake.set_binding_hook([](const BindingRequest&) -> std::optional<BindingReply> {
    return BindingReply{201, json::object()};
  });
  BindAnswer bound = ext_->bind({"a", "ml", "uid-a", "n1"});
  ASSERT_EQ(bound.error, "");

  FilterAnswer b = filter("b", {"n1"});
  EXPECT_TRUE(!b.result.node_names || b.result.node_names->empty()) << "a, in flight, holds two of the three volumes";
  EXPECT_EQ(b.result.failed_unresolvable.at("n1"),
            "pool fast-disks: volume b-1 needs a free local PersistentVolume of 40 GiB with its access modes, node has "
            "1 free of 3");

  // VolumeBinding binds a's claims to two volumes (not necessarily the daemon's choice).
  h_.fake.put(Kind::kVolumes, local_pv("pv-1b", "n1", "100Gi", "a-0"));
  h_.fake.put(Kind::kVolumes, local_pv("pv-1c", "n1", "100Gi", "a-1"));
  h_.fake.put(Kind::kClaims, claim("a-0", "pv-1b"));
  h_.fake.put(Kind::kClaims, claim("a-1", "pv-1c"));
  ASSERT_TRUE(eventually([&] { return h_.state.claim_of("pv/pv-1c").has_value(); }));
  const auto usage = h_.state.snapshot().find("n1")->usage_excluding("", SteadyClock::now());
  EXPECT_EQ(usage.pool_used(kClass), 200 * kGiB) << "the bound volumes and a's reservation are counted once";
  EXPECT_EQ(filter("b", {"n1"}).result.failed_unresolvable.count("n1"), 1u);
  h_.fake.put(Kind::kPods, pod_with_claims("a", {"a-0", "a-1"}, "n1"));
  ASSERT_TRUE(eventually(
      [&] { return h_.state.claim_of("uid-a") && h_.state.claim_of("uid-a")->kind == state::Claim::Kind::kPlaced; }));
  EXPECT_EQ(filter("b", {"n1"}).result.failed_unresolvable.count("n1"), 1u) << "a's claims hold their volumes";

  const json view = json::parse(server::render_node(*h_.state.snapshot().find("n1"), SteadyClock::now()));
  ASSERT_EQ(view["pools"].size(), 1u);
  EXPECT_EQ(view["pools"][0]["source"], "local PVs");
  EXPECT_EQ(view["pools"][0]["devices"].size(), 3u);
}

TEST_F(LocalVolumes, AClaimBoundToALocalVolumeHoldsItAndPinsItsPod) {
  h_.fake.put(Kind::kVolumes, local_pv("pv-2a", "n2", "100Gi", "c-0"));
  h_.fake.put(Kind::kVolumes, local_pv("pv-2b", "n2", "100Gi"));
  h_.fake.put(Kind::kClaims, claim("c-0", "pv-2a"));
  h_.fake.put(Kind::kClaims, claim("c-1"));
  h_.fake.put(Kind::kPods, pod_with_claims("c", {"c-0", "c-1"}));
  start();
  ASSERT_TRUE(eventually([&] { return pool("n2") && h_.state.claim_of("pv/pv-2a").has_value(); }));
  EXPECT_EQ(h_.cluster->claim("ml", "c-0")->node, "n2");
  FilterAnswer c = filter("c", {"n1", "n2"});
  EXPECT_EQ(c.result.node_names, std::vector<std::string_view>{"n2"})
      << (c.result.failed_unresolvable.count("n2") ? c.result.failed_unresolvable.at("n2") : "");
  EXPECT_NE(c.result.failed_unresolvable.at("n1").find("n2"), std::string::npos) << "held on n2";
  FilterAnswer a = filter("a", {"n2"});
  EXPECT_TRUE(!a.result.node_names || a.result.node_names->empty())
      << "pv-2a is c-0's: one free volume is left for two claims";
}

TEST(LocalVolumesConfigured, AClassNamedInTheConfigurationStaysHandWritten) {
  ClusterHarness h([](config::Config& c) { c.storage.classes[kClass] = "nvme"; });
  h.fake.put(Kind::kClasses, storage_class_object(kClass, false));
  h.fake.put(Kind::kNodes, node_object("n1", 0, {}, {{kHostname, "n1"}}));
  h.fake.put(Kind::kVolumes, local_pv("pv-1a", "n1", "100Gi"));
  h.start();
  ASSERT_TRUE(h.wait_ready()) << "the persistentvolumes watch has listed";
  EXPECT_EQ(h.state.snapshot().find("n1")->supply.find_pool(kClass), nullptr);
  EXPECT_EQ(h.cluster->capacity_class_pools()->count(kClass), 0u);
}

}  // namespace
}  // namespace extender::engine
