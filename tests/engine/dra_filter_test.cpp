#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "extender/engine/extender.h"
#include "extender/model/dra.h"
#include "extender/model/dra_inventory.h"
#include "support/engine_harness.h"

namespace extender::engine {
namespace {

using model::DraAttribute;

// dp: a device-plugin node; dra8 and dra1: DRA nodes (no allocatable GPUs); partial: a DRA node
// whose pool is not complete yet; both: allocatable GPUs and DRA GPUs; plain: neither.
constexpr const char* kInventory = R"(
nodes:
  - name: dp
    labels: {nvidia.com/gpu.memory: "81559"}
    gpus: {nvidia.com/gpu: 8}
  - name: dra8
  - name: dra1
  - name: partial
  - name: both
    gpus: {nvidia.com/gpu: 1}
  - name: plain
)";

const std::vector<std::string> kNodes{"dp", "dra8", "dra1", "partial", "both", "plain"};

const char* kGpuClass = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'";

model::ResourceSlice slice(const std::string& node, int gpus, std::int64_t slice_count = 1) {
  model::ResourceSlice s;
  s.name = node + "-slice";
  s.driver = model::kNvidiaGpuDriver;
  s.node_name = node;
  s.pool = node;
  s.pool_generation = 1;
  s.pool_slice_count = slice_count;
  for (int i = 0; i < gpus; ++i) {
    model::DraDevice d;
    d.name = "gpu-" + std::to_string(i);
    d.attributes["gpu.nvidia.com/type"] = {DraAttribute::Kind::kString, 0, false, "gpu"};
    d.attributes["gpu.nvidia.com/index"] = {DraAttribute::Kind::kInt, i, false, {}};
    d.capacity["gpu.nvidia.com/memory"] = *Quantity::parse("80Gi");
    s.devices.push_back(std::move(d));
  }
  return s;
}

// An allocated claim holding `devices` of dra8.
model::ResourceClaim allocated_on_dra8(int devices) {
  model::ResourceClaim c;
  c.uid = "claim-1";
  c.namespace_name = "ml";
  c.name = "held";
  c.allocated = true;
  for (int i = 0; i < devices; ++i) {
    c.results.push_back({"gpus", model::kNvidiaGpuDriver, "dra8", "gpu-" + std::to_string(i), false});
  }
  return c;
}

std::shared_ptr<const model::DraInventory> inventory(int held_on_dra8 = 0) {
  std::vector<model::ResourceClaim> claims;
  if (held_on_dra8 > 0) claims.push_back(allocated_on_dra8(held_on_dra8));
  return std::make_shared<const model::DraInventory>(model::build_dra_inventory(
      {slice("dra8", 8), slice("dra1", 1), slice("partial", 1, 2), slice("both", 8)}, claims));
}

model::DeviceClass gpu_class(std::string extended_resource = "nvidia.com/gpu") {
  return {"gpu.nvidia.com", {kGpuClass}, std::move(extended_resource)};
}

using testing::gpu_pod;

wire::ExtenderArgs args_for(model::Pod pod) {
  wire::ExtenderArgs a;
  a.pod = std::move(pod);
  a.set_node_names(kNodes);
  return a;
}

const std::string kPass = "pass";

TEST(DraFilter, DecidesDraNodesByTheirDevicesInTotalAndDevicePluginNodesAsBefore) {
  struct Case {
    const char* what;
    bool served;  // false: a null inventory (DRA not served)
    std::vector<model::DeviceClass> classes;
    int held_on_dra8;
    const char* gpus;
    std::map<std::string, std::string> expect;  // node -> kPass or its unresolvable reason
    // a DRA node whose pool is incomplete passes unjudged
  };
  const std::string none2 = "nvidia.com/gpu: pod needs 2, node has none";
  const std::vector<Case> cases{
      {"DRA served: a DRA node with 8 GPUs passes a 2-GPU pod, one with 1 GPU fails it",
       true,
       {gpu_class()},
       0,
       "2",
       {{"dp", kPass},
        {"dra8", kPass},
        {"partial", kPass},
        {"dra1", "nvidia.com/gpu: pod needs 2 gpu.nvidia.com, node has 1 matching devices"},
        {"both", "nvidia.com/gpu: pod needs 2, node has 1 allocatable"},
        {"plain", none2}}},
      {"usage on a DRA node is left to the scheduler",
       true,
       {gpu_class()},
       7,
       "2",
       {{"dp", kPass},
        {"dra8", kPass},
        {"partial", kPass},
        {"dra1", "nvidia.com/gpu: pod needs 2 gpu.nvidia.com, node has 1 matching devices"},
        {"both", "nvidia.com/gpu: pod needs 2, node has 1 allocatable"},
        {"plain", none2}}},
      {"more than any node has: the device-plugin reason and the DRA reason",
       true,
       {gpu_class()},
       0,
       "9",
       {{"dp", "nvidia.com/gpu: pod needs 9, node has 8 allocatable"},
        {"dra8", "nvidia.com/gpu: pod needs 9 gpu.nvidia.com, node has 8 matching devices"},
        {"dra1", "nvidia.com/gpu: pod needs 9 gpu.nvidia.com, node has 1 matching devices"},
        {"partial", kPass},
        {"both", "nvidia.com/gpu: pod needs 9, node has 1 allocatable"},
        {"plain", "nvidia.com/gpu: pod needs 9, node has none"}}},
      {"DRA not served: unchanged",
       false,
       {gpu_class()},
       0,
       "2",
       {{"dp", kPass},
        {"dra8", none2},
        {"dra1", none2},
        {"partial", none2},
        {"both", "nvidia.com/gpu: pod needs 2, node has 1 allocatable"},
        {"plain", none2}}},
      {"no DeviceClass maps the resource: unchanged",
       true,
       {gpu_class("")},
       0,
       "2",
       {{"dp", kPass},
        {"dra8", none2},
        {"dra1", none2},
        {"partial", none2},
        {"both", "nvidia.com/gpu: pod needs 2, node has 1 allocatable"},
        {"plain", none2}}},
  };
  for (const auto& c : cases) {
    testing::EngineHarness h;
    h.load_inventory(kInventory);
    if (c.served) h.dra.inventory = inventory(c.held_on_dra8);
    h.dra.classes = c.classes;
    Extender& ext = h.standalone();
    auto a = ext.filter(args_for(gpu_pod("u1", c.gpus)));
    ASSERT_TRUE(a.result.error.empty()) << c.what << ": " << a.result.error;
    EXPECT_TRUE(a.result.failed.empty()) << c.what;
    std::map<std::string, std::string> got;
    for (auto n : *a.result.node_names) got[std::string(n)] = kPass;
    for (const auto& [n, why] : a.result.failed_unresolvable.sorted()) got[std::string(n)] = *why;
    EXPECT_EQ(got, c.expect) << c.what;
  }
}

TEST(DraBind, ADraPodOnADraNodeBindsAndReservesNoDevicePluginGpus) {
  struct Case {
    const char* what;
    const char* node;
    const char* gpus;
    std::string error;                // "" when the bind succeeds
    std::int64_t device_plugin_gpus;  // the placement's nvidia.com/gpu
  };
  const std::vector<Case> cases{
      {"DRA node with room", "dra8", "2", "", 0},
      {"DRA node with too few devices", "dra1", "2",
       "node dra1 no longer fits pod ml/pod-u1: nvidia.com/gpu: pod needs 2 gpu.nvidia.com, node has 1 matching "
       "devices",
       0},
      {"device-plugin node, as before", "dp", "2", "", 2},
  };
  for (const auto& c : cases) {
    testing::EngineHarness h;
    h.load_inventory(kInventory);
    h.dra.inventory = inventory();
    h.dra.classes = {gpu_class()};
    Extender& ext = h.standalone();
    const model::Pod pod = gpu_pod("u1", c.gpus);
    ext.filter(args_for(pod));
    BindAnswer b = ext.bind({pod.name, pod.namespace_name, pod.uid, c.node});
    EXPECT_EQ(b.error, c.error) << c.what;
    auto claim = h.state.claim_of(pod.uid);
    if (!c.error.empty()) {
      EXPECT_FALSE(claim.has_value()) << c.what;
      continue;
    }
    ASSERT_TRUE(claim.has_value()) << c.what;
    EXPECT_EQ(claim->node, c.node) << c.what;
    auto it = claim->allocation.gpus.find("nvidia.com/gpu");
    EXPECT_EQ(it == claim->allocation.gpus.end() ? 0 : it->second, c.device_plugin_gpus) << c.what;
  }
}

TEST(DraPreempt, KeepsDraNodesWithEnoughDevicesInTotalAndDevicePluginNodesAsBefore) {
  struct Case {
    const char* what;
    bool served;
    std::vector<std::string> kept;  // nodes whose victims are approved
  };
  const std::vector<Case> cases{
      {"DRA served", true, {"dp", "dra8", "partial"}},
      {"DRA not served", false, {"dp"}},
  };
  for (const auto& c : cases) {
    testing::EngineHarness h;
    h.load_inventory(kInventory);
    if (c.served) h.dra.inventory = inventory(8);
    h.dra.classes = {gpu_class()};
    Extender& ext = h.standalone();
    wire::PreemptionArgs args;
    args.pod = gpu_pod("u1", "2");
    for (const auto& n : kNodes) args.victims_by_node[n] = {{"victim-on-" + n}, {}, 0};
    std::vector<std::string> kept;
    for (const auto& [node, victims] : ext.preempt(args).victims) kept.push_back(node);
    EXPECT_EQ(kept, c.kept) << c.what;
  }
}

// binpack ranks a DRA node and a device-plugin node on one scale: the fuller one first.
TEST(DraPrioritize, BinpackRanksDraAndDevicePluginNodesByTheirGpusInUse) {
  struct Case {
    const char* what;
    int used_on_dp;
    int held_on_dra8;
    bool dra8_first;
  };
  const std::vector<Case> cases{
      {"the DRA node fuller", 1, 6, true},
      {"the device-plugin node fuller", 6, 1, false},
  };
  for (const auto& c : cases) {
    testing::EngineHarness h;
    h.load_inventory(kInventory);
    h.dra.inventory = inventory(c.held_on_dra8);
    h.dra.classes = {gpu_class()};
    Extender& ext = h.standalone();
    const model::Pod filler = gpu_pod("filler", std::to_string(c.used_on_dp).c_str());
    ext.filter(args_for(filler));
    ASSERT_EQ(ext.bind({filler.name, filler.namespace_name, filler.uid, "dp"}).error, "") << c.what;
    wire::ExtenderArgs args;
    args.pod = gpu_pod("u1", "1");
    args.set_node_names({"dp", "dra8"});
    PrioritizeAnswer p = ext.prioritize(args);
    ASSERT_EQ(p.scores.size(), 2u) << c.what << ": " << p.summary.note;
    EXPECT_EQ(p.scores[1].score > p.scores[0].score, c.dra8_first)
        << c.what << ": dp " << p.scores[0].score << ", dra8 " << p.scores[1].score;
  }
}

model::ResourceSlice product_slice(const std::string& node, const std::string& product) {
  model::ResourceSlice s = slice(node, 8);
  for (auto& d : s.devices)
    d.attributes["gpu.nvidia.com/productName"] = {DraAttribute::Kind::kString, 0, false, product};
  return s;
}

// Nodes of three models: h100 and a100 with 8 DRA GPUs each (named by productName), t4 with 4
// device-plugin GPUs; a class backing nvidia.com/gpu that selects the H100 product.
void product_cluster(testing::EngineHarness& h) {
  h.load_inventory(R"(
nodes:
  - name: h100
    labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
  - name: a100
    labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB}
  - name: t4
    labels: {nvidia.com/gpu.product: Tesla-T4}
    gpus: {nvidia.com/gpu: 4}
)");
  h.dra.inventory = std::make_shared<const model::DraInventory>(model::build_dra_inventory(
      {product_slice("h100", "NVIDIA H100 80GB HBM3"), product_slice("a100", "NVIDIA A100-SXM4-40GB")}, {}));
  h.dra.classes = {{"h100.nvidia.com",
                    {"device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"},
                    "nvidia.com/gpu"}};
}

// A class selecting one product by name: the pod's shape in the mix may use only the models of
// the nodes that have it (labelled as GPU Feature Discovery labels them), and of the nodes whose
// device plugin serves the resource, not the other DRA nodes'.
TEST(DraPrioritize, APodOfAClassSelectingAProductJoinsTheMixBoundToTheModelsOfItsNodes) {
  config::Config cfg;
  cfg.scoring.packing = policy::PackingStrategy::kFragmentation;
  testing::EngineHarness h(cfg);
  product_cluster(h);
  Extender& ext = h.standalone();
  wire::ExtenderArgs args;
  args.pod = gpu_pod("u1", "2");
  args.set_node_names({"h100", "a100", "t4"});
  ASSERT_EQ(ext.prioritize(args).scores.size(), 3u);

  const std::vector<std::string> models{"NVIDIA-H100-80GB-HBM3", "Tesla-T4"};
  auto bound_to_them = [&](const policy::ShapeMix& mix) {
    return std::count_if(mix.begin(), mix.end(),
                         [&](const auto& s) { return s.first.whole == 2 && s.first.models == models; });
  };
  EXPECT_EQ(bound_to_them(ext.shape_mix(h.state.snapshot())), 1);
}

// Scarcity counts DRA's GPUs: a shape bound to models that 12 of the cluster's 20 GPUs have (8 of
// them DRA's, on a node without device-plugin GPUs) weighs (2 GPUs x 20/12)^2 pods, not the
// (2 x 4/4)^2 it would if only the device plugin's 4 GPUs were counted.
TEST(DraPrioritize, TheMixWeighsAShapeByTheShareOfTheClustersGpusDraIncludedItMayUse) {
  config::Config cfg;
  cfg.scoring.packing = policy::PackingStrategy::kFragmentation;
  cfg.scoring.fragmentation_size_exponent = 2;
  testing::EngineHarness h(cfg);
  product_cluster(h);
  Extender& ext = h.standalone();
  wire::ExtenderArgs args;
  args.pod = gpu_pod("u1", "2");
  args.set_node_names({"h100", "a100", "t4"});
  ASSERT_EQ(ext.prioritize(args).scores.size(), 3u);

  const std::vector<std::string> models{"NVIDIA-H100-80GB-HBM3", "Tesla-T4"};
  const policy::ShapeMix mix = ext.shape_mix(h.state.snapshot());
  const auto bound = std::find_if(mix.begin(), mix.end(), [&](const auto& s) { return s.first.models == models; });
  ASSERT_NE(bound, mix.end());
  EXPECT_EQ(bound->second, std::llround(4 * std::pow(2.0 * 20 / 12, 2))) << "in quarter pods";

  h.dra.inventory = std::make_shared<const model::DraInventory>(
      model::build_dra_inventory({product_slice("h100", "NVIDIA H100 80GB HBM3")}, {}));
  const policy::ShapeMix fewer = ext.shape_mix(h.state.snapshot());
  const auto again = std::find_if(fewer.begin(), fewer.end(), [&](const auto& s) { return s.first.models == models; });
  ASSERT_NE(again, fewer.end());
  EXPECT_EQ(again->second, std::llround(4 * std::pow(2.0 * 12 / 12, 2))) << "the count follows DRA's inventory";
}

// Binds through a test binder, as kubernetes mode does through the API server.
class CountingBinder : public Binder {
 public:
  std::string bind(const wire::BindingArgs& args, Deadline) override {
    bound.push_back(args.pod_uid);
    return {};
  }
  std::string record_devices(const std::vector<std::pair<std::string, std::string>>&, Deadline) override { return {}; }
  std::string record_gpu_share(const wire::BindingArgs&, const GpuShareAssignment&, Deadline) override { return {}; }
  std::vector<std::string> bound;
};

TEST(DraBind, KubernetesModeBindsAPendingDraPodOnADraNodeWithoutAFilterFirst) {
  testing::EngineHarness h;
  h.load_inventory(kInventory);
  h.dra.inventory = inventory(7);
  h.dra.classes = {gpu_class()};
  const model::Pod pod = gpu_pod("u1", "2");
  h.pods.pending[pod.uid] = pod;
  CountingBinder binder;
  Extender& ext = h.kubernetes(binder);
  BindAnswer b = ext.bind({pod.name, pod.namespace_name, pod.uid, "dra8"});
  EXPECT_EQ(b.error, "") << "usage (7 of 8 allocated) is the scheduler's DRA allocator's to judge";
  EXPECT_EQ(binder.bound, std::vector<std::string>{"u1"});
  auto claim = h.state.claim_of(pod.uid);
  ASSERT_TRUE(claim.has_value());
  EXPECT_FALSE(claim->allocation.gpus.contains("nvidia.com/gpu"));
}

}  // namespace
}  // namespace extender::engine
