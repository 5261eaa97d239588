#include "extender/state/mixed_gpu_sources.h"

#include <gtest/gtest.h>

#include "support/dra_slices.h"

namespace extender::state {
namespace {

model::NodeSupply node(const std::string& name, std::int64_t gpus) {
  model::NodeSupply n;
  n.name = name;
  if (gpus > 0) n.gpus["nvidia.com/gpu"] = gpus;
  return n;
}

using testing::nvidia_gpu_slice;

TEST(MixedGpuSources, NamesNodesWithDevicePluginAndDraGpus) {
  ClusterState state;
  state.upsert_nodes({node("both", 4), node("plugin", 8), node("dra", 0), node("zero", 0)});
  const model::DraInventory dra =
      model::build_dra_inventory({nvidia_gpu_slice("both", 2), nvidia_gpu_slice("dra", 8), nvidia_gpu_slice("zero", 0),
                                  nvidia_gpu_slice("unknown", 2)},
                                 {});
  const auto found = find_mixed_gpu_sources(state.snapshot(), dra);
  ASSERT_EQ(found, (std::vector<MixedGpuSources>{{"both", "nvidia.com/gpu", 4, 2}}));
  EXPECT_EQ(describe(found[0]).rfind("node both has GPUs from two sources: 4 nvidia.com/gpu allocatable from a device "
                                     "plugin and 2 GPUs published by a DRA driver",
                                     0),
            0u)
      << describe(found[0]);
  EXPECT_TRUE(find_mixed_gpu_sources(state.snapshot(), {}).empty()) << "no DRA: nothing mixed";
}

TEST(MixedGpuSources, TheTrackerReportsEachEpisodeOnce) {
  MixedGpuSourcesTracker tracker;
  const MixedGpuSources a{"a", "nvidia.com/gpu", 4, 2};
  const MixedGpuSources b{"b", "nvidia.com/gpu", 8, 8};
  EXPECT_EQ(tracker.update({a}), std::vector<MixedGpuSources>{a});
  EXPECT_TRUE(tracker.update({a}).empty()) << "still open: not again";
  EXPECT_EQ(tracker.update({a, b}), std::vector<MixedGpuSources>{b});
  EXPECT_TRUE(tracker.update({}).empty()) << "both end";
  EXPECT_EQ(tracker.update({a}), std::vector<MixedGpuSources>{a}) << "a new episode";
}

}  // namespace
}  // namespace extender::state
