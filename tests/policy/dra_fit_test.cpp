#include "extender/policy/dra_fit.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "support/nvidia_dra_devices.h"

namespace extender::policy {
namespace {

const char* kGpuClass = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'";

std::shared_ptr<const DraClasses> compiled(const std::vector<model::DeviceClass>& classes) {
  return std::make_shared<const DraClasses>(classes);
}

model::PodDemand demand(std::int64_t gpus) {
  model::PodDemand p;
  p.uid = "u";
  p.gpus["nvidia.com/gpu"] = gpus;
  p.cpu_milli = 500;
  return p;
}

model::NodeSupply supply(const std::string& name, std::int64_t allocatable = 0) {
  model::NodeSupply n;
  n.name = name;
  if (allocatable > 0) n.gpus["nvidia.com/gpu"] = allocatable;
  return n;
}

TEST(DraFit, JudgesDraServedResourcesByDevicesAndTheRestByCheckFit) {
  auto inv = std::make_shared<const model::DraInventory>(
      model::build_dra_inventory({testing::nvidia_gpus("dra4", 4), testing::nvidia_gpus("mixed", 4)}, {}));
  const auto classes = compiled({{"gpu.nvidia.com", {kGpuClass}, "nvidia.com/gpu"}});
  const model::PodDemand pod = demand(2);
  DraFit fit(pod, inv, classes);
  ASSERT_FALSE(fit.empty());

  EXPECT_EQ(fit.dra_resources(supply("dra4")), std::vector<std::string>{"nvidia.com/gpu"});
  EXPECT_TRUE(fit.dra_resources(supply("mixed", 4)).empty()) << "device-plugin allocatable: decided as before";
  EXPECT_TRUE(fit.dra_resources(supply("other")).empty()) << "not a DRA node";
  model::NodeSupply unreadable = supply("dra4");
  unreadable.problems["nvidia.com/gpu"] = "x";
  EXPECT_TRUE(fit.dra_resources(unreadable).empty()) << "an unreadable value is reported as before";

  Fit on_dra = fit.check(pod, supply("dra4"), {});
  EXPECT_EQ(on_dra.verdict, Verdict::kFits) << format_reason(on_dra.reason);
  EXPECT_FALSE(on_dra.allocation.gpus.contains("nvidia.com/gpu")) << "no device-plugin GPUs held";
  EXPECT_EQ(on_dra.allocation.cpu_milli, 500) << "the rest is held as before";

  const model::PodDemand big = demand(5);
  DraFit big_fit(big, inv, classes);
  Fit short_fit = big_fit.check(big, supply("dra4"), {});
  EXPECT_EQ(short_fit.verdict, Verdict::kUnresolvable);
  EXPECT_EQ(short_fit.reason, (FitReason{FitReason::Kind::kDraTooFewDevices, "nvidia.com/gpu", 0, 0, 0,
                                         "nvidia.com/gpu: pod needs 5 gpu.nvidia.com, node has 4 matching devices"}));

  EXPECT_TRUE(fit.eviction_makes_room(pod, supply("dra4"), {}, {})) << "enough devices in total";
  EXPECT_FALSE(big_fit.eviction_makes_room(big, supply("dra4"), {}, {})) << "no eviction adds devices";

  Fit on_mixed = fit.check(pod, supply("mixed", 4), {});
  EXPECT_EQ(on_mixed.verdict, Verdict::kFits);
  EXPECT_EQ(on_mixed.allocation.gpus.at("nvidia.com/gpu"), 2) << "device-plugin GPUs held as before";
}

TEST(DraFit, ScoringViewOffersTheDraGpusAsDevicePluginGpus) {
  model::ResourceSlice with_memory = testing::nvidia_gpus("dra4", 4);
  for (std::size_t i = 0; i < with_memory.devices.size(); ++i) {
    with_memory.devices[i].capacity["gpu.nvidia.com/memory"] = *Quantity::parse(i == 2 ? "40Gi" : "80Gi");
  }
  model::ResourceSlice without_memory = testing::nvidia_gpus("bare2", 2);
  model::ResourceClaim held;
  held.uid = "c";
  held.allocated = true;
  held.results = {{"gpus", model::kNvidiaGpuDriver, "dra4", "gpu-1", false},
                  {"gpus", model::kNvidiaGpuDriver, "dra4", "gpu-3", false},
                  {"gpus", model::kNvidiaGpuDriver, "bare2", "gpu-0", false}};
  auto inv = std::make_shared<const model::DraInventory>(
      model::build_dra_inventory({with_memory, without_memory, testing::nvidia_gpus("mixed", 4)}, {held}));
  const model::PodDemand pod = demand(1);
  DraFit fit(pod, inv, compiled({{"gpu.nvidia.com", {kGpuClass}, "nvidia.com/gpu"}}));
  model::NodeUsage usage;
  usage.cpu_milli = 700;

  model::NodeSupply labelled = supply("dra4");
  labelled.gpu_model = "NVIDIA-H100-80GB-HBM3";
  auto view = fit.scoring_view(labelled, usage);
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->supply.gpu_model, "NVIDIA-H100-80GB-HBM3") << "the node's model, for shapes bound to models";
  EXPECT_EQ(view->supply.gpus.at("nvidia.com/gpu"), 4);
  EXPECT_EQ(view->usage.gpus_used("nvidia.com/gpu"), 2);
  EXPECT_EQ(view->supply.gpu_memory_bytes.at("nvidia.com/gpu"), std::int64_t{40} << 30) << "the smallest device";
  EXPECT_EQ(view->supply.gpu_devices, (model::GpuDevices{"nvidia.com/gpu", 4, std::int64_t{40} << 30}));
  EXPECT_EQ(view->usage.gpu_devices, (model::GpuDeviceUsage{{1, {1, 0, 0}}, {3, {1, 0, 0}}}))
      << "allocated: held whole";
  EXPECT_EQ(view->usage.cpu_milli, 700) << "the rest of the usage as it was";

  auto bare = fit.scoring_view(supply("bare2"), {});
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->supply.gpus.at("nvidia.com/gpu"), 2);
  EXPECT_EQ(bare->usage.gpus_used("nvidia.com/gpu"), 1);
  EXPECT_FALSE(bare->supply.gpu_memory_bytes.contains("nvidia.com/gpu")) << "a device without memory: unknown";

  EXPECT_FALSE(fit.scoring_view(supply("mixed", 4), {})) << "device-plugin allocatable: scored as before";
  EXPECT_EQ(fit.dra_can_serve(supply("dra4")), true);
  EXPECT_EQ(fit.dra_can_serve(supply("mixed", 4)), std::nullopt) << "not DRA-served there";
  EXPECT_EQ(DraFit(demand(3), inv, compiled({{"gpu.nvidia.com", {kGpuClass}, "nvidia.com/gpu"}}))
                .dra_can_serve(supply("bare2")),
            false)
      << "two devices for three";
  EXPECT_FALSE(fit.scoring_view(supply("other"), {})) << "not a DRA node";
}

TEST(DraFit, TakeScoringViewMovesTheUsageOnlyWhenItGivesAView) {
  model::ResourceClaim held;
  held.uid = "c";
  held.allocated = true;
  held.results = {{"gpus", model::kNvidiaGpuDriver, "dra4", "gpu-1", false}};
  auto inv = std::make_shared<const model::DraInventory>(
      model::build_dra_inventory({testing::nvidia_gpus("dra4", 4), testing::nvidia_gpus("mixed", 4)}, {held}));
  const model::PodDemand pod = demand(1);
  DraFit fit(pod, inv, compiled({{"gpu.nvidia.com", {kGpuClass}, "nvidia.com/gpu"}}));
  model::NodeUsage usage;
  usage.cpu_milli = 700;
  usage.gpus["example.com/other"] = 1;

  struct Case {
    const char* node;
    std::int64_t device_plugin_gpus;
    bool view;
  };
  const Case cases[] = {{"dra4", 0, true}, {"mixed", 4, false}, {"other", 0, false}};
  for (const auto& c : cases) {
    const auto copied = fit.scoring_view(supply(c.node, c.device_plugin_gpus), usage);
    model::NodeUsage taken = usage;
    const auto moved = fit.take_scoring_view(supply(c.node, c.device_plugin_gpus), taken);
    ASSERT_EQ(moved.has_value(), c.view) << c.node;
    ASSERT_EQ(copied.has_value(), c.view) << c.node;
    if (c.view) {
      EXPECT_EQ(moved->supply, copied->supply) << c.node;
      EXPECT_EQ(moved->usage, copied->usage) << c.node;
      EXPECT_EQ(moved->usage.cpu_milli, 700) << c.node;
    } else {
      EXPECT_EQ(taken, usage) << c.node << ": untouched without a view";
    }
  }
}

TEST(DraFit, EmptyWhenNoClassBacksTheResource) {
  auto inv =
      std::make_shared<const model::DraInventory>(model::build_dra_inventory({testing::nvidia_gpus("dra4", 4)}, {}));
  const model::PodDemand pod = demand(2);
  EXPECT_TRUE(DraFit(pod, inv, compiled({{"gpu.nvidia.com", {kGpuClass}, ""}})).empty());
  DraFit none(pod, inv, compiled({}));
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.check(pod, supply("dra4"), {}).verdict, Verdict::kUnresolvable) << "check_fit alone";
}

}  // namespace
}  // namespace extender::policy
