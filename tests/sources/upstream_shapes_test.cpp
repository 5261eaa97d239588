// The daemon on the objects the storage and GPU systems it reads publish, as their own sources
// and charts make them (tests/fixtures/upstream/*.json; each file's "mirrors" names the upstream
// files and versions): csi-baremetal on its chart's defaults (node ids from its node
// controller's annotation, the default ANY class, its AvailableCapacities with omitted zero sizes
// and taint labels, a namespaced Volume); CSIStorageCapacity as external-provisioner writes it for
// TopoLVM, OpenEBS LocalPV-LVM and OpenEBS LocalPV-ZFS; NVIDIA's DRA slices without `index`, with
// static MIG devices. The daemon runs with its default configuration throughout.
#include <gtest/gtest.h>

#include "support/engine_fixture.h"
#include "support/files.h"

namespace extender::engine {
namespace {

using kube::testing::claim_object;
using kube::testing::eventually;
using kube::testing::json;
using kube::testing::Kind;
using kube::testing::pod_object;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

// Puts every object of a fixture into the fake API server, by its kind.
void put_fixture(kube::testing::FakeCluster& fake, const std::string& file) {
  const json f = json::parse(extender::testing::fixture("upstream/" + file));
  ASSERT_FALSE(f.at("mirrors").empty()) << file << " names what it mirrors";
  const std::map<std::string, Kind> kinds = {
      {"v1/Node", Kind::kNodes},
      {"storage.k8s.io/v1/StorageClass", Kind::kClasses},
      {"storage.k8s.io/v1/CSIDriver", Kind::kCsiDrivers},
      {"storage.k8s.io/v1/CSIStorageCapacity", Kind::kCapacities},
      {"csi-baremetal.dell.com/v1/AvailableCapacity", Kind::kAvailableCapacities},
      {"csi-baremetal.dell.com/v1/AvailableCapacityReservation", Kind::kCapacityReservations},
      {"csi-baremetal.dell.com/v1/Volume", Kind::kBaremetalVolumes},
      {"resource.k8s.io/v1/ResourceSlice", Kind::kResourceSlices},
      {"resource.k8s.io/v1/DeviceClass", Kind::kDeviceClasses},
  };
  for (const json& o : f.at("objects")) {
    const std::string key = o.at("apiVersion").get<std::string>() + "/" + o.at("kind").get<std::string>();
    auto kind = kinds.find(key);
    ASSERT_NE(kind, kinds.end()) << file << ": " << key;
    fake.put(kind->second, o);
  }
}

class UpstreamShapes : public kube::testing::EngineFixture {
 protected:
  void add_pod(const std::string& ns, const std::string& name, const std::string& claim, const std::string& cls,
               const std::string& size) {
    h_.fake.put(Kind::kClaims, claim_object(ns, claim, "c-" + claim, cls, size));
    json pod = pod_object(ns, name, "uid-" + name, 0);
    pod["spec"]["volumes"] = json::array({{{"name", "v"}, {"persistentVolumeClaim", {{"claimName", claim}}}}});
    h_.fake.put(Kind::kPods, pod);
    ASSERT_TRUE(eventually([&] { return h_.cluster->pending_pod("uid-" + name) && h_.cluster->claim(ns, claim); }));
  }
  std::vector<std::string> passed(const FilterAnswer& a) {
    EXPECT_TRUE(a.result.error.empty()) << a.result.error;
    std::vector<std::string> out;
    for (auto name : a.result.node_names.value_or(std::vector<std::string_view>{})) out.emplace_back(name);
    return out;
  }
  std::vector<std::string> devices(const model::Pool* pool) {
    std::vector<std::string> out;
    if (pool) {
      for (const auto& d : pool->devices) out.push_back(d.name);
    }
    return out;
  }
};

// csi-baremetal's chart defaults: bm-a named by its uuid annotation, bm-b (not annotated yet) by
// its UID; the default class csi-baremetal-sc (ANY) served from a whole HDD first; an AC whose
// Size is omitted (0, its drive taken) or tainted NoSchedule offers nothing; the namespaced
// Volume counts for its node.
TEST_F(UpstreamShapes, CsiBaremetalOnItsChartDefaults) {
  put_fixture(h_.fake, "csi-baremetal.json");
  start();
  ASSERT_TRUE(eventually([&] { return pool_of("bm-a", "csi-baremetal:HDD") && pool_of("bm-b", "csi-baremetal:HDD"); }));
  EXPECT_EQ(devices(pool_of("bm-a", "csi-baremetal:HDD")),
            (std::vector<std::string>{"0f6b9d2e-1c4a-4e8b-b3f7-2a9c5d1e8f01", "2b8d9f40-3e6c-40ad-b5f9-4c1e7f3a0b03"}))
      << "the tainted AC is not offered; the one of Size 0 is, with no room";
  EXPECT_EQ(pool_of("bm-a", "csi-baremetal:HDD")->capacity_bytes, 100 * kGiB);
  EXPECT_EQ(devices(pool_of("bm-b", "csi-baremetal:HDD")),
            std::vector<std::string>{"5e1a2c73-6b9f-43d0-a8c2-7f4b0c6d3e06"});
  EXPECT_TRUE(eventually([&] {
    snap_ = h_.state.snapshot();
    return snap_.find("bm-a")->placed.volumes == 1;
  })) << "the namespaced Volume counts for its node (volume balance)";

  add_pod("team-a", "trainer", "scratch", "csi-baremetal-sc", "40Gi");
  EXPECT_EQ(passed(filter("trainer", {"bm-a", "bm-b"})), (std::vector<std::string>{"bm-a", "bm-b"}));
  const auto acr = h_.fake.object(Kind::kCapacityReservations, "team-a-trainer");
  ASSERT_TRUE(acr) << "named <namespace>-<pod>, as csi-baremetal's extender names it";
  EXPECT_EQ((*acr)["spec"]["Namespace"], "team-a");
  EXPECT_EQ((*acr)["spec"]["Status"], "RESERVED");
  EXPECT_EQ((*acr)["spec"]["NodeRequests"]["Reserved"],
            json({"3a1f6f0e-2b8c-4d52-9a47-5f1c0b7e2d11", "8e1f7c03-uid-bm-b"}))
      << "bm-a by its annotation, bm-b by its UID";
  const json& request = (*acr)["spec"]["ReservationRequests"][0];
  EXPECT_EQ(request["CapacityRequest"]["Name"], "scratch") << "CreateVolume looks the request up by the claim's name";
  EXPECT_EQ(request["CapacityRequest"]["StorageClass"], "ANY");
  EXPECT_EQ(request["Reservations"],
            json({"0f6b9d2e-1c4a-4e8b-b3f7-2a9c5d1e8f01", "5e1a2c73-6b9f-43d0-a8c2-7f4b0c6d3e06"}))
      << "an HDD on each node: not bm-a's smaller NVMe drive, nor its tainted HDD, nor its group";
}

// external-provisioner's objects: nodeTopology.matchLabels holds every topology key the driver
// reports (OpenEBS LVM: kubernetes.io/hostname and openebs.io/nodename; OpenEBS ZFS with its
// chart default: every node label; TopoLVM: topology.topolvm.io/node), in the provisioner's own
// namespace, without maximumVolumeSize.
TEST_F(UpstreamShapes, CsiStorageCapacityAsExternalProvisionerWritesIt) {
  put_fixture(h_.fake, "csistoragecapacity.json");
  start();
  ASSERT_TRUE(eventually([&] {
    return pool_of("t-1", "topolvm-provisioner") && pool_of("l-1", "openebs-lvmpv") && pool_of("z-1", "openebs-zfspv");
  }));
  EXPECT_EQ(pool_of("t-1", "topolvm-provisioner")->published_bytes, 102396 * (std::int64_t{1} << 20));
  EXPECT_EQ(pool_of("t-1", "topolvm-provisioner")->source, "CSIStorageCapacity topolvm-system/csisc-7xk2p");
  EXPECT_EQ(pool_of("l-1", "openebs-lvmpv")->published_bytes, 200 * kGiB);
  EXPECT_EQ(pool_of("l-1", "openebs-lvmpv")->max_volume_bytes, 0) << "no maximumVolumeSize: no per-volume limit";
  EXPECT_EQ(pool_of("l-2", "openebs-lvmpv"), nullptr) << "an object selects a node only when every key matches";
  EXPECT_EQ(pool_of("z-1", "openebs-zfspv")->published_bytes, 300 * kGiB);
  EXPECT_EQ(pool_of("l-1", "openebs-zfspv"), nullptr);

  add_pod("ml", "p1", "data", "openebs-lvmpv", "150Gi");
  EXPECT_EQ(passed(filter("p1", {"l-1", "l-2", "t-1"})), std::vector<std::string>{"l-1"});
}

// NVIDIA's kubelet plugin since v25.8.0: full GPUs without index, static MIG devices whose parent
// is not published. The GPUs count, the MIG devices are partitions, none is a GPU twice.
TEST_F(UpstreamShapes, NvidiaDraSlicesWithoutIndexAndWithMig) {
  h_.fake.put(Kind::kNodes, kube::testing::node_object("worker-1", 0));
  put_fixture(h_.fake, "nvidia-dra.json");
  start();
  ASSERT_TRUE(eventually([&] { return h_.cluster->dra_inventory() && h_.cluster->dra_inventory()->node("worker-1"); }));
  const auto inventory = h_.cluster->dra_inventory();
  const model::NodeDra* node = inventory->node("worker-1");
  ASSERT_EQ(node->gpus.size(), 2u);
  EXPECT_EQ(node->gpus[0].device.name, "gpu-0");
  EXPECT_EQ(node->gpus[1].device.name, "gpu-1");
  EXPECT_EQ(node->gpus[0].index, -1) << "no index attribute";
  EXPECT_EQ(node->gpus[0].memory_bytes, 40 * kGiB);
  ASSERT_EQ(node->partitions.size(), 4u);
  for (const auto& p : node->partitions) EXPECT_EQ(p.type, "mig") << p.device.name;
  EXPECT_EQ(h_.cluster->device_classes().size(), 3u);
}

}  // namespace
}  // namespace extender::engine
