#include <gtest/gtest.h>

#include <memory>

#include "extender/policy/dra_fit.h"
#include "extender/policy/gpu_model_constraint.h"
#include "extender/policy/gpu_placement.h"
#include "extender/policy/score.h"
#include "support/nvidia_dra_devices.h"

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
      {"two In on one term intersect",
       affinity({term({{kProduct, "In", {"A", "B"}}, {kProduct, "In", {"B", "C"}}})}),
       {"B"}},
      {"terms are alternatives: their models unite",
       affinity({term({{kProduct, "In", {"A"}}}), term({{kProduct, "In", {"C"}}, {"zone", "In", {"z"}}})}),
       {"A", "C"}},
      {"a term that does not name the product admits any",
       affinity({term({{kProduct, "In", {"A"}}}), term({{"zone", "In", {"z"}}})}),
       {}},
      {"NotIn cannot be written as a set: any", affinity({term({{kProduct, "NotIn", {"A"}}})}), {}},
      {"the nodeSelector narrows the affinity", both, {"T4"}},
      {"no model admitted: counted as any", affinity({term({{kProduct, "In", {"A"}}, {kProduct, "In", {"B"}}})}), {}},
  };
  for (const auto& c : cases) EXPECT_EQ(gpu_models_allowed(c.constraints), c.models) << c.what;
}

// A DRA node as the node watch has it: no allocatable GPUs, its model labelled as GPU Feature
// Discovery labels it.
model::NodeSupply dra_host(std::string name, std::string gpu_model) {
  model::NodeSupply n;
  n.name = std::move(name);
  n.gpu_model = std::move(gpu_model);
  return n;
}

// DRA nodes of two models beside a device-plugin node; a class backing example.com/h100 selects
// one product by name.
TEST(GpuModels, ServedByTheNodesWhoseDevicesTheClassSelects) {
  using Models = std::vector<std::string>;
  const char* h100 = "NVIDIA H100 80GB HBM3";
  auto inventory = std::make_shared<const model::DraInventory>(model::build_dra_inventory(
      {testing::nvidia_gpus("h", 2, h100), testing::nvidia_gpus("a", 2, "NVIDIA A100-SXM4-40GB"),
       testing::nvidia_gpus("x", 4, h100)},
      {}));
  auto classes = std::make_shared<const DraClasses>(
      std::vector<model::DeviceClass>{{"gpu.nvidia.com", {"device.driver == 'gpu.nvidia.com'"}, "nvidia.com/gpu"},
                                      {"h100.nvidia.com",
                                       {"device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"},
                                       "example.com/h100"}});
  const model::NodeSupply h = dra_host("h", "NVIDIA-H100-80GB-HBM3");
  const model::NodeSupply a = dra_host("a", "NVIDIA-A100-SXM4-40GB");
  const model::NodeSupply x = dra_host("x", "");
  const model::NodeSupply t4 = host("t4", "Tesla-T4", 4, 16);
  const model::NodeSupply x_labelled = dra_host("x", "NVIDIA-H100-80GB-HBM3");
  struct Case {
    const char* what;
    std::string resource;
    std::int64_t count;
    std::vector<const model::NodeSupply*> nodes;
    Models models;
  };
  const std::vector<Case> cases = {
      {"the class's product: the models of the nodes that have it",
       "example.com/h100",
       1,
       {&h, &a, &t4},
       {h.gpu_model}},
      {"a class of any GPU: every model, the device plugin's too",
       "nvidia.com/gpu",
       1,
       {&h, &a, &t4},
       {a.gpu_model, h.gpu_model, "Tesla-T4"}},
      {"more devices than a node of the product has: no node serves it, any", "example.com/h100", 3, {&h, &a}, {}},
      {"a node that serves it without a model: any", "example.com/h100", 1, {&h, &x}, {}},
      {"only the nodes with enough of them", "example.com/h100", 3, {&h, &x_labelled}, {h.gpu_model}},
  };
  for (const auto& c : cases) {
    model::PodDemand pod;
    pod.uid = "u";
    pod.gpus[c.resource] = c.count;
    const DraFit fit(pod, inventory, classes);
    ASSERT_FALSE(fit.empty()) << c.what;
    EXPECT_EQ(gpu_models_served(pod, fit, c.nodes), c.models) << c.what;
  }
}

TEST(GpuModels, BothSetsAdmitTheirCommonModelsAndNoneInCommonIsAny) {
  using Models = std::vector<std::string>;
  EXPECT_EQ(gpu_models_of_both({}, {}), Models{});
  EXPECT_EQ(gpu_models_of_both({"A"}, {}), Models{"A"});
  EXPECT_EQ(gpu_models_of_both({}, {"B"}), Models{"B"});
  EXPECT_EQ(gpu_models_of_both({"A", "B"}, {"B", "C"}), Models{"B"});
  EXPECT_EQ(gpu_models_of_both({"A"}, {"C"}), Models{}) << "no model admitted: counted as any";
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

model::GpuModelSupply supply_of(const std::vector<model::NodeSupply>& nodes) {
  model::GpuModelSupply s;
  for (const auto& n : nodes) s.add(n);
  return s;
}

// 104 GPUs: 88 G2, 8 T4, 1 P100, 7 on a node without a model. A shape bound to models weighs as
// if it were (its GPUs / the share of the cluster's GPUs it may use) GPUs, at most kMaxScarcity
// times its GPUs.
TEST(GpuModels, ShapesBoundToScarceModelsWeighMore) {
  const model::GpuModelSupply supply =
      supply_of({host("g", "G2", 88, 64), host("t", "T4", 8, 64), host("p", "P100", 1, 8), host("u", "", 7, 8)});
  const GpuShape any{1, 0, 0, 0, 0, {}};
  const GpuShape t4{1, 0, 0, 0, 0, {"T4"}};
  const GpuShape g2_or_t4{1, 0, 0, 0, 0, {"G2", "T4"}};
  const GpuShape two_p100{2, 0, 0, 0, 0, {"P100"}};
  const GpuShape t4_share{0, 4 * kGi, 0, 0, 0, {"T4"}};
  const GpuShape absent{1, 0, 0, 0, 0, {"A10"}};
  struct Case {
    const char* what;
    GpuShape shape;
    double exponent;
    model::GpuModelSupply supply;
    std::int64_t weight;  // of one pod, in the window's units
  };
  const std::vector<Case> cases = {
      {"any model: its GPUs alone (quarters)", any, 2, supply, 4},
      {"one model of 8 in 104 GPUs: (104 / 8)^2 pods", t4, 2, supply, 4 * 169},
      {"two models: their GPUs together", g2_or_t4, 2, supply, 5},
      {"2 GPUs of a model with 1 in 104: scarcity capped at 32", two_p100, 2, supply, 4 * 64 * 64},
      {"a share is one GPU's worth", t4_share, 2, supply, 4 * 169},
      {"a model no node has: no scarcity to go by", absent, 2, supply, 4},
      {"exponent 1", t4, 1, supply, 4 * 13},
      {"exponent 0: every pod once", t4, 0, supply, 1},
      {"no supply known: any model's weight", t4, 2, {}, 4},
  };
  for (const auto& c : cases) {
    ShapeWindow w(10, {}, c.exponent);
    w.add(c.shape);
    EXPECT_EQ(w.mix(c.supply), (ShapeMix{{c.shape, c.weight}})) << c.what;
  }
}

// Best-fit's blend pulls a pod toward the node it fills most; the pods in the mix that need that
// node's model pull it away by what they would lose there, and weighed by scarcity they win.
// Node g: 8 G2 GPUs, 2 in use (5/8 left after the pod); t: 2 T4 GPUs, free (1/2 left); the cluster
// holds 88 G2 and 8 T4 GPUs; the mix is eight pods of 8 GPUs of any model and one that needs a T4.
TEST(GpuModels, ScarceModelsAreKeptForThePodsBoundToThem) {
  std::vector<model::NodeSupply> nodes = {host("g", "G2", 8, 64), host("t", "T4", 2, 64)};
  const model::GpuModelSupply supply = supply_of({host("g", "G2", 88, 64), host("t", "T4", 8, 64)});
  model::NodeUsage quarter;
  model::Allocation two;
  two.gpu_devices = {{0, 0, true}, {1, 0, true}};
  quarter.add(two);
  const model::NodeUsage idle;
  std::vector<Candidate> cands = {{&nodes[0], &quarter}, {&nodes[1], &idle}};
  ShapeWindow window(100, {}, 2);
  for (int i = 0; i < 8; ++i) window.add({8, 0, 0, 0, 0, {}});
  window.add({1, 0, 0, 0, 0, {"T4"}});
  model::PodDemand pod;
  pod.uid = "p";
  pod.gpus["nvidia.com/gpu"] = 1;
  struct Case {
    const char* what;
    model::GpuModelSupply supply;
    double fit_weight;
    std::vector<std::int64_t> scores;
  };
  const std::vector<Case> cases = {
      {"no blend: g, where the pod takes nothing the T4 pods could use", {}, 0, {10, 9}},
      {"the blend without scarcity: t, the better fit", {}, 0.05, {9, 10}},
      {"the blend with scarcity: g, t kept for the T4 pods", supply, 0.05, {10, 9}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(gpu_packing_scores(pod, cands, PackingStrategy::kFragmentation, window.mix(c.supply), c.fit_weight),
              c.scores)
        << c.what;
  }
}

}  // namespace
}  // namespace extender::policy
