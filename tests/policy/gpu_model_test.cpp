#include <gtest/gtest.h>

#include "extender/policy/gpu_model_constraint.h"
#include "extender/policy/gpu_placement.h"
#include "extender/policy/score.h"

namespace extender::policy {
namespace {

constexpr std::int64_t kGi = std::int64_t{1} << 30;
constexpr const char* kProduct = model::kGpuProductLabel;

model::NodeSupply host(std::string name, std::string gpu_model, std::int64_t gpus, std::int64_t cores) {
  model::NodeSupply n;
  n.name = std::move(name);
  n.gpus["nvidia.com/gpu"] = gpus;
  n.gpu_memory_bytes["nvidia.com/gpu"] = 16 * kGi;
  n.gpu_devices = {"nvidia.com/gpu", gpus, 16 * kGi};
  n.cpu_milli = cores * 1000;
  n.memory_bytes = 256 * kGi;
  n.gpu_model = std::move(gpu_model);
  return n;
}

model::NodeSelectorTerm term(std::vector<model::NodeSelectorRequirement> reqs) { return {std::move(reqs), {}}; }

model::PodConstraints affinity(std::vector<model::NodeSelectorTerm> terms) {
  model::PodConstraints c;
  c.required_node_affinity = std::move(terms);
  return c;
}

TEST(GpuModels, AllowedByTheConstraintsKubeSchedulerEnforces) {
  using Models = std::vector<std::string>;
  model::PodConstraints selector;
  selector.node_selector[kProduct] = "T4";
  model::PodConstraints both = affinity({term({{kProduct, "In", {"T4", "P100"}}})});
  both.node_selector[kProduct] = "T4";
  model::PodConstraints other_label;
  other_label.node_selector["zone"] = "a";
  struct Case {
    const char* what;
    model::PodConstraints constraints;
    Models models;
  };
  const std::vector<Case> cases = {
      {"no constraint: any", {}, {}},
      {"a nodeSelector on another label: any", other_label, {}},
      {"a nodeSelector on the product label", selector, {"T4"}},
      {"In, sorted and unique", affinity({term({{kProduct, "In", {"V100", "A10", "V100"}}})}), {"A10", "V100"}},
      {"two In on one term intersect", affinity({term({{kProduct, "In", {"A", "B"}}, {kProduct, "In", {"B", "C"}}})}),
       {"B"}},
      {"terms are alternatives: their models unite",
       affinity({term({{kProduct, "In", {"A"}}}), term({{kProduct, "In", {"C"}}, {"zone", "In", {"z"}}})}), {"A", "C"}},
      {"a term that does not name the product admits any",
       affinity({term({{kProduct, "In", {"A"}}}), term({{"zone", "In", {"z"}}})}), {}},
      {"NotIn cannot be written as a set: any", affinity({term({{kProduct, "NotIn", {"A"}}})}), {}},
      {"the nodeSelector narrows the affinity", both, {"T4"}},
      {"no model admitted: counted as any", affinity({term({{kProduct, "In", {"A"}}, {kProduct, "In", {"B"}}})}), {}},
  };
  for (const auto& c : cases) EXPECT_EQ(gpu_models_allowed(c.constraints), c.models) << c.what;
}

TEST(GpuModels, ANodeOfAnotherModelIsAllFragmentForTheShape) {
  const model::NodeSupply t4 = host("n", "T4", 2, 16);
  model::NodeSupply unlabelled = t4;
  unlabelled.gpu_model.clear();
  model::NodeUsage half;
  model::Allocation a;
  a.gpu_devices = {{0, 8 * kGi, false}};
  half.add(a);
  struct Case {
    const char* what;
    const model::NodeSupply* node;
    GpuShape shape;
    std::int64_t fragment_gib;
  };
  const std::vector<Case> cases = {
      {"any model: the GPU rule", &t4, {1, 0, 0, 0, 0, {}}, 8},
      {"its model is in the set: the GPU rule", &t4, {1, 0, 0, 0, 0, {"P100", "T4"}}, 8},
      {"another model: every free byte", &t4, {1, 0, 0, 0, 0, {"P100"}}, 24},
      {"a share of another model", &t4, {0, 0, 250, 0, 0, {"V100"}}, 24},
      {"a node without a model holds no constrained shape", &unlabelled, {0, 0, 250, 0, 0, {"T4"}}, 24},
      {"an unconstrained share on it: the GPU rule", &unlabelled, {0, 0, 250, 0, 0, {}}, 0},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(fragmentation(gpu_view(*c.node, half), c.shape), c.fragment_gib * kGi) << c.what;
  }
}

// Nodes a (model A) and b (model B), each 2 free GPUs and 16 cores; the mix is one-GPU pods that
// need model A. Whatever lands on b takes nothing those pods could use; on a it does.
TEST(GpuModels, PodsGoWhereTheyTakeLeastFromTheShapesThatNeedTheNode) {
  std::vector<model::NodeSupply> nodes = {host("a", "A", 2, 16), host("b", "B", 2, 16)};
  const model::NodeUsage idle;
  std::vector<Candidate> cands = {{&nodes[0], &idle}, {&nodes[1], &idle}};
  const ShapeMix constrained = {{{1, 0, 0, 8000, 0, {"A"}}, 3}};
  const ShapeMix any = {{{1, 0, 0, 8000, 0, {}}, 3}};
  model::PodDemand gpu;
  gpu.uid = "g";
  gpu.gpus["nvidia.com/gpu"] = 1;
  gpu.cpu_milli = 4000;
  model::PodDemand cpu_only;
  cpu_only.uid = "c";
  cpu_only.cpu_milli = 12000;
  struct Case {
    const char* what;
    model::PodDemand pod;
    ShapeMix mix;
    double fit_weight;
    std::vector<std::int64_t> scores;
  };
  const std::vector<Case> cases = {
      {"an unconstrained GPU pod goes to b", gpu, constrained, 0, {9, 10}},
      {"and so with best-fit's blend", gpu, constrained, 0.05, {9, 10}},
      {"with a mix that needs no model the nodes tie (the most CPU left decides nothing)", gpu, any, 0, {10, 10}},
      {"a pod without GPUs strands a's GPUs for the mix, not b's", cpu_only, constrained, 0, {9, 10}},
      {"the same pod against a mix without models strands both", cpu_only, any, 0, {10, 10}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(gpu_packing_scores(c.pod, cands, PackingStrategy::kFragmentation, c.mix, c.fit_weight), c.scores)
        << c.what;
  }
}

TEST(GpuModels, TheWindowRecordsEachPodsModels) {
  model::PodDemand pod;
  pod.uid = "p";
  pod.gpus["nvidia.com/gpu"] = 1;
  pod.constraints = affinity({term({{kProduct, "In", {"T4", "G2"}}})});
  EXPECT_EQ(shape_of(pod), (GpuShape{1, 0, 0, 0, 0, {"G2", "T4"}}));
  model::PodDemand any = pod;
  any.constraints = {};
  ShapeWindow w(10, {});
  w.add(shape_of(pod));
  w.add(shape_of(any));
  w.add(shape_of(pod));
  EXPECT_EQ(w.mix(), (ShapeMix{{{1, 0, 0, 0, 0, {}}, 1}, {{1, 0, 0, 0, 0, {"G2", "T4"}}, 2}}));
}

}  // namespace
}  // namespace extender::policy
