// GPU-model constraints: the trace's gpu_spec ("A|B") becomes a required node affinity on
// nvidia.com/gpu.product, each node carries its model there, and kube-scheduler as the simulator
// models it filters on it exactly as the daemon's eligibility check judges it.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "extender/config/config.h"
#include "extender/model/demand.h"
#include "extender/policy/node_eligibility.h"
#include "extender/policy/packing.h"
#include "extender/sim/scheduler_model.h"
#include "extender/sim/simulator.h"
#include "extender/sim/workload.h"

namespace extender::sim {
namespace {

constexpr std::int64_t kGpuMemory = std::int64_t{16} << 30;
constexpr const char* kPodHeader = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n";

engine::ExtenderOptions options() {
  auto cfg = config::parse_config("", "<test>");
  EXPECT_TRUE(cfg) << cfg.message();
  return cfg->extender_options();
}

// Two nodes of model A, two of B, one without a model (a CPU-only node has none in the trace).
std::vector<model::NodeSupply> cluster() {
  auto nodes = parse_trace_nodes(
      "sn,cpu_milli,memory_mib,gpu,model\n"
      "a0,64000,262144,4,A\n"
      "a1,64000,262144,4,A\n"
      "b0,64000,262144,4,B\n"
      "b1,64000,262144,4,B\n"
      "c0,64000,262144,0,\n",
      "nodes.csv", "nvidia.com/gpu", kGpuMemory);
  EXPECT_TRUE(nodes) << nodes.message();
  return nodes ? *nodes : std::vector<model::NodeSupply>{};
}

WorkloadRow row(std::string name, std::int64_t gpus, std::vector<std::string> models) {
  return {std::move(name), gpus, 1000 * gpus, 2000, 4096, std::move(models)};
}

TEST(GpuModel, GpuSpecIsReadAsTheModelsAPodMayRunOn) {
  struct Case {
    std::string spec;
    std::vector<std::string> models;  // unused when the spec is refused
    bool refused;
  };
  const std::vector<Case> cases = {
      {"", {}, false},
      {"V100M32", {"V100M32"}, false},
      {"T4|P100", {"P100", "T4"}, false},
      {"G2|G2|A10", {"A10", "G2"}, false},
      {"A||B", {}, true},
      {"|A", {}, true},
      {"A|", {}, true},
      {"-A", {}, true},
      {"A B", {}, true},
      {"A/B", {}, true},
      {std::string(64, 'x'), {}, true},
  };
  for (const auto& c : cases) {
    const std::string line = "p,1000,1024,1,1000," + c.spec + "\n";
    auto trace = parse_trace_pods(std::string(kPodHeader) + line, "pods.csv");
    auto own = parse_workload(
        "name,num_gpu,gpu_milli,cpu_milli,memory_mib,gpu_spec\np,1,1000,1000,1024," + std::string(c.spec) + "\n",
        "workload.csv");
    ASSERT_EQ(!trace, c.refused) << c.spec;
    ASSERT_EQ(!own, c.refused) << c.spec;
    if (c.refused) {
      EXPECT_NE(trace.message().find("pods.csv:2: gpu_spec"), std::string::npos) << trace.message();
      continue;
    }
    EXPECT_EQ(trace->front().gpu_models, c.models) << c.spec;
    EXPECT_EQ(own->front().gpu_models, c.models) << c.spec;
  }
  auto plain = parse_workload("name,num_gpu,gpu_milli,cpu_milli,memory_mib\np,1,1000,1000,1024\n", "workload.csv");
  ASSERT_TRUE(plain) << plain.message();
  EXPECT_TRUE(plain->front().gpu_models.empty());
}

TEST(GpuModel, TraceNodesCarryTheirModelAsTheGpuProductLabel) {
  const auto nodes = cluster();
  ASSERT_EQ(nodes.size(), 5u);
  EXPECT_EQ(nodes[0].labels.at("nvidia.com/gpu.product"), "A");
  EXPECT_EQ(nodes[2].labels.at("nvidia.com/gpu.product"), "B");
  EXPECT_TRUE(nodes[4].labels.empty());
  for (const auto& n : nodes) EXPECT_TRUE(n.labels_known) << n.name;
  auto without = parse_trace_nodes("sn,cpu_milli,memory_mib,gpu\nn,64000,262144,4\n", "nodes.csv", "nvidia.com/gpu", 1);
  ASSERT_TRUE(without) << without.message();
  EXPECT_FALSE(without->front().labels_known) << "no model column: the labels are not known";
  EXPECT_FALSE(parse_trace_nodes("sn,cpu_milli,memory_mib,gpu,model\nn,1,1,1,A|B\n", "nodes.csv", "nvidia.com/gpu", 1));
}

TEST(GpuModel, AConstrainedPodAsksARequiredNodeAffinityOnTheModelLabel) {
  const model::Pod pod = workload_pod(row("p", 1, {"A", "B"}), 0, "nvidia.com/gpu", "aliyun.com/gpu-mem", kGpuMemory);
  ASSERT_TRUE(pod.constraints.required_node_affinity);
  ASSERT_EQ(pod.constraints.required_node_affinity->size(), 1u);
  const model::NodeSelectorTerm& term = pod.constraints.required_node_affinity->front();
  EXPECT_EQ(term.match_expressions,
            (std::vector<model::NodeSelectorRequirement>{{"nvidia.com/gpu.product", "In", {"A", "B"}}}));
  EXPECT_FALSE(workload_pod(row("q", 1, {}), 1, "nvidia.com/gpu", "aliyun.com/gpu-mem", kGpuMemory)
                   .constraints.required_node_affinity);
}

// The scheduler model's NodeAffinity filter and the daemon's eligibility check (what /bind runs
// before any Binding) agree on every pod and node.
TEST(GpuModel, SchedulerModelFiltersAsTheDaemonsEligibilityCheck) {
  const auto nodes = cluster();
  struct Case {
    std::vector<std::string> models;
    std::set<std::string> feasible;
  };
  const std::vector<Case> cases = {
      {{"A"}, {"a0", "a1"}},
      {{"B"}, {"b0", "b1"}},
      {{"A", "B"}, {"a0", "a1", "b0", "b1"}},
      {{"H100"}, {}},
      {{}, {"a0", "a1", "b0", "b1", "c0"}},
  };
  const auto cfg = options();
  for (const auto& c : cases) {
    const WorkloadRow r = row("p", 1, c.models);
    const model::Pod pod = workload_pod(r, 0, "nvidia.com/gpu", cfg.demand.share.memory_resource, kGpuMemory);
    SchedulerModel scheduler(nodes, 1);
    const auto feasible = scheduler.feasible(r.cpu_milli, r.memory_mib << 20, 0, pod.constraints);
    EXPECT_EQ(std::set<std::string>(feasible.begin(), feasible.end()), c.feasible)
        << ::testing::PrintToString(c.models);
    auto demand = model::compute_demand(pod, cfg.demand);
    ASSERT_TRUE(demand) << demand.message();
    for (const auto& n : nodes) {
      const policy::Eligibility e = policy::node_eligibility(*demand, n, {});
      EXPECT_EQ(e.eligible(), c.feasible.count(n.name) == 1) << n.name << ": " << e.reason;
      if (!e.eligible()) {
        EXPECT_EQ(e.check, policy::Ineligible::kNodeAffinity) << n.name;
      }
    }
  }
}

TEST(GpuModel, AConstrainedPodNeverLandsOnAnotherModelAnUnconstrainedOneMay) {
  const auto nodes = cluster();
  std::map<std::string, std::string> model_of;
  for (const auto& n : nodes) model_of[n.name] = n.labels.count(kGpuModelLabel) ? n.labels.at(kGpuModelLabel) : "";
  // 16 GPUs, 15 asked: 7 by pods for A only (one asks 2), 4 for B, 4 anywhere, and one pod for a
  // model no node has.
  std::vector<WorkloadRow> rows;
  for (int i = 0; i < 6; ++i) rows.push_back(row("a-" + std::to_string(i), i == 3 ? 2 : 1, {"A"}));
  for (int i = 0; i < 4; ++i) rows.push_back(row("b-" + std::to_string(i), 1, {"B"}));
  for (int i = 0; i < 4; ++i) rows.push_back(row("any-" + std::to_string(i), 1, {}));
  rows.push_back(row("h100", 1, {"H100"}));
  for (const char* policy : {"binpack", "spread", "fragmentation"}) {
    for (std::uint64_t seed : {1, 2, 3}) {
      auto result = simulate(nodes, rows, options(), *policy::parse_packing(policy), seed);
      ASSERT_TRUE(result) << result.message();
      std::map<std::string, std::string> placed;
      for (const auto& p : result->placements) placed[p.pod] = model_of.at(p.node);
      for (const auto& r : rows) {
        const std::string what = std::string(policy) + " seed " + std::to_string(seed) + ": " + r.name;
        if (r.name == "h100") {
          EXPECT_EQ(placed.count(r.name), 0u) << what << ": no node has the model";
        } else if (!r.gpu_models.empty()) {
          ASSERT_EQ(placed.count(r.name), 1u) << what;
          EXPECT_EQ(placed.at(r.name), r.gpu_models.front()) << what;
        } else {
          ASSERT_EQ(placed.count(r.name), 1u) << what;
          EXPECT_NE(placed.at(r.name), "") << what << ": a GPU pod on a node without GPUs";
        }
      }
    }
  }
  // Unconstrained pods are free to use either model: under spread they take B's free GPUs too.
  std::vector<WorkloadRow> free_rows;
  for (int i = 0; i < 8; ++i) free_rows.push_back(row("any-" + std::to_string(i), 1, {}));
  auto spread = simulate(nodes, free_rows, options(), policy::PackingStrategy::kSpread, 1);
  ASSERT_TRUE(spread) << spread.message();
  std::set<std::string> models;
  for (const auto& p : spread->placements) models.insert(model_of.at(p.node));
  EXPECT_EQ(models, (std::set<std::string>{"A", "B"}));
}

// A refused pod constrained to one model does not make a later pod allowed on more models look
// refused too (the simulator skips pods an earlier refusal covers).
TEST(GpuModel, ARefusalOnOneModelDoesNotRefuseAPodAllowedElsewhere) {
  const auto nodes = cluster();
  std::vector<WorkloadRow> rows;
  for (int i = 0; i < 8; ++i) rows.push_back(row("a-" + std::to_string(i), 1, {"A"}));
  rows.push_back(row("a-more", 1, {"A"}));
  rows.push_back(row("a-or-b", 1, {"A", "B"}));
  rows.push_back(row("any", 1, {}));
  auto result = simulate(nodes, rows, options(), policy::PackingStrategy::kBinpack, 1);
  ASSERT_TRUE(result) << result.message();
  std::set<std::string> placed;
  for (const auto& p : result->placements) placed.insert(p.pod);
  EXPECT_EQ(placed.count("a-more"), 0u) << "model A's 8 GPUs are taken";
  EXPECT_EQ(placed.count("a-or-b"), 1u);
  EXPECT_EQ(placed.count("any"), 1u);
}

}  // namespace
}  // namespace extender::sim
