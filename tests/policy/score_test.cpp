#include "extender/policy/score.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace extender::policy {
namespace {

using model::Allocation;
using model::NodeSupply;
using model::NodeUsage;
using model::PodDemand;

struct NodeSpec {
  std::int64_t gpus;
  std::int64_t gpus_used;
  std::int64_t volumes;
};

struct Fixture {
  std::vector<NodeSupply> nodes;
  std::vector<NodeUsage> usages;
  std::vector<Candidate> candidates;

  explicit Fixture(const std::vector<NodeSpec>& specs) {
    nodes.reserve(specs.size());
    usages.reserve(specs.size());
    for (const auto& s : specs) {
      NodeSupply n;
      n.gpus["nvidia.com/gpu"] = s.gpus;
      nodes.push_back(n);
    }
    for (std::size_t i = 0; i < specs.size(); ++i) {
      NodeUsage u;
      Allocation a;
      a.gpus["nvidia.com/gpu"] = specs[i].gpus_used;
      for (std::int64_t v = 0; v < specs[i].volumes; ++v) a.volumes.push_back({"v", "local", "", 1, "", ""});
      u.add(a);
      usages.push_back(u);
      candidates.push_back({&nodes[i], &usages.back()});
    }
  }
};

PodDemand pod(std::int64_t gpus, int volumes) {
  PodDemand d;
  if (gpus) d.gpus["nvidia.com/gpu"] = gpus;
  for (int i = 0; i < volumes; ++i) d.volumes.push_back({"v", "local", "local", 1, false, "", false, "", 0, false, ""});
  return d;
}

using Scores = std::vector<std::int64_t>;

TEST(VolumeBalance, FewerVolumesRankHigher) {
  struct Case {
    const char* what;
    std::vector<std::int64_t> volumes;
    Scores expected;
  };
  const Case cases[] = {
      {"min-max over the candidates", {0, 5, 10}, {10, 5, 0}},
      {"rounding half away from zero", {0, 1, 2, 3, 4}, {10, 8, 5, 3, 0}},  // 7.5 -> 8, 2.5 -> 3
      {"one candidate", {7}, {10}},
      {"all equal", {3, 3, 3}, {10, 10, 10}},
      {"no volumes anywhere", {0, 0}, {10, 10}},
      {"thirds", {0, 1, 3}, {10, 7, 0}},  // 10*2/3 = 6.67 -> 7
  };
  for (const auto& c : cases) {
    std::vector<NodeSpec> specs;
    for (auto v : c.volumes) specs.push_back({0, 0, v});
    Fixture f(specs);
    EXPECT_EQ(volume_balance_scores(f.candidates), c.expected) << c.what;
  }
}

TEST(GpuPacking, BinpackPrefersFullerNodesAfterPlacement) {
  // After placing 2 GPUs: 2/8 = 0.25, 6/8 = 0.75, 4/4 = 1.0.
  Fixture f({{8, 0, 0}, {8, 4, 0}, {4, 2, 0}});
  EXPECT_EQ(gpu_packing_scores(pod(2, 0), f.candidates, PackingStrategy::kBinpack), (Scores{0, 7, 10}));
  EXPECT_EQ(gpu_packing_scores(pod(2, 0), f.candidates, PackingStrategy::kSpread), (Scores{10, 3, 0}));
}

TEST(GpuPacking, EdgeCases) {
  Fixture one({{8, 3, 0}});
  EXPECT_EQ(gpu_packing_scores(pod(1, 0), one.candidates, PackingStrategy::kBinpack), (Scores{10}));
  Fixture equal({{4, 1, 0}, {8, 3, 0}});  // after placement 2/4 and 4/8: equal ratios
  EXPECT_EQ(gpu_packing_scores(pod(1, 0), equal.candidates, PackingStrategy::kBinpack), (Scores{10, 10}));
}

TEST(GpuPacking, FragmentationTellsApartNodesThatLookAlikeOnTheirGpus) {
  // Every node: 2 devices of 16 GiB, 64 cores free. Scores are shared between candidates alike in
  // everything the ranking reads; these differ in one thing each and must not share.
  struct Row {
    const char* what;
    std::int64_t cpu_milli_b;       // node b's CPU (a: 64 cores)
    std::int64_t cpu_used_b;        // what b's pods take of it (a: none)
    const char* device_resource_b;  // b's devices (a: nvidia.com/gpu)
    std::int64_t mix_gpus;          // the mix: pods of this many whole GPUs
    Scores want;                    // a, b, a again (the best 10, the next distinct 9)
  };
  const Row rows[] = {
      {"the same node twice over", 64000, 0, "nvidia.com/gpu", 1, {10, 10, 10}},
      {"as much CPU free of more: b keeps less free after (best fit)", 128000, 64000, "nvidia.com/gpu", 1, {9, 10, 9}},
      {"b's devices serve another resource: the pod takes none of them, a 2-GPU pod still fits",
       64000,
       0,
       "example.com/gpu",
       2,
       {9, 10, 9}},
  };
  for (const auto& row : rows) {
    std::vector<NodeSupply> nodes(2);
    for (auto& n : nodes) {
      n.gpus["nvidia.com/gpu"] = 2;
      n.gpu_devices = {"nvidia.com/gpu", 2, std::int64_t{16} << 30};
      n.cpu_milli = 64000;
    }
    nodes[1].cpu_milli = row.cpu_milli_b;
    nodes[1].gpu_devices.resource = row.device_resource_b;
    NodeUsage none, used_b;
    Allocation busy;
    busy.cpu_milli = row.cpu_used_b;
    used_b.add(busy);
    const std::vector<Candidate> candidates = {{&nodes[0], &none}, {&nodes[1], &used_b}, {&nodes[0], &none}};
    PodDemand p = pod(1, 0);
    p.cpu_milli = 8000;
    const ShapeMix mix = {{{row.mix_gpus, 0, 0}, 1}};
    EXPECT_EQ(gpu_packing_scores(p, candidates, PackingStrategy::kFragmentation, mix, 0.05), row.want) << row.what;
  }
}

// Nodes a and b: 4 GPUs of 16 GiB and 32 cores each, `cpu_used` of each node's CPU taken; b
// runs a 1-GPU pod (1 GPU of 8 allocated, so 28800 of 32000 makes CPU the scarcer). The
// candidates point into the fixture, which is therefore not copied.
struct ScarceFixture {
  std::vector<NodeSupply> nodes = std::vector<NodeSupply>(2);
  NodeUsage a, b;
  std::vector<Candidate> candidates;
  ScarceFixture(const ScarceFixture&) = delete;
  ScarceFixture& operator=(const ScarceFixture&) = delete;
  explicit ScarceFixture(std::int64_t cpu_used) {
    for (auto& n : nodes) {
      n.gpus["nvidia.com/gpu"] = 4;
      n.gpu_devices = {"nvidia.com/gpu", 4, std::int64_t{16} << 30};
      n.cpu_milli = 32000;
    }
    Allocation host, gpu_pod;
    host.cpu_milli = cpu_used;
    gpu_pod.gpus["nvidia.com/gpu"] = 1;
    a.add(host);
    b.add(host);
    b.add(gpu_pod);
    candidates = {{&nodes[0], &a}, {&nodes[1], &b}};
  }
};

TEST(Fragmentation, WhereCpuIsScarcerAGpuPodsIncreasesAreBinned) {
  // The mix: 2-GPU and 1-GPU pods. A 1-GPU pod leaves both nodes able to hold either (the
  // increase is 0 on each); b ranks first by the tie-break (less GPU free after) unless the
  // increases are binned.
  const ShapeMix even = {{{1, 0, 0}, 1}, {{2, 0, 0}, 1}};
  const ShapeMix multi = {{{1, 0, 0}, 1}, {{2, 0, 0}, 2}};
  struct Row {
    const char* what;
    std::int64_t cpu_used;
    std::int64_t gpus;  // the pod's
    double bin;
    const ShapeMix& mix;
    Scores want;  // a, b
  };
  const Row rows[] = {
      {"CPU scarcer, bins of 2 GPUs: one bin, a tie left to kube-scheduler", 28800, 1, 2, even, {10, 10}},
      {"CPU scarcer, no bins: the tie-break decides", 28800, 1, 0, even, {9, 10}},
      {"GPUs scarcer (no CPU used): the tie-break decides", 0, 1, 2, even, {9, 10}},
      {"a pod without GPUs is never binned", 28800, 0, 2, even, {9, 10}},
      {"a mix mostly of multi-GPU pods is never binned", 28800, 1, 2, multi, {9, 10}},
  };
  for (const auto& row : rows) {
    const ScarceFixture f(row.cpu_used);
    PodDemand p = pod(row.gpus, 0);
    p.cpu_milli = 1000;
    EXPECT_EQ(gpu_packing_scores(p, f.candidates, PackingStrategy::kFragmentation, row.mix, 0, row.bin), row.want)
        << row.what;
  }
}

TEST(Fragmentation, AMixIsMultiGpuHeavyPastHalfItsWeightInShapesOfSeveralGpus) {
  struct Row {
    ShapeMix mix;
    bool heavy;
  };
  const Row rows[] = {
      {{}, false},
      {{{{1, 0, 0}, 1}, {{2, 0, 0}, 1}}, false},
      {{{{1, 0, 0}, 1}, {{2, 0, 0}, 1}, {{8, 0, 0}, 1}}, true},
      {{{{0, 0, 500}, 5}, {{0, 0, 0, 4000}, 3}, {{4, 0, 0}, 7}}, false},
      {{{{0, 0, 500}, 5}, {{4, 0, 0}, 6}}, true},
      {{{{1, 0, 0}, INT64_MAX}, {{8, 0, 0}, INT64_MAX - 1}}, false},  // no overflow
      {{{{1, 0, 0}, INT64_MAX - 1}, {{8, 0, 0}, INT64_MAX}}, true},
  };
  for (std::size_t i = 0; i < std::size(rows); ++i)
    EXPECT_EQ(multi_gpu_heavy(rows[i].mix), rows[i].heavy) << "row " << i;
}

TEST(Fragmentation, BinsKeepIncreasesOfDifferentBinsApart) {
  // The mix: 4-GPU pods, and as many 1-GPU pods (which fit anywhere, so they add nothing). On a
  // (4 free) a 1-GPU pod strands 3 GPUs for the 4-GPU pods (+1.5 per pod of the mix); on b (3
  // free) one fewer (-0.5). A bin is the floor of the increase over its size: 0 and -1 for bins
  // of 2 and of 8, so b still ranks first; a node past the pod's reach ranks last.
  const ScarceFixture f(28800);
  PodDemand p = pod(1, 0);
  p.cpu_milli = 1000;
  const ShapeMix mix = {{{1, 0, 0}, 1}, {{4, 0, 0}, 1}};
  EXPECT_EQ(gpu_packing_scores(p, f.candidates, PackingStrategy::kFragmentation, mix, 0, 2), (Scores{9, 10}));
  EXPECT_EQ(gpu_packing_scores(p, f.candidates, PackingStrategy::kFragmentation, mix, 0, 8), (Scores{9, 10}));
  PodDemand four = pod(4, 0);
  four.cpu_milli = 1000;
  EXPECT_EQ(gpu_packing_scores(four, f.candidates, PackingStrategy::kFragmentation, mix, 0, 8), (Scores{10, 9}))
      << "b cannot take 4 GPUs";
}

TEST(Fragmentation, CpuScarceComparesRequestedCpuWithAllocatedGpus) {
  struct Row {
    const char* what;
    std::int64_t cpu_used;
    bool want;
  };
  const Row rows[] = {
      {"90% of CPU, 1 GPU of 8", 28800, true},
      {"12.5% of CPU, 1 GPU of 8: equal, not scarcer", 4000, false},
      {"no CPU used", 0, false},
  };
  for (const auto& row : rows) EXPECT_EQ(cpu_scarce(ScarceFixture(row.cpu_used).candidates), row.want) << row.what;
  std::vector<NodeSupply> no_cpu(1);
  no_cpu[0].gpus["nvidia.com/gpu"] = 4;
  no_cpu[0].gpu_devices = {"nvidia.com/gpu", 4, std::int64_t{16} << 30};
  const NodeUsage none;
  EXPECT_FALSE(cpu_scarce(std::vector<Candidate>{{&no_cpu[0], &none}})) << "a node that gives no CPU";
}

TEST(GpuPacking, BinpackCountsSharesOnTheDevicesForWholeGpus) {
  // Both nodes: 2 devices of 16 GiB. a holds a 12 GiB share, b nothing.
  std::vector<NodeSupply> nodes(2);
  for (auto& n : nodes) {
    n.gpus["nvidia.com/gpu"] = 2;
    n.gpu_devices = {"nvidia.com/gpu", 2, std::int64_t{16} << 30};
  }
  NodeUsage shared;
  Allocation a;
  a.gpu_devices = {{0, std::int64_t{12} << 30, false}};
  shared.add(a);
  const NodeUsage none;
  const std::vector<Candidate> candidates = {{&nodes[0], &shared}, {&nodes[1], &none}};
  EXPECT_EQ(gpu_packing_scores(pod(1, 0), candidates, PackingStrategy::kBinpack), (Scores{10, 0}))
      << "a is fuller after the placement";
  EXPECT_EQ(gpu_packing_scores(pod(1, 0), candidates, PackingStrategy::kSpread), (Scores{0, 10}));
}

TEST(ScoreCandidates, ScorersApplyByWhatThePodNeeds) {
  Fixture f({{8, 0, 4}, {8, 6, 0}});
  ScoringRules rules;
  // GPU only: binpack picks node 1 (7/8 vs 1/8).
  EXPECT_EQ(score_candidates(pod(1, 0), f.candidates, rules), (Scores{0, 10}));
  // Volumes only: node 1 has fewer volumes.
  EXPECT_EQ(score_candidates(pod(0, 1), f.candidates, rules), (Scores{0, 10}));
  // Nothing managed: no scorer applies, an empty list.
  EXPECT_TRUE(score_candidates(pod(0, 0), f.candidates, rules).empty());
}

TEST(ScoreCandidates, CombinesWithWeights) {
  // Node 0: few volumes, empty GPUs. Node 1: many volumes, busy GPUs. Node 2: in between.
  Fixture f({{8, 0, 0}, {8, 6, 10}, {8, 3, 4}});
  // volume balance: 10, 0, 6; binpack after 1 GPU (1/8, 7/8, 4/8): 0, 10, 5.
  ScoringRules equal;
  EXPECT_EQ(score_candidates(pod(1, 1), f.candidates, equal), (Scores{5, 5, 6}));  // (6+5)/2 = 5.5 -> 6
  ScoringRules volume_heavy{3, 1, PackingStrategy::kBinpack};
  EXPECT_EQ(score_candidates(pod(1, 1), f.candidates, volume_heavy),
            (Scores{8, 3, 6}));  // 30/4=7.5->8, 10/4=2.5->3, 23/4=5.75->6
  ScoringRules spread{1, 1, PackingStrategy::kSpread};
  EXPECT_EQ(score_candidates(pod(1, 1), f.candidates, spread), (Scores{10, 0, 6}));  // spread: 10, 0, 5 -> (6+5)/2
  ScoringRules gpu_off{1, 0, PackingStrategy::kBinpack};
  EXPECT_EQ(score_candidates(pod(1, 1), f.candidates, gpu_off), (Scores{10, 0, 6}));
  ScoringRules all_off{0, 0, PackingStrategy::kBinpack};
  EXPECT_TRUE(score_candidates(pod(1, 1), f.candidates, all_off).empty());
}

TEST(ScoreCandidates, EachScorerOfTheTableIsWeighedByItsOwnWeight) {
  Fixture f({{8, 0, 0}, {8, 6, 10}, {8, 3, 4}});
  const PodDemand p = pod(1, 1);
  std::set<std::string> keys;
  for (const Scorer& scorer : scorers()) {
    EXPECT_TRUE(keys.insert(scorer.weight_key).second) << scorer.weight_key;
    ScoringRules only;
    for (const Scorer& other : scorers()) only.*other.weight = 0;
    EXPECT_TRUE(score_candidates(p, f.candidates, only).empty()) << scorer.weight_key;
    only.*scorer.weight = 3;
    const Scores expected = scorer.applies(p, f.candidates, only) ? scorer.score(p, f.candidates, only, {}) : Scores{};
    EXPECT_EQ(score_candidates(p, f.candidates, only), expected) << scorer.weight_key;
  }
  EXPECT_EQ(keys, (std::set<std::string>{"volume_balance_weight", "capacity_weight", "gpu_packing_weight"}));
}

struct CapacityCase {
  const char* what;
  std::vector<std::pair<std::int64_t, std::int64_t>> pools;  // per node: capacity, used (0 capacity: no pool)
  std::int64_t need;
  bool more_free;
  Scores expected;
};

TEST(CapacityScoring, FreeSpaceLeftAfterPlacementRanksByPreference) {
  const CapacityCase cases[] = {
      {"more free ranks higher", {{100, 0}, {100, 50}, {100, 90}}, 10, true, {10, 4, 0}},
      {"packing: less free ranks higher", {{100, 0}, {100, 50}, {100, 90}}, 10, false, {0, 6, 10}},
      {"a fraction of each pool, not bytes (490 of 1000 free < 90 of 100)", {{1000, 500}, {100, 0}}, 10, true, {0, 10}},
      {"a node without the pool has none free", {{0, 0}, {100, 0}}, 10, true, {0, 10}},
      {"terabytes do not overflow",
       {{std::int64_t{1} << 50, 0}, {std::int64_t{1} << 50, std::int64_t{1} << 49}},
       1,
       true,
       {10, 0}},
  };
  for (const auto& c : cases) {
    std::vector<NodeSupply> nodes(c.pools.size());
    std::vector<NodeUsage> usages(c.pools.size());
    std::vector<Candidate> candidates;
    for (std::size_t i = 0; i < c.pools.size(); ++i) {
      if (c.pools[i].first > 0) nodes[i].pools.push_back({"lvm", c.pools[i].first, {}, 0, "CSIStorageCapacity x", 0});
      Allocation a;
      a.volumes.push_back({"held", "lvm", "", c.pools[i].second, "", ""});
      usages[i].add(a);
      candidates.push_back({&nodes[i], &usages[i]});
    }
    PodDemand p;
    p.volumes.push_back({"v", "lvm", "lvm", c.need, false, "", false, "", 0, false, ""});
    EXPECT_EQ(capacity_scores(p, candidates, c.more_free), c.expected) << c.what;
  }
}

TEST(CapacityScoring, AppliesToPodsWithVolumesInPublishedPoolsOnly) {
  NodeSupply a, b;
  a.pools.push_back({"lvm", 100, {}, 0, "CSIStorageCapacity x", 100});
  b.pools.push_back({"lvm", 100, {}, 0, "CSIStorageCapacity y", 100});
  NodeUsage used;
  Allocation held;
  held.volumes.push_back({"held", "lvm", "", 60, "", ""});
  used.add(held);
  const NodeUsage none;
  std::vector<Candidate> candidates{{&a, &used}, {&b, &none}};
  PodDemand p;
  p.volumes.push_back({"v", "lvm", "lvm", 10, false, "", false, "", 0, false, ""});
  ScoringRules rules;
  rules.volume_balance_weight = 0;
  EXPECT_EQ(score_candidates(p, candidates, rules), (Scores{0, 10})) << "b has more free";
  rules.capacity_more_free = false;
  EXPECT_EQ(score_candidates(p, candidates, rules), (Scores{10, 0}));
  a.pools[0].source.clear();
  b.pools[0].source.clear();
  EXPECT_TRUE(score_candidates(p, candidates, rules).empty()) << "hand-written pools keep today's volume balance alone";
}

TEST(ScoreCandidates, DeterministicAndInRange) {
  Fixture f({{8, 1, 3}, {4, 2, 9}, {16, 15, 1}, {2, 0, 0}, {8, 7, 5}});
  ScoringRules rules{2, 3, PackingStrategy::kBinpack};
  Scores first = score_candidates(pod(1, 2), f.candidates, rules);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(score_candidates(pod(1, 2), f.candidates, rules), first);
  for (auto s : first) {
    EXPECT_GE(s, 0);
    EXPECT_LE(s, 10);
  }
}

}  // namespace
}  // namespace extender::policy
