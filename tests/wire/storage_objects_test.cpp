#include "extender/wire/storage_objects.h"
#include "extender/wire/k8s_objects.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace extender::wire {
namespace {

using nlohmann::json;

TEST(StorageObjects, CsiDriver) {
  auto d = decode_csi_driver(json::parse(R"({"metadata":{"name":"topolvm.io"},"spec":{"storageCapacity":true}})"));
  ASSERT_TRUE(d) << d.message();
  EXPECT_EQ(d->name, "topolvm.io");
  EXPECT_TRUE(d->storage_capacity);
  auto plain = decode_csi_driver(json::parse(R"({"metadata":{"name":"x"},"spec":{}})"));
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->storage_capacity);
  EXPECT_FALSE(decode_csi_driver(json::parse(R"({"metadata":{"name":"x"},"spec":{"storageCapacity":"yes"}})")));
}

TEST(StorageObjects, StorageCapacity) {
  auto c = decode_storage_capacity(json::parse(R"({
    "metadata":{"name":"csisc-1","namespace":"topolvm-system"},
    "storageClassName":"topolvm-provisioner",
    "nodeTopology":{"matchLabels":{"topology.topolvm.io/node":"n1"},
                    "matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]},
    "capacity":"100Gi","maximumVolumeSize":"50Gi"})"));
  ASSERT_TRUE(c) << c.message();
  EXPECT_EQ(c->key, "topolvm-system/csisc-1");
  EXPECT_EQ(c->storage_class, "topolvm-provisioner");
  ASSERT_TRUE(c->topology);
  ASSERT_EQ(c->topology->size(), 2u);
  EXPECT_EQ((*c->topology)[0], (model::NodeSelectorRequirement{"topology.topolvm.io/node", "In", {"n1"}}));
  EXPECT_EQ((*c->topology)[1].key, "zone");
  EXPECT_EQ(c->capacity_bytes, std::int64_t{100} << 30);
  EXPECT_EQ(c->max_volume_bytes, std::int64_t{50} << 30);

  auto bare =
      decode_storage_capacity(json::parse(R"({"metadata":{"name":"c","namespace":"n"},"storageClassName":"s"})"));
  ASSERT_TRUE(bare);
  EXPECT_FALSE(bare->topology) << "absent topology selects no node";
  EXPECT_FALSE(bare->capacity_bytes);
  auto all = decode_storage_capacity(json::parse(R"({"metadata":{"name":"c"},"nodeTopology":{}})"));
  ASSERT_TRUE(all && all->topology);
  EXPECT_TRUE(all->topology->empty()) << "an empty topology selects every node";

  for (const char* bad : {R"({"capacity":"lots"})", R"({"capacity":"-1Gi"})", R"({"nodeTopology":[]})",
                          R"({"nodeTopology":{"matchExpressions":{}}})", R"([])"}) {
    EXPECT_FALSE(decode_storage_capacity(json::parse(bad))) << bad;
  }
}

TEST(StorageObjects, StorageClass) {
  auto sc = decode_storage_class(json::parse(R"({
    "metadata":{"name":"topolvm","annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},
    "provisioner":"topolvm.io","parameters":{"topolvm.io/device-class":"ssd"},
    "volumeBindingMode":"WaitForFirstConsumer"})"));
  ASSERT_TRUE(sc) << sc.message();
  EXPECT_EQ(sc->name, "topolvm");
  EXPECT_TRUE(sc->is_default);
  EXPECT_EQ(sc->provisioner, "topolvm.io");
  EXPECT_EQ(sc->parameters.at("topolvm.io/device-class"), "ssd");
  EXPECT_EQ(sc->binding_mode, "WaitForFirstConsumer");
}

// As local-static-provisioner publishes it (v2.7), one Available and one Bound.
TEST(StorageObjects, LocalPersistentVolume) {
  auto pv = decode_persistent_volume(json::parse(R"({
    "apiVersion":"v1","kind":"PersistentVolume",
    "metadata":{"annotations":{"pv.kubernetes.io/provisioned-by":"local-volume-provisioner-node1-8b5c"},
      "finalizers":["kubernetes.io/pv-protection"],"labels":{"kubernetes.io/hostname":"node1"},
      "name":"local-pv-5d2b4c0e","resourceVersion":"1234","uid":"7c1d"},
    "spec":{"accessModes":["ReadWriteOnce"],"capacity":{"storage":"368Gi"},
      "local":{"path":"/mnt/fast-disks/nvme0n1"},
      "nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[
        {"key":"kubernetes.io/hostname","operator":"In","values":["node1"]}]}]}},
      "persistentVolumeReclaimPolicy":"Delete","storageClassName":"fast-disks","volumeMode":"Filesystem"},
    "status":{"phase":"Available"}})"));
  ASSERT_TRUE(pv) << pv.message();
  EXPECT_EQ(pv->name, "local-pv-5d2b4c0e");
  EXPECT_EQ(pv->storage_class, "fast-disks");
  EXPECT_EQ(pv->bytes, std::int64_t{368} << 30);
  EXPECT_EQ(pv->access_modes, model::kReadWriteOnce);
  EXPECT_FALSE(pv->block);
  EXPECT_TRUE(pv->local);
  ASSERT_TRUE(pv->node_affinity);
  ASSERT_EQ(pv->node_affinity->size(), 1u);
  EXPECT_EQ((*pv->node_affinity)[0].match_expressions,
            (std::vector<model::NodeSelectorRequirement>{{"kubernetes.io/hostname", "In", {"node1"}}}));
  EXPECT_EQ(pv->phase, "Available");
  EXPECT_EQ(pv->claim, "");
  EXPECT_FALSE(pv->terminating);

  auto bound = decode_persistent_volume(json::parse(R"({
    "metadata":{"name":"local-pv-1","deletionTimestamp":"2026-01-01T00:00:00Z"},
    "spec":{"accessModes":["ReadWriteOnce","ReadOnlyMany","Unheard"],"capacity":{"storage":"100Gi"},
      "hostPath":{"path":"/data/1"},"volumeMode":"Block",
      "claimRef":{"apiVersion":"v1","kind":"PersistentVolumeClaim","name":"data","namespace":"ml",
                  "resourceVersion":"9","uid":"c1"}},
    "status":{"phase":"Bound"}})"));
  ASSERT_TRUE(bound) << bound.message();
  EXPECT_EQ(bound->access_modes, model::kReadWriteOnce | model::kReadOnlyMany) << "an unknown mode is ignored";
  EXPECT_TRUE(bound->block);
  EXPECT_TRUE(bound->local);
  EXPECT_FALSE(bound->node_affinity);
  EXPECT_EQ(bound->claim, "ml/data");
  EXPECT_EQ(bound->phase, "Bound");
  EXPECT_TRUE(bound->terminating);

  auto network = decode_persistent_volume(json::parse(R"({"metadata":{"name":"nfs"},"spec":{"nfs":{"server":"x"}}})"));
  ASSERT_TRUE(network);
  EXPECT_FALSE(network->local);

  for (const char* bad : {R"([])", R"({"spec":[]})", R"({"spec":{"capacity":{"storage":"lots"}}})",
                          R"({"spec":{"accessModes":"ReadWriteOnce"}})", R"({"spec":{"accessModes":[1]}})",
                          R"({"spec":{"local":"/mnt"}})", R"({"spec":{"nodeAffinity":{"required":[]}}})",
                          R"({"spec":{"nodeAffinity":{"required":{"nodeSelectorTerms":{}}}}})",
                          R"({"spec":{"claimRef":"ml/data"}})", R"({"status":{"phase":1}})"}) {
    EXPECT_FALSE(decode_persistent_volume(json::parse(bad))) << bad;
  }
}

TEST(StorageObjects, ClaimModesAndVolume) {
  auto pvc = decode_claim(json::parse(R"({"metadata":{"uid":"u","name":"data","namespace":"ml"},
    "spec":{"accessModes":["ReadWriteOncePod"],"volumeMode":"Block","storageClassName":"fast-disks",
            "volumeName":"local-pv-1","resources":{"requests":{"storage":"10Gi"}}}})"));
  ASSERT_TRUE(pvc) << pvc.message();
  EXPECT_EQ(pvc->info.access_modes, model::kReadWriteOncePod);
  EXPECT_TRUE(pvc->info.block);
  EXPECT_EQ(pvc->info.volume, "local-pv-1");
  EXPECT_TRUE(pvc->info.bound);
  auto plain =
      decode_claim(json::parse(R"({"metadata":{"uid":"u"},"spec":{"accessModes":["ReadWriteOnce","ReadWriteMany"]}})"));
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->info.access_modes, model::kReadWriteOnce | model::kReadWriteMany);
  EXPECT_FALSE(plain->info.block);
  EXPECT_FALSE(decode_claim(json::parse(R"({"spec":{"accessModes":{}}})")));
  EXPECT_FALSE(decode_claim(json::parse(R"({"spec":{"volumeMode":true}})")));
}

}  // namespace
}  // namespace extender::wire
