#include "extender/sim/workload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace extender::sim {
namespace {

constexpr const char* kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";
constexpr const char* kNodeHeader = "sn,cpu_milli,memory_mib,gpu,model\n";

TEST(TraceFiles, ReadPodsAndNodesAsPublished) {
  auto pods = parse_trace_pods(std::string(kPodHeader) +
                                   "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
                                   "openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\r\n"
                                   "openb-pod-0002,88000,327680,8,1000,V100M32,BE,Failed,1,2,3\n"
                                   "openb-pod-0003,4000,8192,0,0,,LS,Running,0,1,0\n",
                               "pods.csv");
  ASSERT_TRUE(pods) << pods.message();
  ASSERT_EQ(pods->size(), 4u);
  EXPECT_EQ((*pods)[1].name, "openb-pod-0001");
  EXPECT_TRUE(is_share((*pods)[1]));
  EXPECT_EQ(gpu_milli_requested((*pods)[1]), 460);
  EXPECT_EQ(gpu_milli_requested((*pods)[2]), 8000);
  EXPECT_EQ((*pods)[2].cpu_milli, 88000);
  EXPECT_EQ(gpu_milli_requested((*pods)[3]), 0);

  auto nodes = parse_trace_nodes(std::string(kNodeHeader) +
                                     "openb-node-0000,64000,262144,2,P100\n"
                                     "openb-node-0001,96000,393216,0,\n",
                                 "nodes.csv", "nvidia.com/gpu", 1000 << 20);
  ASSERT_TRUE(nodes) << nodes.message();
  ASSERT_EQ(nodes->size(), 2u);
  const auto& n = nodes->front();
  EXPECT_EQ(n.name, "openb-node-0000");
  EXPECT_EQ(n.cpu_milli, 64000);
  EXPECT_EQ(n.memory_bytes, std::int64_t{262144} << 20);
  EXPECT_EQ(n.gpus.at("nvidia.com/gpu"), 2);
  EXPECT_EQ(n.gpu_devices, (model::GpuDevices{"nvidia.com/gpu", 2, 1000 << 20}));
  EXPECT_TRUE((*nodes)[1].gpus.empty());
  EXPECT_EQ((*nodes)[1].gpu_devices.count, 0);
}

TEST(TraceFiles, HostileFilesAreRefusedWithTheFileAndLine) {
  struct Case {
    const char* what;
    std::string text;
    std::string error;
  };
  const std::vector<Case> pod_cases = {
      {"empty", "", "pods.csv: empty file"},
      {"no such column", "name,cpu_milli,memory_mib,num_gpu\n", "pods.csv:1: the header has no column gpu_milli"},
      {"short line", std::string(kPodHeader) + "p,1,2,3\n", "pods.csv:2: expected 11 fields, found 4"},
      {"negative", std::string(kPodHeader) + "p,-1,2,0,0,,,,,,\n",
       "pods.csv:2: cpu_milli \"-1\" is not a whole number"},
      {"not a number", std::string(kPodHeader) + "p,1,2x,0,0,,,,,,\n",
       "pods.csv:2: memory_mib \"2x\" is not a whole number"},
      {"too large", std::string(kPodHeader) + "p,99999999999999999999,2,0,0,,,,,,\n",
       "is not a whole number up to 2^40"},
      {"a name that is not plain", std::string(kPodHeader) + "p\"q,1,2,0,0,,,,,,\n",
       "pods.csv:2: name \"p\"q\" is not a plain name"},
      {"more thousandths than GPUs", std::string(kPodHeader) + "p,1,2,1,1500,,,,,,\n",
       "pods.csv:2: 1 GPUs of 1500 thousandths"},
  };
  for (const auto& c : pod_cases) {
    auto r = parse_trace_pods(c.text, "pods.csv");
    ASSERT_FALSE(r) << c.what;
    EXPECT_NE(r.message().find(c.error), std::string::npos) << c.what << ": " << r.message();
  }
  const std::vector<Case> node_cases = {
      {"no gpu column", "sn,cpu_milli,memory_mib\n", "nodes.csv:1: the header has no column gpu"},
      {"listed twice", std::string(kNodeHeader) + "a,1,1,1,T4\na,1,1,1,T4\n", "nodes.csv:3: node a is listed twice"},
      {"empty name", std::string(kNodeHeader) + ",1,1,1,T4\n", "nodes.csv:2: sn \"\" is not a plain name"},
      {"absurd GPU count", std::string(kNodeHeader) + "a,1,1,100000,T4\n", "nodes.csv:2: 100000 GPUs on one node"},
      {"memory that overflows bytes", std::string(kNodeHeader) + "a,1,9999999999999,1,T4\n",
       "is not a whole number up to 2^40"},
  };
  for (const auto& c : node_cases) {
    auto r = parse_trace_nodes(c.text, "nodes.csv", "nvidia.com/gpu", 1);
    ASSERT_FALSE(r) << c.what;
    EXPECT_NE(r.message().find(c.error), std::string::npos) << c.what << ": " << r.message();
  }
}

TEST(TraceFiles, TheSimulatorsOwnWorkloadKeepsItsExactHeader) {
  EXPECT_TRUE(parse_workload("name,num_gpu,gpu_milli,cpu_milli,memory_mib\np,1,500,1000,2048\n", "w.csv"));
  auto wrong = parse_workload("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,500,1000,2048\n", "w.csv");
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.message().find("w.csv:1: expected the header"), std::string::npos) << wrong.message();
}

TEST(PaperWorkload, ShufflesThenDrawsWithReplacementUntilTheArrivalTarget) {
  std::vector<WorkloadRow> pods;
  for (int i = 0; i < 40; ++i) {
    WorkloadRow r;
    r.name = "p";
    r.name += std::to_string(i);
    r.num_gpu = i % 4 == 0 ? 0 : 1;
    r.gpu_milli = i % 4 == 0 ? 0 : (i % 2 == 0 ? 500 : 1000);
    pods.push_back(r);
  }
  const std::int64_t capacity = 40;  // the 40 pods ask 25 GPUs; 130% is 52
  const auto a = paper_workload(pods, capacity, 42);
  const auto b = paper_workload(pods, capacity, 42);
  const auto c = paper_workload(pods, capacity, 43);
  auto names = [](const std::vector<WorkloadRow>& rows, std::size_t n) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(rows[i].name);
    return out;
  };
  EXPECT_EQ(names(a, a.size()), names(b, b.size())) << "the seed decides";
  EXPECT_NE(names(a, 40), names(c, 40)) << "another seed, another order";
  auto first = names(a, 40), original = names(pods, 40);
  EXPECT_NE(first, original) << "shuffled";
  std::sort(first.begin(), first.end());
  std::sort(original.begin(), original.end());
  EXPECT_EQ(first, original) << "every listed pod once, first";
  std::int64_t asked = 0, before_last = 0;
  for (const auto& r : a) {
    before_last = asked;
    asked += gpu_milli_requested(r);
  }
  EXPECT_GE(asked, 52'000);
  EXPECT_LT(before_last, 52'000) << "stops at the target";
  EXPECT_TRUE(paper_workload({}, 10, 1).empty());
  EXPECT_EQ(paper_workload({pods[0]}, 10, 1).size(), 1u) << "pods without GPUs never reach a GPU target";
}

}  // namespace
}  // namespace extender::sim
