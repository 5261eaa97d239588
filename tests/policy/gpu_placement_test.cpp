#include "extender/policy/gpu_placement.h"

#include <gtest/gtest.h>

#include "extender/policy/fit.h"
#include "extender/policy/score.h"

namespace extender::policy {
namespace {

constexpr std::int64_t kGi = std::int64_t{1} << 30;

model::NodeSupply node(std::string name, std::int64_t gpus, std::int64_t memory_gib) {
  model::NodeSupply n;
  n.name = std::move(name);
  n.gpus["nvidia.com/gpu"] = gpus;
  n.gpu_memory_bytes["nvidia.com/gpu"] = memory_gib * kGi;
  n.gpu_devices = {"nvidia.com/gpu", gpus, memory_gib * kGi};
  return n;
}

model::PodDemand share(std::int64_t gib) {
  model::PodDemand d;
  d.uid = "p";
  d.gpu_share_bytes = gib * kGi;
  d.gpu_share_resource = "aliyun.com/gpu-mem";
  return d;
}

model::PodDemand whole(std::int64_t k) {
  model::PodDemand d;
  d.uid = "p";
  d.gpus["nvidia.com/gpu"] = k;
  return d;
}

model::NodeUsage holding(std::vector<model::GpuHold> holds) {
  model::NodeUsage u;
  model::Allocation a;
  for (const auto& h : holds) {
    if (h.whole) ++a.gpus["nvidia.com/gpu"];
  }
  a.gpu_devices = std::move(holds);
  u.add(a);
  return u;
}

TEST(GpuDevices, FitTable) {
  struct Case {
    const char* what;
    model::PodDemand pod;
    std::vector<model::GpuHold> held;
    Verdict verdict;
    std::string reason;
    std::vector<model::GpuHold> chosen;
  };
  const std::vector<Case> cases = {
      {"a share goes to the fullest device that holds it",
       share(8),
       {{0, 4 * kGi, false}, {1, 6 * kGi, false}},
       Verdict::kFits,
       "",
       {{1, 8 * kGi, false}}},
      {"a share larger than every device",
       share(20),
       {},
       Verdict::kUnresolvable,
       "aliyun.com/gpu-mem: pod needs 20 GiB of one GPU, node's GPUs have 16 GiB",
       {}},
      {"no device has room",
       share(10),
       {{0, 8 * kGi, false}, {1, 0, true}},
       Verdict::kInsufficient,
       "aliyun.com/gpu-mem: pod needs 10 GiB of one GPU, largest free GPU has 8 GiB of 16 GiB",
       {}},
      {"whole GPUs need devices with nothing on them",
       whole(2),
       {{0, 1 * kGi, false}},
       Verdict::kInsufficient,
       "nvidia.com/gpu: pod needs 2, node has 1 free of 2",
       {}},
      {"whole GPUs take the lowest free devices", whole(1), {{0, 0, true}}, Verdict::kFits, "", {{1, 0, true}}},
  };
  for (const auto& c : cases) {
    const auto n = node("n", 2, 16);
    Fit fit = check_fit(c.pod, n, holding(c.held));
    EXPECT_EQ(fit.verdict, c.verdict) << c.what;
    EXPECT_EQ(format_reason(fit.reason), c.reason) << c.what;
    EXPECT_EQ(fit.allocation.gpu_devices, c.chosen) << c.what;
  }
}

TEST(GpuDevices, TheMemoryFloorAppliesToShares) {
  auto pod = share(4);
  pod.gpu_memory_floor_bytes = 40 * kGi;
  EXPECT_EQ(check_fit(pod, node("n", 2, 16), {}).verdict, Verdict::kUnresolvable);
}

TEST(GpuDevices, FragmentationTable) {
  const auto n = node("n", 2, 16);
  struct Case {
    const char* what;
    std::vector<model::GpuHold> held;
    GpuShape shape;
    std::int64_t fragment_gib;
  };
  const std::vector<Case> cases = {
      {"an empty node has no fragment for one GPU", {}, {1, 0, 0}, 0},
      {"a partly used device is a fragment for whole GPUs", {{0, 4 * kGi, false}}, {1, 0, 0}, 12},
      {"too few free devices: all free memory is a fragment", {{0, 4 * kGi, false}}, {2, 0, 0}, 28},
      {"a share fits both devices", {{0, 4 * kGi, false}}, {0, 0, 500}, 0},
      {"a device with less free than the share is a fragment", {{0, 12 * kGi, false}}, {0, 0, 500}, 4},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(fragmentation(gpu_view(n, holding(c.held)), c.shape), c.fragment_gib * kGi) << c.what;
  }
}

TEST(GpuDevices, FragmentationKeepsWholeDevicesFreeAndRanks) {
  // Node a has a device half used; b is empty. A half-GPU share belongs on a's used device.
  std::vector<model::NodeSupply> nodes = {node("a", 2, 16), node("b", 2, 16), node("c", 2, 16)};
  const model::NodeUsage usages[] = {holding({{0, 8 * kGi, false}}), {}, holding({{0, 12 * kGi, false}})};
  std::vector<Candidate> cands = {{&nodes[0], &usages[0]}, {&nodes[1], &usages[1]}, {&nodes[2], &usages[2]}};
  const ShapeMix mix = {{{1, 0, 0}, 1}, {{0, 0, 500}, 1}};
  const auto scores = gpu_packing_scores(share(8), cands, PackingStrategy::kFragmentation, mix);
  EXPECT_EQ(scores, (std::vector<std::int64_t>{10, 8, 9}))
      << "ranked, not min-max: the best stands alone; b and c raise fragmentation alike, c is left fuller";
  ShapeMix m = mix;
  Fit fit = check_fit(share(8), nodes[0], *cands[0].usage, {PackingStrategy::kFragmentation, &m});
  EXPECT_EQ(fit.allocation.gpu_devices, (std::vector<model::GpuHold>{{0, 8 * kGi, false}}));
}

model::NodeSupply host(std::string name, std::int64_t gpus, std::int64_t cores, std::int64_t memory_gib) {
  auto n = node(std::move(name), gpus, 16);
  n.cpu_milli = cores * 1000;
  n.memory_bytes = memory_gib * kGi;
  return n;
}

model::NodeUsage asking(std::int64_t cores, std::int64_t memory_gib, std::vector<model::GpuHold> holds = {}) {
  model::NodeUsage u = holding(std::move(holds));
  model::Allocation a;
  a.cpu_milli = cores * 1000;
  a.memory_bytes = memory_gib * kGi;
  u.add(a);
  return u;
}

model::PodDemand with_host(model::PodDemand d, std::int64_t cores, std::int64_t memory_gib) {
  d.cpu_milli = cores * 1000;
  d.memory_bytes = memory_gib * kGi;
  return d;
}

TEST(GpuDevices, FragmentationCountsCpuAndMemory) {
  struct Case {
    const char* what;
    model::NodeSupply node;
    model::NodeUsage usage;
    GpuShape shape;
    std::int64_t fragment_gib;
  };
  const std::vector<Case> cases = {
      {"the shape's CPU fits: the GPU rule alone", host("n", 2, 16, 64), asking(8, 0), {1, 0, 0, 8000, 0}, 0},
      {"too little CPU left: all free GPU memory is a fragment",
       host("n", 2, 16, 64),
       asking(12, 0),
       {1, 0, 0, 8000, 0},
       32},
      {"too little memory left, for a share too",
       host("n", 2, 16, 64),
       asking(0, 60, {{0, 4 * kGi, false}}),
       {0, 0, 250, 0, 8 * kGi},
       28},
      {"a node that gives no CPU never runs out of it", node("n", 2, 16), asking(64, 0), {1, 0, 0, 512000, 0}, 0},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(fragmentation(gpu_view(c.node, c.usage), c.shape), c.fragment_gib * kGi) << c.what;
  }
}

TEST(GpuDevices, AViewFilledAgainIsTheNodesAlone) {
  struct Case {
    const char* what;
    model::NodeSupply node;
    model::NodeUsage usage;
  };
  model::NodeSupply no_memory = node("n", 4, 0);
  no_memory.gpu_devices.memory_bytes = 0;
  const std::vector<Case> cases = {
      {"a node with CPU, memory and a share held", host("a", 8, 64, 512), asking(16, 100, {{2, 10 * kGi, false}})},
      {"a node reporting no CPU or memory, two devices whole", node("b", 2, 16), holding({{0, 0, true}, {1, 0, true}})},
      {"a node without devices", model::NodeSupply{}, model::NodeUsage{}},
      {"devices without memory", no_memory, holding({{3, 0, true}})},
      {"the first node again", host("a", 8, 64, 512), asking(16, 100, {{2, 10 * kGi, false}})},
  };
  // One view filled in turn for each node, as a ranking loop does, is each node's own view.
  GpuNodeView reused;
  for (const auto& c : cases) {
    gpu_view(c.node, c.usage, reused);
    EXPECT_EQ(reused, gpu_view(c.node, c.usage)) << c.what;
  }
}

TEST(GpuDevices, FragmentationKeepsGpusReachableByCpu) {
  // Two nodes of 2 GPUs: a has 16 cores, b 64. The recent pods ask one GPU and 8 cores.
  std::vector<model::NodeSupply> nodes = {host("a", 2, 16, 256), host("b", 2, 64, 256)};
  const model::NodeUsage none;
  std::vector<Candidate> cands = {{&nodes[0], &none}, {&nodes[1], &none}};
  const ShapeMix mix = {{{1, 0, 0, 8000, 0}, 1}};
  struct Case {
    const char* what;
    model::PodDemand pod;
    std::vector<std::int64_t> scores;
  };
  const std::vector<Case> cases = {
      {"a pod of 12 cores on a would strand its other GPU: b", with_host(whole(1), 12, 8), {9, 10}},
      {"a pod of 2 cores strands nothing: the node with most CPU left, b", with_host(whole(1), 2, 8), {9, 10}},
      {"a share of 12 cores: b as well", with_host(share(4), 12, 8), {9, 10}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(gpu_packing_scores(c.pod, cands, PackingStrategy::kFragmentation, mix), c.scores) << c.what;
  }
}

TEST(GpuDevices, ShapesWithoutGpusCountTheGpusTheirCpuStrands) {
  struct Case {
    const char* what;
    model::NodeSupply node;
    model::NodeUsage usage;
    std::int64_t fragment_gib;
  };
  const GpuShape cpu_only{0, 0, 0, 8000, 16 * kGi};
  const std::vector<Case> cases = {
      {"its CPU and memory fit: nothing is a fragment", host("n", 2, 16, 64), asking(4, 0, {{0, 4 * kGi, false}}), 0},
      {"its CPU does not fit: every free GPU is", host("n", 2, 16, 64), asking(12, 0, {{0, 4 * kGi, false}}), 28},
      {"its memory does not fit", host("n", 2, 16, 64), asking(0, 56), 32},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(fragmentation(gpu_view(c.node, c.usage), cpu_only), c.fragment_gib * kGi) << c.what;
  }
}

// A shape asking no GPU: the daemon counts a node's free GPUs as its fragmentation once its CPU no
// longer fits; the FGD paper's simulator always does, so a placement changes it by the GPUs it takes.
TEST(GpuDevices, NoGpuShapesRuleTheIncreaseOfAShapeWithoutGpus) {
  struct Case {
    const char* what;
    model::NodeUsage usage;
    std::int64_t pod_cores;
    std::int64_t host_full_gib;  // the increase under kFragmentWhenHostFull
    std::int64_t always_gib;     // under kAlwaysFragment
  };
  const ShapeMix cpu_only = {{GpuShape{0, 0, 0, 8000, 0}, 1}};
  const std::vector<Case> cases = {
      {"its CPU fits before and after", asking(0, 0), 4, 0, -16},
      {"the pod's CPU strands the other GPU", asking(0, 0), 12, 16, -16},
      {"its CPU fit neither before nor after", asking(12, 0), 2, -16, -16},
  };
  for (const auto& c : cases) {
    const auto n = host("n", 2, 16, 64);
    const auto view = gpu_view(n, c.usage);
    const auto pod = with_host(whole(1), c.pod_cores, 0);
    for (auto [rule, gib] : {std::pair{NoGpuShapes::kFragmentWhenHostFull, c.host_full_gib},
                             std::pair{NoGpuShapes::kAlwaysFragment, c.always_gib}}) {
      const auto d = fragmentation_delta(pod, n, view, cpu_only, rule);
      ASSERT_TRUE(d) << c.what;
      EXPECT_EQ(d->num, static_cast<__int128>(gib) * kGi) << c.what;
      EXPECT_EQ(d->den, 16 * kGi) << c.what;
    }
  }
}

// share_deltas gives each device's increase as fragmentation_delta counts the best one.
TEST(GpuDevices, ShareDeltasScoreEachDevice) {
  const auto n = node("n", 3, 16);
  const auto view = gpu_view(n, holding({{0, 8 * kGi, false}, {1, 14 * kGi, false}}));
  const ShapeMix one_gpu = {{GpuShape{1, 0, 0, 0, 0}, 1}};
  const auto deltas = share_deltas(share(4), view, one_gpu);
  ASSERT_EQ(deltas.size(), 3u);
  ASSERT_TRUE(deltas[0]);
  EXPECT_FALSE(deltas[1]) << "2 GiB left: the share does not fit";
  ASSERT_TRUE(deltas[2]);
  EXPECT_EQ(deltas[0]->num, -4 * kGi) << "the partly used device's free memory shrinks";
  EXPECT_EQ(deltas[2]->num, 12 * kGi) << "a whole device becomes a fragment for one-GPU shapes";
  const auto best = fragmentation_delta(share(4), n, view, one_gpu);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->num, deltas[0]->num);
  EXPECT_TRUE(share_deltas(whole(1), view, one_gpu).empty());
}

TEST(GpuDevices, PodsWithoutGpusKeepCpuNextToFreeGpus) {
  // a: 2 free GPUs, 16 cores. b: 2 free GPUs, 64 cores. c: both GPUs held, 16 cores. d: no GPUs.
  std::vector<model::NodeSupply> nodes = {host("a", 2, 16, 256), host("b", 2, 64, 256), host("c", 2, 16, 256),
                                          host("d", 0, 16, 256)};
  nodes[3].gpu_devices = {};
  nodes[3].gpus.clear();
  const model::NodeUsage idle;
  const model::NodeUsage both_held = holding({{0, 0, true}, {1, 0, true}});
  std::vector<Candidate> cands = {{&nodes[0], &idle}, {&nodes[1], &idle}, {&nodes[2], &both_held}, {&nodes[3], &idle}};
  const ShapeMix mix = {{{1, 0, 0, 8000, 0}, 3}, {{0, 0, 0, 4000, 0}, 1}};
  struct Case {
    const char* what;
    model::PodDemand pod;
    std::vector<std::int64_t> scores;
  };
  model::PodDemand none;
  none.uid = "p";
  const std::vector<Case> cases = {
      {"12 cores would strand a's GPUs; c and d have none free, d has nothing to strand (c holds them)",
       with_host(none, 12, 8),
       {8, 9, 10, 10}},
      {"4 cores strand nothing: no free GPU first, then the most CPU left", with_host(none, 4, 8), {8, 9, 10, 10}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(gpu_packing_scores(c.pod, cands, PackingStrategy::kFragmentation, mix), c.scores) << c.what;
  }
  ScoringRules rules;
  rules.packing = PackingStrategy::kFragmentation;
  EXPECT_EQ(score_candidates(with_host(none, 4, 8), cands, rules, mix), (std::vector<std::int64_t>{8, 9, 10, 10}))
      << "fragmentation scores pods without GPUs";
  rules.packing = PackingStrategy::kBinpack;
  EXPECT_TRUE(score_candidates(with_host(none, 4, 8), cands, rules, mix).empty()) << "binpack does not";
}

TEST(GpuDevices, TheFitWeightSeparatesNearEqualIncreasesByWhatTheNodeKeepsFree) {
  // a: 2 free GPUs, 16 cores. b: 2 free GPUs, 64 cores. c: one of 2 GPUs held, 64 cores.
  std::vector<model::NodeSupply> nodes = {host("a", 2, 16, 256), host("b", 2, 64, 256), host("c", 2, 64, 256)};
  const model::NodeUsage none;
  const model::NodeUsage one_held = holding({{0, 0, true}});
  std::vector<Candidate> cands = {{&nodes[0], &none}, {&nodes[1], &none}, {&nodes[2], &one_held}};
  const model::PodDemand pod = with_host(whole(1), 4, 8);
  struct Case {
    const char* what;
    ShapeMix mix;
    double fit_weight;
    std::vector<std::int64_t> scores;
  };
  const std::vector<Case> cases = {
      {"no increase anywhere, no fit weight: the fullest GPUs, then the most CPU left",
       {{{1, 0, 0}, 1}},
       0,
       {8, 9, 10}},
      {"no increase anywhere, a fit weight: the node left least free (GPU and CPU fractions) first",
       {{{1, 0, 0}, 1}},
       0.05,
       {9, 8, 10}},
      {"2-GPU shapes: c's lone free GPU goes, a and b strand one; the fit weight only orders a before b",
       {{{2, 0, 0}, 1}},
       0.05,
       {9, 8, 10}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(gpu_packing_scores(pod, cands, PackingStrategy::kFragmentation, c.mix, c.fit_weight), c.scores) << c.what;
  }
  ScoringRules rules;
  rules.packing = PackingStrategy::kFragmentation;
  rules.fragmentation_fit_weight = 0.05;
  EXPECT_EQ(score_candidates(pod, cands, rules, {{{1, 0, 0}, 1}}), (std::vector<std::int64_t>{9, 8, 10}))
      << "the scoring rules carry the fit weight";
}

TEST(GpuDevices, ShapeWindowWeighsLargeShapesBySizeExponent) {
  ShapeWindow w(10, {{{1, 0, 0}, 1}}, 1.5);
  w.add({8, 0, 0});
  w.add({1, 0, 0});
  w.add({0, 0, 0, 4000, kGi});
  EXPECT_EQ(w.mix(), (ShapeMix{{{0, 0, 0, 4000, kGi}, 4}, {{1, 0, 0}, 8}, {{8, 0, 0}, 91}}))
      << "in quarter pods: 8 GPUs weigh 8^1.5 = 22.6 pods, the prior and pods without GPUs one each";
  ShapeWindow huge(1,
                   {{{1, 0, 0}, 1'000'000},
                    {{2, 0, 0}, 1'000'000},
                    {{4, 0, 0}, 1'000'000},
                    {{8, 0, 0}, 1'000'000},
                    {{0, 0, 500}, 1'000'000}},
                   2);
  std::int64_t total = 0;
  for (const auto& [shape, weight] : huge.mix()) total += weight;
  EXPECT_LE(total, std::int64_t{1} << 24) << "the total is scaled down to keep exact ratios in 128 bits";
  EXPECT_GT(total, (std::int64_t{1} << 24) - 8);
}

TEST(GpuDevices, ShapeWindowCountsPodsWithoutGpus) {
  ShapeWindow w(3, {});
  w.add({0, 0, 0, 4000, kGi});
  w.add({});
  w.add({1, 0, 0});
  EXPECT_EQ(w.mix(), (ShapeMix{{{0, 0, 0, 4000, kGi}, 1}, {{1, 0, 0}, 1}})) << "an empty shape is ignored";
  EXPECT_EQ(shape_of(with_host(model::PodDemand{}, 3, 2)), (GpuShape{0, 0, 0, 3000, 2 * kGi}));
}

TEST(GpuDevices, ShapeWindowForgetsTheOldest) {
  ShapeWindow w(2, {{{1, 0, 0}, 1}});
  w.add({2, 0, 0});
  w.add({8, 0, 0});
  w.add({8, 0, 0});
  EXPECT_EQ(w.mix(), (ShapeMix{{{1, 0, 0}, 1}, {{8, 0, 0}, 2}}));
}

TEST(GpuDevices, ShapesParseAndPrint) {
  EXPECT_EQ(shape_name(*parse_shape("0.5")), "0.5");
  EXPECT_EQ(shape_of(with_host(share(4), 3, 2)), (GpuShape{0, 4 * kGi, 0, 3000, 2 * kGi}));
  EXPECT_EQ(shape_name(*parse_shape("8")), "8");
  EXPECT_FALSE(parse_shape("1.5"));
  EXPECT_FALSE(parse_shape("0"));
}

}  // namespace
}  // namespace extender::policy
