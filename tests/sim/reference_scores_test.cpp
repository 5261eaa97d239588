// The simulator's reference policies: best-fit ranks the node the pod leaves least free first;
// fgd ranks by the increase of expected fragmentation alone, so nodes of equal increase tie.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "extender/sim/reference_scores.h"
#include "extender/sim/simulator.h"
#include "extender/state/cluster_state.h"

namespace extender::sim {
namespace {

constexpr std::int64_t kGpuMemory = std::int64_t{16} << 30;

model::NodeSupply node(const std::string& name, std::int64_t gpus, std::int64_t cpu_milli) {
  model::NodeSupply n;
  n.name = name;
  n.gpus["nvidia.com/gpu"] = gpus;
  n.gpu_devices = {"nvidia.com/gpu", gpus, kGpuMemory};
  n.cpu_milli = cpu_milli;
  n.memory_bytes = std::int64_t{256} << 30;
  return n;
}

model::PodDemand pod(std::int64_t gpus, std::int64_t cpu_milli) {
  model::PodDemand p;
  p.uid = "u";
  p.name = "p";
  p.namespace_name = "ns";
  if (gpus > 0) p.gpus["nvidia.com/gpu"] = gpus;
  p.cpu_milli = cpu_milli;
  return p;
}

// Holds `gpus` whole GPUs (devices 0..gpus-1) and `cpu_milli` on the node.
void hold(state::ClusterState& state, const std::string& node_name, std::int64_t gpus, std::int64_t cpu_milli) {
  state::Claim claim;
  claim.owner = "ns/held-" + node_name;
  claim.node = node_name;
  claim.allocation.gpus["nvidia.com/gpu"] = gpus;
  for (std::int64_t i = 0; i < gpus; ++i) claim.allocation.gpu_devices.push_back({i, 0, true});
  claim.allocation.cpu_milli = cpu_milli;
  claim.allocation.pods = 1;
  state.place("held-" + node_name, std::move(claim));
}

struct Case {
  const char* name;
  std::vector<model::NodeSupply> nodes;
  std::vector<std::pair<std::string, std::pair<std::int64_t, std::int64_t>>> held;  // node -> (gpus, cpu)
  model::PodDemand pod;
  std::vector<std::string> names;
  std::vector<std::int64_t> best_fit;  // empty: not asked (best-fit ranks only nodes the filter passed)
  std::vector<std::int64_t> fgd;
};

TEST(ReferenceScores, BestFitPacksAndFgdRanksByFragmentationAlone) {
  const policy::ShapeMix one_gpu = {{{1, 0, 0, 0, 0}, 1}};
  const Case cases[] = {
      // One GPU left on a: best-fit fills it; for one-GPU shapes neither node fragments, so fgd ties.
      {"the fuller node",
       {node("a", 4, 64000), node("b", 4, 64000)},
       {{"a", {3, 0}}},
       pod(1, 1000),
       {"a", "b"},
       {10, 9},
       {10, 10}},
      // The same free GPUs, less CPU left on b: best-fit prefers b; fgd still ties.
      {"less CPU left",
       {node("a", 4, 64000), node("b", 4, 64000)},
       {{"b", {0, 32000}}},
       pod(1, 1000),
       {"a", "b"},
       {9, 10},
       {10, 10}},
      // A node that cannot hold the pod, and a name the state lacks, score 0 under fgd.
      {"no room",
       {node("a", 2, 64000), node("b", 4, 64000)},
       {{"a", {2, 0}}},
       pod(1, 1000),
       {"a", "b", "gone"},
       {},
       {0, 10, 0}},
  };
  for (const auto& c : cases) {
    state::ClusterState state;
    state.upsert_nodes(c.nodes);
    for (const auto& [n, h] : c.held) hold(state, n, h.first, h.second);
    const auto snap = state.snapshot();
    if (!c.best_fit.empty()) {
      EXPECT_EQ(best_fit_scores(snap, c.names, c.pod), c.best_fit) << c.name;
    }
    EXPECT_EQ(fgd_scores(snap, c.names, c.pod, one_gpu), c.fgd) << c.name;
  }
}

TEST(ReferenceScores, FgdPrefersTheNodeThatKeepsRoomForTheLargestShape) {
  // Under a mix of 4-GPU shapes, a one-GPU pod on the node with 4 free keeps nothing for them,
  // while on the node with 3 free it fragments nothing new.
  state::ClusterState state;
  state.upsert_nodes({node("a", 4, 64000), node("b", 4, 64000)});
  hold(state, "b", 1, 0);
  const policy::ShapeMix four = {{{4, 0, 0, 0, 0}, 1}};
  const auto scores = fgd_scores(state.snapshot(), {"a", "b"}, pod(1, 1000), four);
  EXPECT_LT(scores[0], scores[1]);
}

// The paper simulator's score: 100 * sigmoid(-increase in devices), truncated.
TEST(ReferenceScores, PaperFgdScoreIsATruncatedSigmoid) {
  struct Case {
    __int128 num, den;
    std::int64_t score;
  };
  const Case cases[] = {
      {0, 1, 50}, {1, 2, 37},  {1, 1, 26},    {-1, 1, 73},    {3, 1, 4},
      {5, 1, 0},  {-5, 1, 99}, {-50, 1, 100}, {40, 1000, 49}, {-40, 1000, 50},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(paper_fgd_score({c.num, c.den}), c.score) << static_cast<double>(c.num) / static_cast<double>(c.den);
  }
}

// Holds a share of `bytes` on device `device` of the node.
void hold_share(state::ClusterState& state, const std::string& node_name, std::int64_t device, std::int64_t bytes) {
  state::Claim claim;
  claim.owner = "ns/share-" + node_name;
  claim.node = node_name;
  claim.allocation.gpu_devices.push_back({device, bytes, false});
  claim.allocation.pods = 1;
  state.place("share-" + node_name + std::to_string(device), std::move(claim));
}

// A share's device: the best score, ties to the lowest index under the paper's integer scores; the
// least increase, ties to the least free memory, under exact ones.
TEST(ReferenceScores, FgdShareDeviceBreaksTiesAsItsScoresDo) {
  state::ClusterState state;
  state.upsert_nodes({node("a", 2, 64000)});
  hold_share(state, "a", 1, std::int64_t{8} << 30);
  model::PodDemand share = pod(0, 1000);
  share.gpu_share_bytes = std::int64_t{2} << 30;
  share.gpu_share_resource = "aliyun.com/gpu-mem";
  const policy::ShapeMix cpu_only = {{{0, 0, 0, 4000, 0}, 1}};  // every device's change is the same
  const policy::ShapeMix one_gpu = {{{1, 0, 0, 0, 0}, 1}};      // device 0 would fragment
  struct Case {
    const char* what;
    policy::ShapeMix mix;
    bool integer_scores;
    std::optional<std::int64_t> device;
  };
  const Case cases[] = {
      {"equal scores: the lowest index", cpu_only, true, 0},
      {"equal increases: the least free memory", cpu_only, false, 1},
      {"the better score", one_gpu, true, 1},
  };
  for (const auto& c : cases) {
    FgdRules rules;
    rules.integer_scores = c.integer_scores;
    EXPECT_EQ(fgd_share_device(state.snapshot(), "a", share, c.mix, nullptr, rules), c.device) << c.what;
  }
  EXPECT_EQ(fgd_share_device(state.snapshot(), "gone", share, one_gpu), std::nullopt);
}

// The paper's typical pods: specs by count until 95% of the pods, models part of a spec, memory not.
TEST(ReferenceScores, FgdsMixIsTheWorkloadsTypicalPods) {
  std::vector<WorkloadRow> rows;
  auto add = [&](int n, WorkloadRow r) {
    for (int i = 0; i < n; ++i) rows.push_back(r);
  };
  add(50, {"a", 1, 1000, 8000, 1024, {}});
  add(20, {"b", 1, 1000, 8000, 4096, {}});      // the same spec: memory is not part of it
  add(15, {"c", 1, 1000, 8000, 1024, {"T4"}});  // a model makes another spec
  add(10, {"d", 1, 500, 4000, 1024, {}});       // a share
  add(3, {"e", 0, 0, 2000, 1024, {}});          // without GPUs
  add(2, {"f", 8, 1000, 64000, 1024, {"A", "B"}});
  using policy::GpuShape;
  // 70 + 15 + 10 = 95 of 100: the two rarest specs fall out.
  EXPECT_EQ(typical_pods_mix(rows), (policy::ShapeMix{{GpuShape{0, 0, 500, 4000, 0, {}}, 10},
                                                      {GpuShape{1, 0, 0, 8000, 0, {}}, 70},
                                                      {GpuShape{1, 0, 0, 8000, 0, {"T4"}}, 15}}));
  rows.resize(90);
  add(1, {"g", 2, 1000, 16000, 1024, {}});
  EXPECT_EQ(typical_pods_mix(rows).size(), 3u) << "85 of 91 is short of 95%: the share comes in";
  rows.resize(70);
  EXPECT_EQ(typical_pods_mix(rows), (policy::ShapeMix{{GpuShape{1, 0, 0, 8000, 0, {}}, 70}}));
}

TEST(ReferenceScores, ReferencePoliciesAreNamed) {
  EXPECT_EQ(parse_reference("best-fit"), Reference::kBestFit);
  EXPECT_EQ(parse_reference("fgd"), Reference::kFgd);
  EXPECT_EQ(parse_reference("fragmentation"), std::nullopt);
}

}  // namespace
}  // namespace extender::sim
