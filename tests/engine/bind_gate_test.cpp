// A bind lands only where kube-scheduler's own filters passed: kube-scheduler sends /filter
// exactly the nodes that passed all of its filters (and calls it not at all when none did, or
// when the pod never reaches a scheduling cycle), so /bind refuses a node that was not among
// those names for the pod's UID or that the daemon's filter failed.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "extender/engine/extender.h"
#include "extender/state/filter_verdicts.h"
#include "support/engine_harness.h"

namespace extender::engine {
namespace {

using namespace std::chrono_literals;

constexpr const char* kInventory = R"(
nodes:
  - name: a
    gpus: {nvidia.com/gpu: 4}
  - name: b
    gpus: {nvidia.com/gpu: 16}
  - name: small
    gpus: {nvidia.com/gpu: 1}
)";

struct Gated : testing::EngineHarness {
  Gated() {
    load_inventory(kInventory);
    ext = engines.emplace_back(builder(local_binder).verdicts(&verdicts).build_owned()).get();
  }
  state::FilterVerdicts verdicts{std::size_t{1} << 20, 10min};
  Extender* ext = nullptr;
};

using testing::gpu_pod;

wire::ExtenderArgs args_for(const model::Pod& pod, std::vector<std::string> names) {
  wire::ExtenderArgs a;
  a.pod = pod;
  a.set_node_names(std::move(names));
  return a;
}

TEST(BindGate, EachSpecKubeSchedulerRefusesOnNodeAIsRefusedAtBindOnNodeA) {
  // What kube-scheduler does with each spec of the attack: which of its filters fails node a,
  // and which nodes it then sends to /filter (none: it does not call the extender at all).
  struct Row {
    const char* spec;
    const char* refused_by;
    std::optional<std::vector<std::string>> sent;
  };
  const std::vector<std::string> only_b = {"b"};
  const std::vector<Row> rows = {
      {"a hostPort another pod holds on a", "NodePorts", only_b},
      {"ephemeral-storage: 10Ti", "NodeResourcesFit (no node has it)", std::nullopt},
      {"an extended resource node a lacks", "NodeResourcesFit", only_b},
      {"hugepages-2Mi node a lacks", "NodeResourcesFit", only_b},
      {"pod-level spec.resources over node a's room", "NodeResourcesFit", only_b},
      {"required pod affinity to pods only on b", "InterPodAffinity", only_b},
      {"required anti-affinity to a pod on a", "InterPodAffinity", only_b},
      {"topology spread, DoNotSchedule, a's zone full", "PodTopologySpread", only_b},
      {"schedulingGates not yet removed", "none: the pod never enters a scheduling cycle", std::nullopt},
      {"a claim bound to b's local PersistentVolume", "VolumeBinding", only_b},
      {"a ResourceClaim that does not exist", "DynamicResources (PreFilter)", std::nullopt},
      {"node a allows pods: 0", "NodeResourcesFit", only_b},
      {"node a has no cpu allocatable", "NodeResourcesFit", only_b},
  };
  Gated h;
  int uid = 0;
  for (const Row& r : rows) {
    const model::Pod pod = gpu_pod("u" + std::to_string(++uid), "1");
    if (r.sent) {
      const auto answer = h.ext->filter(args_for(pod, *r.sent));
      ASSERT_EQ(answer.result.node_names->size(), r.sent->size()) << r.spec;
    } else {
      h.ext->prioritize(args_for(pod, {"a", "b"}), std::nullopt);  // known to the daemon, never filtered
    }
    const BindAnswer on_a = h.ext->bind({pod.name, pod.namespace_name, pod.uid, "a"});
    EXPECT_EQ(on_a.refusal, Refusal::kNotFiltered) << r.spec << " (" << r.refused_by << "): " << on_a.error;
    EXPECT_FALSE(on_a.error.empty()) << r.spec;
    const BindAnswer on_b = h.ext->bind({pod.name, pod.namespace_name, pod.uid, "b"});
    if (r.sent) {
      EXPECT_EQ(on_b.error, "") << r.spec << ": b passed both filters";
    } else {
      EXPECT_EQ(on_b.refusal, Refusal::kNotFiltered) << r.spec << ": never filtered";
    }
  }
}

TEST(BindGate, ANodeKubeSchedulerSentButTheDaemonFailedIsRefusedAndTheLatestFilterCounts) {
  Gated h;
  const model::Pod pod = gpu_pod("u-two", "2");
  const auto answer = h.ext->filter(args_for(pod, {"small", "a"}));
  ASSERT_EQ(answer.result.node_names->size(), 1u);
  ASSERT_EQ(answer.result.node_names->front(), "a");
  EXPECT_EQ(h.ext->bind({pod.name, pod.namespace_name, pod.uid, "small"}).refusal, Refusal::kNotFiltered);
  h.ext->filter(args_for(pod, {"b"}));  // a later cycle: only b
  EXPECT_EQ(h.ext->bind({pod.name, pod.namespace_name, pod.uid, "a"}).refusal, Refusal::kNotFiltered);
  EXPECT_EQ(h.ext->bind({pod.name, pod.namespace_name, pod.uid, "b"}).error, "");
}

TEST(BindGate, TheEveryPodEntryCannotChangeWhatBindAccepts) {
  // The relay forwards the every-pod verbs for any local process with the daemon's client
  // certificate: a GPU pod's uid sent there as a pod without GPUs, naming another node, must not
  // replace the verdicts kube-scheduler's /filter left for its /bind.
  Gated h;
  const model::Pod pod = gpu_pod("u-gpu", "2");
  ASSERT_EQ(h.ext->filter(args_for(pod, {"a"})).result.node_names->size(), 1u);
  model::Pod disguised = pod;
  disguised.containers.clear();
  const auto unmanaged = h.ext->filter(args_for(disguised, {"small"}), std::nullopt, PodScope::kUnmanaged);
  ASSERT_EQ(unmanaged.result.node_names->size(), 1u) << "a pod that needs nothing managed passes";
  EXPECT_EQ(h.ext->bind({pod.name, pod.namespace_name, pod.uid, "a"}).error, "") << "kube-scheduler's choice stands";
}

}  // namespace
}  // namespace extender::engine
