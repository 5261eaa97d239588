// KubeCluster and DRA over the fake API server: where the server serves resource.k8s.io/v1 the
// slices, claims and classes are watched into an inventory and count for readiness; an old server
// (404 for the group) is asked once and the daemon goes on without DRA.
#include "extender/sources/kube_cluster.h"

#include <gtest/gtest.h>

#include <thread>

#include "support/cluster_harness.h"
#include "support/fake_dra.h"

namespace extender::sources {
namespace {

using namespace std::chrono_literals;
using kube::testing::ClusterHarness;
using kube::testing::device_class_object;
using kube::testing::eventually;
using kube::testing::Kind;
using kube::testing::kind_path;
using kube::testing::node_object;
using kube::testing::resource_claim_object;
using kube::testing::resource_slice_object;

TEST(KubeClusterDra, WatchesSlicesClaimsAndClassesIntoAnInventory) {
  ClusterHarness h;
  h.fake.put(Kind::kNodes, node_object("dra-1", 0));
  h.fake.put(Kind::kResourceSlices, resource_slice_object("dra-1", 4));
  h.fake.put(Kind::kResourceClaims, resource_claim_object("ml", "a", "c-a", 2, "dra-1", {"gpu-0", "gpu-3"}));
  h.fake.put(Kind::kDeviceClasses, device_class_object());
  h.start();
  ASSERT_TRUE(h.wait_ready()) << *h.cluster->not_ready();
  ASSERT_TRUE(eventually([&] { return h.cluster->dra_served(); }));
  auto inv = h.cluster->dra_inventory();
  ASSERT_NE(inv->node("dra-1"), nullptr);
  EXPECT_EQ(inv->node("dra-1")->gpus.size(), 4u);
  EXPECT_EQ(inv->node("dra-1")->allocated_gpus(), 2);
  ASSERT_EQ(h.cluster->device_classes().size(), 1u);
  EXPECT_EQ(h.cluster->device_classes()[0].extended_resource_name, "nvidia.com/gpu");
  bool listed = false;
  for (const auto& [resource, status] : h.cluster->watch_status()) listed = listed || resource == "resourceslices";
  EXPECT_TRUE(listed) << "the DRA watches report their status";
  const engine::DraSource& port = *h.cluster;
  EXPECT_EQ(port.dra_snapshot(), inv) << "the engine's view is the inventory while DRA is served";
  EXPECT_EQ(port.dra_device_classes(), h.cluster->device_classes());
  const auto compiled = port.dra_classes();
  ASSERT_NE(compiled, nullptr);
  ASSERT_NE(compiled->for_extended_resource("nvidia.com/gpu"), nullptr);
  EXPECT_EQ(compiled->for_extended_resource("nvidia.com/gpu")->selectors.size(), 1u);
  EXPECT_EQ(port.dra_classes(), compiled) << "compiled when the classes arrived, not per call";

  // Events: a claim released, a new node's slice, a slice of a second generation not yet complete.
  h.fake.remove(Kind::kResourceClaims, "ml/a");
  h.fake.put(Kind::kResourceSlices, resource_slice_object("dra-2", 2));
  h.fake.put(Kind::kResourceSlices, resource_slice_object("dra-1", 8, "81559Mi", 2, 2));
  ASSERT_TRUE(eventually([&] {
    auto now = h.cluster->dra_inventory();
    return now->node("dra-2") && now->node("dra-1")->allocated_gpus() == 0 &&
           !now->node("dra-1")->incomplete_pools.empty();
  }));
  EXPECT_TRUE(h.cluster->dra_inventory()->node("dra-1")->gpus.empty()) << "an incomplete pool is not counted";
  EXPECT_EQ(h.cluster->dra_inventory(), h.cluster->dra_inventory()) << "rebuilt only after a change";
  EXPECT_EQ(port.dra_classes(), compiled) << "slices and claims do not recompile the classes";

  // A DeviceClass event: compiled again; the inventory is not rebuilt for it.
  const auto inventory = h.cluster->dra_inventory();
  h.fake.put(Kind::kDeviceClasses, device_class_object("mig.nvidia.com", "mig", ""));
  ASSERT_TRUE(eventually([&] { return port.dra_classes()->find("mig.nvidia.com") != nullptr; }));
  EXPECT_NE(port.dra_classes(), compiled);
  EXPECT_NE(port.dra_classes()->find("gpu.nvidia.com"), nullptr);
  EXPECT_EQ(h.cluster->dra_inventory(), inventory) << "a DeviceClass changes no slice or claim";
  h.fake.remove(Kind::kDeviceClasses, "gpu.nvidia.com");
  ASSERT_TRUE(eventually([&] { return port.dra_classes()->find("gpu.nvidia.com") == nullptr; }));
  EXPECT_EQ(port.dra_classes()->for_extended_resource("nvidia.com/gpu"), nullptr);
}

TEST(KubeClusterDra, OnlySlicesOfTheConfiguredDriversAreCounted) {
  struct Case {
    std::vector<std::string> drivers;  // kubernetes.dra.drivers
    bool nvidia_counted, example_counted;
  };
  const Case cases[] = {
      {{"gpu.nvidia.com"}, true, false},  // the default
      {{"gpu.example.com"}, false, true},
      {{"gpu.nvidia.com", "gpu.example.com"}, true, true},
  };
  for (const auto& c : cases) {
    ClusterHarness h([&](config::Config& cfg) { cfg.kubernetes.dra.drivers = c.drivers; });
    h.fake.put(Kind::kNodes, node_object("nv-1", 0));
    h.fake.put(Kind::kNodes, node_object("ex-1", 0));
    h.fake.put(Kind::kResourceSlices, resource_slice_object("nv-1", 4));
    auto example = resource_slice_object("ex-1", 2);
    example["metadata"]["name"] = "ex-1-gpu.example.com-slice";
    example["spec"]["driver"] = "gpu.example.com";
    h.fake.put(Kind::kResourceSlices, example);
    h.start();
    ASSERT_TRUE(h.wait_ready()) << *h.cluster->not_ready();
    ASSERT_TRUE(eventually([&] { return h.cluster->dra_served(); }));
    const auto inv = h.cluster->dra_inventory();
    const model::NodeDra* nv = inv->node("nv-1");
    const model::NodeDra* ex = inv->node("ex-1");
    EXPECT_EQ(nv ? nv->gpus.size() : 0u, c.nvidia_counted ? 4u : 0u) << c.drivers.size();
    EXPECT_EQ(ex ? ex->gpus.size() : 0u, c.example_counted ? 2u : 0u) << c.drivers.size();
    if (ex && c.example_counted) {
      EXPECT_EQ(ex->gpus[0].driver, "gpu.example.com");
      EXPECT_EQ(ex->gpus[1].index, 1) << "the index attribute is read in the driver's own domain";
    }
  }
}

TEST(KubeClusterDra, APodServedFromDraDevicesHoldsNoDevicePluginGpus) {
  ClusterHarness h;
  h.fake.put(Kind::kNodes, node_object("dra-1", 0));
  h.fake.put(Kind::kNodes, node_object("gpu-1", 4));
  h.fake.put(Kind::kResourceSlices, resource_slice_object("dra-1", 4));
  h.fake.put(Kind::kDeviceClasses, device_class_object());
  auto served = kube::testing::pod_object("ml", "dra-pod", "u-dra", 2, "dra-1");
  served["status"]["extendedResourceClaimStatus"] = {
      {"resourceClaimName", "dra-pod-extended-resources-x"},
      {"requestMappings", nlohmann::json::array({{{"containerName", "main"},
                                                  {"resourceName", "nvidia.com/gpu"},
                                                  {"requestName", "container-0-request-0"}}})}};
  h.fake.put(Kind::kPods, served);
  h.fake.put(Kind::kPods, kube::testing::pod_object("ml", "dp-pod", "u-dp", 2, "gpu-1"));
  h.start();
  ASSERT_TRUE(h.wait_ready()) << *h.cluster->not_ready();
  ASSERT_TRUE(eventually([&] {
    const auto snap = h.state.snapshot();
    return snap.find("dra-1") && snap.find("dra-1")->claims.count("u-dra") && snap.find("gpu-1") &&
           snap.find("gpu-1")->claims.count("u-dp");
  }));
  const auto snap = h.state.snapshot();
  EXPECT_EQ(snap.find("dra-1")->placed.gpus_used("nvidia.com/gpu"), 0)
      << "a pod whose GPUs are a DRA claim counted as device-plugin GPUs on a node that has none";
  EXPECT_EQ(snap.find("dra-1")->placed.pods, 1) << "it still takes its pod slot";
  EXPECT_EQ(snap.find("gpu-1")->placed.gpus_used("nvidia.com/gpu"), 2) << "a device-plugin pod counts as before";
}

TEST(KubeClusterDra, DraWatchesCountForReadiness) {
  ClusterHarness h;
  h.fake.forbid(Kind::kDeviceClasses, true);
  h.start();
  ASSERT_TRUE(eventually([&] { return h.cluster->dra_served(); }));
  ASSERT_FALSE(h.wait_ready(300ms));
  EXPECT_NE(h.cluster->not_ready()->find("deviceclasses not synced yet"), std::string::npos) << *h.cluster->not_ready();
  h.fake.forbid(Kind::kDeviceClasses, false);
  EXPECT_TRUE(h.wait_ready()) << *h.cluster->not_ready();
}

TEST(KubeClusterDra, AnOldServerWithoutTheGroupIsAskedOnceAndNotAReasonToWait) {
  ClusterHarness h;
  h.fake.serve_dra(false);
  h.fake.put(Kind::kNodes, node_object("gpu-1", 4));
  h.start();
  ASSERT_TRUE(h.wait_ready()) << *h.cluster->not_ready();
  EXPECT_FALSE(h.cluster->dra_served());
  EXPECT_TRUE(h.cluster->dra_inventory()->nodes.empty());
  EXPECT_TRUE(h.cluster->device_classes().empty());
  EXPECT_EQ(static_cast<const engine::DraSource&>(*h.cluster).dra_snapshot(), nullptr) << "DRA not served: no view";
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(h.server.requests("GET", kind_path(Kind::kResourceSlices)).size(), 1u);
  EXPECT_TRUE(h.server.requests("GET", kind_path(Kind::kResourceClaims)).empty());
  EXPECT_TRUE(h.server.requests("GET", kind_path(Kind::kDeviceClasses)).empty());
  for (const auto& [resource, status] : h.cluster->watch_status()) EXPECT_NE(resource, "resourceslices");
}

TEST(KubeClusterDra, ARoleWithoutDraRightsLeavesDraOut) {
  ClusterHarness h;
  h.fake.forbid(Kind::kResourceSlices, true);
  h.fake.put(Kind::kResourceSlices, resource_slice_object("dra-1", 4));
  h.start();
  ASSERT_TRUE(h.wait_ready()) << *h.cluster->not_ready();
  EXPECT_FALSE(h.cluster->dra_served());
  EXPECT_TRUE(h.cluster->dra_inventory()->nodes.empty());
  EXPECT_EQ(static_cast<const engine::DraSource&>(*h.cluster).dra_snapshot(), nullptr) << "DRA left out: no view";
  EXPECT_EQ(h.server.requests("GET", kind_path(Kind::kResourceSlices)).size(), 1u);
}

}  // namespace
}  // namespace extender::sources

namespace extender::sources {
namespace {

TEST(KubeClusterDra, AClaimEventThatChangesNoAllocationCostsNoRebuild) {
  ClusterHarness h;
  h.fake.put(Kind::kNodes, node_object("dra-1", 0));
  h.fake.put(Kind::kResourceSlices, resource_slice_object("dra-1", 4));
  h.fake.put(Kind::kDeviceClasses, device_class_object());
  h.start();
  ASSERT_TRUE(h.wait_ready()) << *h.cluster->not_ready();
  ASSERT_TRUE(eventually([&] { return h.cluster->dra_served() && h.cluster->dra_inventory()->node("dra-1"); }));
  const auto before = h.cluster->dra_inventory();
  // Any namespace user can update an unallocated claim: 30 updates, no allocation.
  for (int i = 1; i <= 30; ++i) h.fake.put(Kind::kResourceClaims, resource_claim_object("ml", "churn", "c-churn", i));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(h.cluster->dra_inventory(), before) << "an unallocated claim's updates rebuilt the inventory";
  h.fake.put(Kind::kResourceClaims, resource_claim_object("ml", "churn", "c-churn", 1, "dra-1", {"gpu-1"}));
  ASSERT_TRUE(eventually([&] { return h.cluster->dra_inventory()->node("dra-1")->allocated_gpus() == 1; }));
  EXPECT_NE(h.cluster->dra_inventory(), before);
  const auto allocated = h.cluster->dra_inventory();
  h.fake.put(Kind::kResourceClaims, resource_claim_object("ml", "other", "c-other", 2));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(h.cluster->dra_inventory(), allocated) << "another unallocated claim";
  h.fake.remove(Kind::kResourceClaims, "ml/churn");
  ASSERT_TRUE(eventually([&] { return h.cluster->dra_inventory()->node("dra-1")->allocated_gpus() == 0; }))
      << "deleting an allocated claim frees its device";
}

TEST(KubeClusterDra, AnAllocationCopiesOnlyItsNodeAndSurvivesARebuild) {
  ClusterHarness h;
  for (const char* n : {"dra-1", "dra-2"}) {
    h.fake.put(Kind::kNodes, node_object(n, 0));
    h.fake.put(Kind::kResourceSlices, resource_slice_object(n, 4));
  }
  h.fake.put(Kind::kDeviceClasses, device_class_object());
  h.start();
  ASSERT_TRUE(h.wait_ready()) << *h.cluster->not_ready();
  ASSERT_TRUE(eventually([&] { return h.cluster->dra_served() && h.cluster->dra_inventory()->nodes.size() == 2; }));
  const auto before = h.cluster->dra_inventory();
  h.fake.put(Kind::kResourceClaims, resource_claim_object("ml", "a", "c-a", 1, "dra-1", {"gpu-1"}));
  ASSERT_TRUE(eventually([&] { return h.cluster->dra_inventory()->node("dra-1")->allocated_gpus() == 1; }));
  const auto after = h.cluster->dra_inventory();
  EXPECT_EQ(after->nodes.at("dra-2"), before->nodes.at("dra-2")) << "a node the claim does not touch is shared";
  EXPECT_EQ(before->node("dra-1")->allocated_gpus(), 0) << "a snapshot already read never changes";

  // A slice event makes the next read rebuild; claims that move meanwhile still count.
  h.fake.put(Kind::kResourceSlices, resource_slice_object("dra-2", 8, "81559Mi", 2));
  h.fake.put(Kind::kResourceClaims, resource_claim_object("ml", "b", "c-b", 1, "dra-2", {"gpu-6"}));
  h.fake.remove(Kind::kResourceClaims, "ml/a");
  ASSERT_TRUE(eventually([&] {
    auto now = h.cluster->dra_inventory();
    return now->node("dra-2")->gpus.size() == 8 && now->node("dra-2")->allocated_gpus() == 1 &&
           now->node("dra-1")->allocated_gpus() == 0;
  }));
  h.fake.put(Kind::kResourceClaims, resource_claim_object("ml", "b", "c-b", 1, "dra-2", {"gpu-7"}));
  ASSERT_TRUE(eventually([&] { return h.cluster->dra_inventory()->node("dra-2")->gpus[7].allocated; }));
  EXPECT_FALSE(h.cluster->dra_inventory()->node("dra-2")->gpus[6].allocated);
}

}  // namespace
}  // namespace extender::sources
