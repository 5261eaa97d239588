#include "extender/engine/engine_builder.h"

#include <gtest/gtest.h>

#include "support/engine_harness.h"

namespace extender::engine {
namespace {

// One source of all four ports, as sources::KubeCluster is.
struct OneCluster final : PodSource, ClaimSource, DraSource, Gate {
  std::optional<model::Pod> pending_pod(const std::string&) const override { return std::nullopt; }
  Result<std::optional<model::Pod>> fetch_pod(const std::string&, const std::string&) const override {
    return std::optional<model::Pod>{};
  }
  std::optional<model::ClaimInfo> claim(const std::string&, const std::string&) const override { return std::nullopt; }
  std::string default_storage_class() const override { return ""; }
  std::shared_ptr<const model::DraInventory> dra_snapshot() const override { return nullptr; }
  std::vector<model::DeviceClass> dra_device_classes() const override { return {}; }
  std::shared_ptr<const policy::DraClasses> dra_classes() const override { return nullptr; }
  std::optional<std::string> not_ready() const override { return std::nullopt; }
};

TEST(EngineBuilder, TheRequiredPartsAloneLeaveEveryOptionalPortAtItsDefault) {
  testing::EngineHarness h;
  const EngineBuilder b(h.cfg.extender_options(), h.state, h.demands, h.local_binder);
  const ExtenderDeps& d = b.deps();
  EXPECT_EQ(d.state, &h.state);
  EXPECT_EQ(d.demands, &h.demands);
  EXPECT_EQ(d.binder, &h.local_binder);
  EXPECT_EQ(d.request_nodes, nullptr);
  EXPECT_EQ(d.pods, nullptr);
  EXPECT_EQ(d.claims, nullptr);
  EXPECT_EQ(d.dra, nullptr);
  EXPECT_EQ(d.gate, nullptr);
  EXPECT_EQ(d.clock, nullptr);
  EXPECT_EQ(d.verdicts, nullptr);
}

TEST(EngineBuilder, AClusterIsEveryKubernetesPortAndALaterGateOverridesIt) {
  testing::EngineHarness h;
  OneCluster cluster;
  EngineBuilder b(h.cfg.extender_options(), h.state, h.demands, h.local_binder);
  b.cluster(&cluster);
  EXPECT_EQ(b.deps().pods, static_cast<const PodSource*>(&cluster));
  EXPECT_EQ(b.deps().claims, static_cast<const ClaimSource*>(&cluster));
  EXPECT_EQ(b.deps().dra, static_cast<const DraSource*>(&cluster));
  EXPECT_EQ(b.deps().gate, static_cast<const Gate*>(&cluster));
  b.gate(&h.gate);
  EXPECT_EQ(b.deps().gate, &h.gate);
  EXPECT_EQ(b.deps().pods, static_cast<const PodSource*>(&cluster));
  b.cluster(static_cast<const OneCluster*>(nullptr));
  EXPECT_EQ(b.deps().pods, nullptr);
  EXPECT_EQ(b.deps().gate, nullptr);
}

}  // namespace
}  // namespace extender::engine
