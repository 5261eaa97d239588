// The simulator's reference policies: best-fit ranks the node the pod leaves least free first;
// fgd ranks by the increase of expected fragmentation alone, so nodes of equal increase tie.
#include <gtest/gtest.h>

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
