#include "extender/wire/storage_objects.h"

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

  auto bare = decode_storage_capacity(json::parse(R"({"metadata":{"name":"c","namespace":"n"},"storageClassName":"s"})"));
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

}  // namespace
}  // namespace extender::wire
