#include "extender/policy/packing.h"

#include <gtest/gtest.h>

#include <set>

namespace extender::policy {
namespace {

TEST(Packing, EveryStrategyHasOneEntryAndItsNameParsesBack) {
  std::set<PackingStrategy> seen;
  std::vector<std::string> names;
  for (const auto& p : packing_policies()) {
    EXPECT_TRUE(seen.insert(p.strategy).second) << p.name;
    EXPECT_EQ(&packing_policy(p.strategy), &p);
    EXPECT_EQ(parse_packing(p.name), p.strategy);
    EXPECT_STREQ(packing_name(p.strategy), p.name);
    EXPECT_NE(p.score, nullptr);
    names.push_back(p.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"binpack", "spread", "fragmentation"}));
  EXPECT_FALSE(parse_packing("best-fit"));
}

TEST(Packing, OnlyFragmentationReadsTheMixRanksEveryPodAndChoosesSharesByFragmentation) {
  for (const auto& p : packing_policies()) {
    const bool fragmentation = p.strategy == PackingStrategy::kFragmentation;
    EXPECT_EQ(p.needs_shape_mix, fragmentation) << p.name;
    EXPECT_EQ(p.ranks_every_pod, fragmentation) << p.name;
    EXPECT_EQ(p.share_device == ShareDevice::kLeastFragmentation, fragmentation) << p.name;
  }
}

TEST(Packing, BinpackAndSpreadRankTheSameFillOppositeWays) {
  model::NodeSupply empty, busy;
  empty.name = "empty";
  empty.gpus["nvidia.com/gpu"] = 8;
  busy = empty;
  busy.name = "busy";
  model::NodeUsage idle, used;
  used.gpus["nvidia.com/gpu"] = 6;
  const Candidate candidates[] = {{&empty, &idle}, {&busy, &used}};
  model::PodDemand pod;
  pod.gpus["nvidia.com/gpu"] = 1;
  EXPECT_EQ(gpu_packing_scores(pod, candidates, PackingStrategy::kBinpack), (std::vector<std::int64_t>{0, 10}));
  EXPECT_EQ(gpu_packing_scores(pod, candidates, PackingStrategy::kSpread), (std::vector<std::int64_t>{10, 0}));
}

}  // namespace
}  // namespace extender::policy
