#include "extender/engine/extender.h"

#include <gtest/gtest.h>

#include "extender/model/supply.h"
#include "extender/sources/inventory.h"
#include "extender/sources/request_nodes.h"
#include "extender/wire/results.h"
#include "support/engine_harness.h"

namespace extender::engine {
namespace {

constexpr const char* kInventory = R"(
nodes:
  - name: small
    labels: {nvidia.com/gpu.memory: "40960"}
    gpus: {nvidia.com/gpu: 2}
    pools: [{name: local, capacity: 100Gi}]
  - name: big
    labels: {nvidia.com/gpu.memory: "81559"}
    gpus: {nvidia.com/gpu: 8}
    pools: [{name: local, devices: [{name: d0, capacity: 500Gi}, {name: d1, capacity: 500Gi}]}]
  - name: cpu
    pools: [{name: local, capacity: 1Ti}]
)";

// Standalone over kInventory; kubernetes() builds another engine over the same state.
struct Harness : testing::EngineHarness {
  explicit Harness(config::Config config = {}) : EngineHarness(std::move(config)) {
    load_inventory(kInventory);
    ext = &standalone();
  }
  Extender* ext = nullptr;
};

model::Pod gpu_pod(const std::string& uid, const char* gpus, const char* memory = nullptr) {
  model::Pod p = testing::gpu_pod(uid, gpus);
  if (memory) p.annotations["scheduler-extender.io/gpu-memory"] = memory;
  return p;
}

void add_volume(model::Pod& p, const char* size) {
  model::PodVolume v;
  v.name = "scratch" + std::to_string(p.volumes.size());
  v.kind = model::PodVolume::Kind::kEphemeral;
  v.storage_class = "local-storage";
  v.storage_request = size;
  p.volumes.push_back(v);
}

wire::ExtenderArgs args_for(model::Pod pod, std::vector<std::string> names = {"small", "big", "cpu"}) {
  wire::ExtenderArgs a;
  a.pod = std::move(pod);
  a.set_node_names(std::move(names));
  return a;
}

wire::BindingArgs bind_args(const model::Pod& p, const std::string& node) {
  return {p.name, p.namespace_name, p.uid, node};
}

TEST(Extender, FilterClassifiesEveryNode) {
  Harness h;
  auto a = h.ext->filter(args_for(gpu_pod("u1", "4")));
  EXPECT_EQ(*a.result.node_names, (std::vector<std::string_view>{"big"}));
  EXPECT_EQ(a.result.failed_unresolvable.at("small"), "nvidia.com/gpu: pod needs 4, node has 2 allocatable");
  EXPECT_EQ(a.result.failed_unresolvable.at("cpu"), "nvidia.com/gpu: pod needs 4, node has none");
  EXPECT_TRUE(a.result.failed.empty());
  EXPECT_TRUE(a.result.error.empty());
}

TEST(Extender, UnknownNamesFailWithAReasonNotAnError) {
  Harness h;
  auto a = h.ext->filter(args_for(gpu_pod("u1", "1"), {"big", "ghost"}));
  EXPECT_EQ(*a.result.node_names, (std::vector<std::string_view>{"big"}));
  EXPECT_EQ(a.result.failed.at("ghost"), "node is not known to scheduler-extender");
  EXPECT_TRUE(a.result.error.empty());
}

TEST(Extender, NamesThatNeedEscapingAreEscapedInTheAnswer) {
  Harness h;
  auto a = h.ext->filter(args_for(gpu_pod("u1", "4"), {"small", "big", "odd<node>"}));
  EXPECT_TRUE(a.result.node_names_plain) << "every known node's name is of the DNS alphabet";
  const std::string json = wire::encode_filter_result(a.result);
  EXPECT_NE(json.find(R"("odd\u003cnode\u003e":"node is not known to scheduler-extender")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("NodeNames":["big"])"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("small":"nvidia.com/gpu: pod needs 4, node has 2 allocatable")"), std::string::npos) << json;
}

TEST(Extender, PodsNeedingNothingPassEveryNodeEvenUnknownOnes) {
  Harness h;
  auto a = h.ext->filter(args_for(gpu_pod("u1", nullptr), {"ghost", "small"}));
  EXPECT_EQ(*a.result.node_names, (std::vector<std::string_view>{"ghost", "small"}));
  EXPECT_TRUE(a.result.failed.empty());
  auto p = h.ext->prioritize(args_for(gpu_pod("u1", nullptr)));
  EXPECT_TRUE(p.scores.empty()) << "no scorer applies: an empty list";
}

TEST(Extender, GarbageInThePodIsAnErrorInTheAnswer) {
  Harness h;
  auto a = h.ext->filter(args_for(gpu_pod("u1", "two")));
  EXPECT_NE(a.result.error.find("pod ml/pod-u1"), std::string::npos) << a.result.error;
  EXPECT_NE(a.result.error.find("\"two\""), std::string::npos) << a.result.error;
  EXPECT_TRUE(h.ext->prioritize(args_for(gpu_pod("u1", "two"))).scores.empty());
}

TEST(Extender, MemoryFloor) {
  Harness h;
  auto a = h.ext->filter(args_for(gpu_pod("u1", "1", "80Gi")));
  EXPECT_TRUE(a.result.node_names->empty()) << "81559 MiB is below 80 GiB";
  auto b = h.ext->filter(args_for(gpu_pod("u2", "1", "79Gi")));
  EXPECT_EQ(*b.result.node_names, (std::vector<std::string_view>{"big"}));
  EXPECT_EQ(b.result.failed_unresolvable.at("small"),
            "nvidia.com/gpu: pod needs 79 GiB per GPU, node's GPUs have 40 GiB");
}

TEST(Extender, BindRecordsAndRechecks) {
  Harness h;
  model::Pod p1 = gpu_pod("u1", "2");
  model::Pod p2 = gpu_pod("u2", "1");
  // Both pass the filter while nothing is bound ...
  EXPECT_EQ(h.ext->filter(args_for(p1)).result.node_names->front(), "small");
  EXPECT_EQ(h.ext->filter(args_for(p2)).result.node_names->front(), "small");
  // ... the first bind takes the node, the second finds it full at its re-check.
  EXPECT_EQ(h.ext->bind(bind_args(p1, "small")).error, "");
  EXPECT_EQ(h.ext->bind(bind_args(p2, "small")).error,
            "node small no longer fits pod ml/pod-u2: nvidia.com/gpu: pod needs 1, node has 0 free of 2");
  // Binding the same pod to the same node again succeeds, to another node does not.
  EXPECT_EQ(h.ext->bind(bind_args(p1, "small")).error, "");
  EXPECT_EQ(h.ext->bind(bind_args(p1, "big")).error, "pod ml/pod-u1 is already placed on node small");
  // The next filter sees the placement: usage-based, so FailedNodes.
  auto a = h.ext->filter(args_for(gpu_pod("u3", "1")));
  EXPECT_EQ(a.result.failed.at("small"), "nvidia.com/gpu: pod needs 1, node has 0 free of 2");
  // Re-filtering a placed pod ignores its own placement.
  EXPECT_EQ(h.ext->filter(args_for(p1)).result.node_names->front(), "small");
  // Removing the placement frees the node.
  EXPECT_TRUE(h.ext->remove_pod("u1"));
  EXPECT_FALSE(h.ext->remove_pod("u1"));
  EXPECT_EQ(h.ext->bind(bind_args(p2, "small")).error, "");
}

TEST(Extender, BindingAgainWhereAPodAlreadyIsSucceedsWithoutItsDemand) {
  Harness h;
  state::Claim claim;
  claim.owner = "ml/restarted";
  claim.node = "big";
  claim.allocation.gpus["nvidia.com/gpu"] = 1;
  h.state.place("u-restarted", claim);  // as the watch reports a bound pod after a restart
  EXPECT_EQ(h.ext->bind({"restarted", "ml", "u-restarted", "big"}).error, "");
  EXPECT_EQ(h.ext->bind({"restarted", "ml", "u-restarted", "small"}).error,
            "pod ml/restarted is already placed on node big");
}

TEST(Extender, BindRefusesPodsItNeverSaw) {
  Harness h;
  auto b = h.ext->bind({"stranger", "ml", "u-unknown", "big"});
  EXPECT_NE(b.error.find("was not filtered or prioritized"), std::string::npos) << b.error;
  model::Pod p = gpu_pod("u1", "1");
  h.ext->filter(args_for(p));
  EXPECT_EQ(h.ext->bind(bind_args(p, "nowhere")).error, "node nowhere is not known to scheduler-extender");
}

TEST(Extender, VolumesArePlacedOnDevicesAndBalanced) {
  Harness h;
  model::Pod p = gpu_pod("u1", nullptr);
  add_volume(p, "300Gi");
  add_volume(p, "300Gi");
  auto a = h.ext->filter(args_for(p));
  EXPECT_EQ(*a.result.node_names, (std::vector<std::string_view>{"big", "cpu"}));
  EXPECT_EQ(a.result.failed_unresolvable.at("small"),
            "pool local: pod needs 600 GiB, node has 100 GiB free of 100 GiB");
  ASSERT_EQ(h.ext->bind(bind_args(p, "big")).error, "");
  auto claim = h.state.claim_of("u1");
  ASSERT_TRUE(claim);
  ASSERT_EQ(claim->allocation.volumes.size(), 2u);
  EXPECT_NE(claim->allocation.volumes[0].device, claim->allocation.volumes[1].device)
      << "300+300 does not fit one 500 GiB device";

  model::Pod q = gpu_pod("u2", nullptr);
  add_volume(q, "1Gi");
  auto scores = h.ext->prioritize(args_for(q, {"big", "cpu", "small"}));
  ASSERT_EQ(scores.scores.size(), 3u);
  EXPECT_EQ(scores.scores[0].score, 0) << "big holds 2 volumes";
  EXPECT_EQ(scores.scores[1].score, 10);
  EXPECT_EQ(scores.scores[2].score, 10);
}

TEST(Extender, PrioritizeBinpacksGpus) {
  Harness h;
  auto p = h.ext->prioritize(args_for(gpu_pod("u1", "1"), {"small", "big", "ghost"}));
  ASSERT_EQ(p.scores.size(), 3u);
  EXPECT_EQ(p.scores[0].host, "small");
  EXPECT_EQ(p.scores[0].score, 10) << "1/2 after placement is fuller than 1/8";
  EXPECT_EQ(p.scores[1].score, 0);
  EXPECT_EQ(p.scores[2].score, 0) << "unknown nodes score 0";
}

TEST(Extender, UnmanagedScopeRanksPodsThatNeedNothingManagedAndCountsTheirShape) {
  config::Config cfg;
  cfg.scoring.packing = policy::PackingStrategy::kFragmentation;
  Harness h(cfg);
  Extender& ext = *h.ext;
  model::Pod pod = gpu_pod("u1", nullptr);
  pod.containers.front().requests["cpu"] = "2";
  pod.containers.front().requests["memory"] = "1Gi";

  EXPECT_TRUE(ext.prioritize(args_for(pod)).scores.empty()) << "the managed scope: no scores, as before";
  const auto mix_before = ext.shape_mix(h.state.snapshot());
  EXPECT_TRUE(ext.prioritize(args_for(gpu_pod("u2", "1")), {}, PodScope::kUnmanaged).scores.empty())
      << "a GPU pod is the managed entry's";
  auto p = ext.prioritize(args_for(pod), {}, PodScope::kUnmanaged);
  ASSERT_EQ(p.scores.size(), 3u);
  EXPECT_EQ(p.scores[0].score, 9) << "small: 2 GPUs free";
  EXPECT_EQ(p.scores[1].score, 8) << "big: 8 GPUs free";
  EXPECT_EQ(p.scores[2].score, 10) << "cpu: no GPU to keep CPU for";
  const policy::GpuShape cpu_only{0, 0, 0, 2000, std::int64_t{1} << 30};
  auto count = [&](const policy::ShapeMix& mix) {
    for (const auto& [shape, weight] : mix) {
      if (shape == cpu_only) return weight;
    }
    return std::int64_t{0};
  };
  EXPECT_EQ(count(mix_before), 0);
  EXPECT_EQ(count(ext.shape_mix(h.state.snapshot())), 1) << "its shape joins the mix";
}

// One preemption, seen through a watch that lags the scheduler's: the preemptor is nominated to
// "small", where its victim is still terminating in this view, or still placed while kube-scheduler,
// which no longer offers "small", sees room there. Asked for victims elsewhere, the daemon offers
// none (kube-scheduler's own rule for a nominated preemptor, on either face of the lag), so no
// second node is emptied for the same pod.
TEST(Extender, APreemptorNominatedWhereLowerPriorityPodsAreLeavingGetsNoVictimsElsewhere) {
  struct Case {
    const char* what;
    const char* nominated;
    const char* preemptor_gpus;
    bool victim_terminating;
    std::int64_t victim_priority;
    bool small_offered;  // kube-scheduler lists "small" as a candidate, with the victim
    bool victims_on_big;
  };
  const Case cases[] = {
      {"victim still leaving the nominated node", "small", "2", true, 10, false, false},
      {"victim not yet seen leaving; the scheduler sees room on the nominated node", "small", "2", false, 10, false,
       false},
      {"the nominated node offered with its victim: judged as any node", "small", "2", false, 10, true, true},
      {"the nominated node too small even emptied", "small", "4", false, 10, false, true},
      {"the leaving pod outranks the preemptor", "small", "2", true, 5000, false, true},
      {"the placed pod outranks the preemptor", "small", "2", false, 5000, false, true},
      {"not nominated", "", "2", true, 10, false, true},
      {"nominated to a node where nothing leaves", "big", "2", true, 10, false, true},
  };
  for (const Case& c : cases) {
    Harness h;
    state::Claim held;
    held.owner = "ml/low";
    held.node = "small";
    held.allocation.gpus["nvidia.com/gpu"] = 2;
    held.allocation.pods = 1;
    held.terminating = c.victim_terminating;
    held.priority = c.victim_priority;
    h.state.place("low", held);
    model::Pod other_low = gpu_pod("low-big", "8");
    h.ext->filter(args_for(other_low));
    ASSERT_EQ(h.ext->bind(bind_args(other_low, "big")).error, "");

    wire::PreemptionArgs args;
    args.pod = gpu_pod("high", c.preemptor_gpus);
    args.pod.priority = 1000;
    args.pod.nominated_node = c.nominated;
    args.victims_by_node["big"] = {{"low-big"}, {}, 0};
    if (c.small_offered) args.victims_by_node["small"] = {{"low"}, {}, 0};
    const PreemptAnswer out = h.ext->preempt(args);
    EXPECT_EQ(out.victims.count("big") == 1, c.victims_on_big) << c.what << ": " << out.summary.note;
    EXPECT_EQ(out.error, "") << c.what;
  }
}

TEST(Extender, PreemptKeepsNodesWhereEvictionMakesRoom) {
  Harness h;
  model::Pod victim_a = gpu_pod("v1", "1");
  model::Pod victim_b = gpu_pod("v2", "1");
  h.ext->filter(args_for(victim_a));
  h.ext->filter(args_for(victim_b));
  ASSERT_EQ(h.ext->bind(bind_args(victim_a, "small")).error, "");
  ASSERT_EQ(h.ext->bind(bind_args(victim_b, "small")).error, "");

  wire::PreemptionArgs args;
  args.pod = gpu_pod("u1", "2");
  args.victims_by_node["small"] = {{"v2", "v1"}, {}, 1};
  args.victims_by_node["big"] = {{"someone"}, {}, 0};
  args.victims_by_node["cpu"] = {{"x"}, {}, 0};
  auto out = h.ext->preempt(args);
  ASSERT_TRUE(out.victims.count("small"));
  EXPECT_EQ(out.victims.at("small").uids, (std::vector<std::string>{"v2", "v1"})) << "the scheduler's order";
  EXPECT_EQ(out.victims.at("small").num_pdb_violations, 1);
  EXPECT_TRUE(out.victims.count("big")) << "big has room even without evictions";
  EXPECT_FALSE(out.victims.count("cpu")) << "no GPUs: unresolvable, never survives";

  args.victims_by_node["small"] = {{"v1"}, {}, 0};
  EXPECT_FALSE(h.ext->preempt(args).victims.count("small")) << "one victim frees 1 of 2";
  args.victims_by_node["small"] = {{"v1", "unknown-uid"}, {}, 0};
  EXPECT_FALSE(h.ext->preempt(args).victims.count("small")) << "unknown victims free nothing";

  wire::PreemptionArgs nothing;
  nothing.pod = gpu_pod("u9", nullptr);
  nothing.victims_by_node["cpu"] = {{"x"}, {}, 0};
  EXPECT_TRUE(h.ext->preempt(nothing).victims.count("cpu")) << "pods needing nothing: candidates unchanged";
}

TEST(Extender, NotReadyIsAWholeCallError) {
  Harness h;
  h.gate.ready = [] { return std::optional<std::string>("nodes reflector has not synced"); };
  Extender& ext = *h.ext;
  auto a = ext.filter(args_for(gpu_pod("u1", "1")));
  EXPECT_EQ(a.result.error, "scheduler-extender is not ready: nodes reflector has not synced");
  EXPECT_NE(ext.bind({"p", "ns", "u1", "big"}).error.find("not ready"), std::string::npos);
}

}  // namespace
}  // namespace extender::engine

namespace extender::engine {
namespace {

// Records binds instead of calling an API server.
class RecordingBinder : public Binder {
 public:
  std::string bind(const wire::BindingArgs& args, Deadline deadline) override {
    bound.push_back(args.pod_uid);
    deadlines.push_back(deadline);
    return {};
  }
  std::string record_devices(const std::vector<std::pair<std::string, std::string>>& claim_devices, Deadline) override {
    recorded.insert(recorded.end(), claim_devices.begin(), claim_devices.end());
    return {};
  }
  std::string record_gpu_share(const wire::BindingArgs& args, const GpuShareAssignment& share, Deadline) override {
    shares.emplace_back(args.pod_uid, share);
    return {};
  }
  std::vector<std::string> bound;
  std::vector<Deadline> deadlines;
  std::vector<std::pair<std::string, std::string>> recorded;
  std::vector<std::pair<std::string, GpuShareAssignment>> shares;
};

TEST(WhoMayBind, KubernetesModeActsOnlyForPendingPodsOfItsSchedulersThatNeedSomethingManaged) {
  struct Case {
    const char* what;
    std::function<void(model::Pod&)> tweak;  // applied to the pod the API server shows
    bool known = true;                       // the API server has the pod
    Refusal refusal;
  };
  const Case cases[] = {
      {"pending pod of a configured scheduler", [](model::Pod&) {}, true, Refusal::kNone},
      {"another scheduler's pod", [](model::Pod& p) { p.scheduler_name = "tenant-scheduler"; }, true,
       Refusal::kOtherScheduler},
      {"the second scheduler's pod, once configured", [](model::Pod& p) { p.scheduler_name = "gpu-scheduler"; }, true,
       Refusal::kNone},
      {"a pod bound elsewhere", [](model::Pod& p) { p.node_name = "small"; }, true, Refusal::kBound},
      {"a terminating pod", [](model::Pod& p) { p.terminating = true; }, true, Refusal::kTerminating},
      {"a pod needing nothing managed", [](model::Pod& p) { p.containers[0].requests.clear(); }, true,
       Refusal::kNothingManaged},
      {"a pod the API server does not have", [](model::Pod&) {}, false, Refusal::kUnknownPod},
  };
  for (const auto& c : cases) {
    Harness h;
    h.cfg.mode = config::Mode::kKubernetes;
    h.cfg.kubernetes.scheduler_names = {"default-scheduler", "gpu-scheduler"};
    model::Pod pod = gpu_pod("u1", "1");
    c.tweak(pod);
    RecordingBinder binder;
    if (c.known) h.pods.pending[pod.uid] = pod;
    Extender& ext = h.kubernetes(binder);
    BindAnswer a = ext.bind({pod.name, pod.namespace_name, pod.uid, "big"});
    EXPECT_EQ(a.refusal, c.refusal) << c.what << ": " << a.error;
    EXPECT_EQ(a.error.empty(), c.refusal == Refusal::kNone) << c.what << ": " << a.error;
    EXPECT_EQ(binder.bound.size(), c.refusal == Refusal::kNone ? 1u : 0u) << c.what;
    EXPECT_EQ(h.state.claim_of("u1").has_value(), c.refusal == Refusal::kNone) << c.what << ": nothing is reserved";

    PreemptAnswer p = ext.preempt({pod, {{"big", {{"victim"}, {}, 0}}}});
    if (c.refusal == Refusal::kNone || c.refusal == Refusal::kNothingManaged) {
      EXPECT_EQ(p.refusal, Refusal::kNone) << c.what;
    } else {
      EXPECT_EQ(p.refusal, c.refusal) << c.what;
      EXPECT_TRUE(p.victims.empty()) << c.what << ": a refused preemptor gets no victims";
    }
  }
}

TEST(WhoMayBind, APodTheWatchHasNotShownIsReadFromTheApiServerAndItsUidChecked) {
  Harness h;
  h.cfg.mode = config::Mode::kKubernetes;
  RecordingBinder binder;
  h.pods.fetch = [](const std::string& ns, const std::string& name) -> std::optional<model::Pod> {
    model::Pod p = gpu_pod(name == "pod-u1" ? "u1" : "recreated", "1");
    return p;
  };
  Extender& ext = h.kubernetes(binder);
  EXPECT_EQ(ext.bind({"pod-u1", "ml", "u1", "big"}).error, "");
  BindAnswer other = ext.bind({"pod-u2", "ml", "u2", "big"});
  EXPECT_EQ(other.refusal, Refusal::kUnknownPod) << "a pod of the same name but another uid is not this pod";
  EXPECT_EQ(binder.bound, std::vector<std::string>{"u1"});
}

TEST(WhoMayBind, APodThatCouldNotBeReadIsNotCalledAbsent) {
  Harness h;
  h.cfg.mode = config::Mode::kKubernetes;
  RecordingBinder binder;
  h.pods.fetch = [](const std::string&, const std::string&) -> Result<std::optional<model::Pod>> {
    return Error{"reads of pods the watch has not shown are at their limit (2 at once, 10/s)"};
  };
  Extender& ext = h.kubernetes(binder);
  BindAnswer a = ext.bind({"pod-u1", "ml", "u1", "big"});
  EXPECT_EQ(a.refusal, Refusal::kUnknownPod);
  EXPECT_NE(a.error.find("not in the watch yet and could not be read: reads of pods"), std::string::npos) << a.error;
  EXPECT_EQ(a.error.find("is not a pod the API server has"), std::string::npos) << a.error;
  EXPECT_TRUE(binder.bound.empty());
}

TEST(WhoMayBind, StandaloneModeIgnoresSchedulerNamesAndRefusesPodsThatNeedNothingManaged) {
  Harness h;
  wire::ExtenderArgs args;
  args.pod = gpu_pod("cpu-only", nullptr);
  args.set_node_names({"big"});
  h.ext->filter(args);
  BindAnswer a = h.ext->bind({args.pod.name, args.pod.namespace_name, args.pod.uid, "big"});
  EXPECT_NE(a.refusal, Refusal::kNone) << a.error;
  EXPECT_FALSE(h.state.claim_of("cpu-only"));
  args.pod = gpu_pod("gpu", "1");
  args.pod.scheduler_name = "any-scheduler";
  h.ext->filter(args);
  EXPECT_EQ(h.ext->bind({args.pod.name, args.pod.namespace_name, args.pod.uid, "big"}).error, "");
}

TEST(WhoMayBind, TheBinderAnswersByTheBindsStartPlusBindTimeout) {
  Harness h;
  h.cfg.mode = config::Mode::kKubernetes;
  h.cfg.kubernetes.bind_timeout = std::chrono::milliseconds(1500);
  model::Pod pod = gpu_pod("u1", "1");
  RecordingBinder binder;
  h.pods.pending[pod.uid] = pod;
  Extender& ext = h.kubernetes(binder);
  const auto before = std::chrono::steady_clock::now();
  ASSERT_EQ(ext.bind({pod.name, pod.namespace_name, pod.uid, "big"}).error, "");
  const auto after = std::chrono::steady_clock::now();
  ASSERT_EQ(binder.deadlines.size(), 1u);
  EXPECT_GE(binder.deadlines[0], before + std::chrono::milliseconds(1500));
  EXPECT_LE(binder.deadlines[0], after + std::chrono::milliseconds(1500)) << "one budget for the whole bind";
}

// Nodes as the watch reads them: 8 GPUs, 64 CPUs, 512Gi, 110 pods unless told otherwise.
model::Node cluster_node(const std::string& name, model::StringMap labels, std::vector<model::Taint> taints = {},
                         const char* cpu = "64", const char* memory = "512Gi", const char* pods = "110") {
  model::Node n;
  n.name = name;
  n.labels = std::move(labels);
  n.taints = std::move(taints);
  n.allocatable = {{"nvidia.com/gpu", "8"}, {"cpu", cpu}, {"memory", memory}, {"pods", pods}};
  return n;
}

// A GPU pod of team a: 1 GPU, 2 CPUs, 4Gi, nodeSelector team=a.
model::Pod team_pod(const std::string& uid, const char* cpu = "2") {
  model::Pod p = gpu_pod(uid, "1");
  p.containers[0].requests["cpu"] = cpu;
  p.containers[0].requests["memory"] = "4Gi";
  p.constraints.node_selector = {{"team", "a"}};
  return p;
}

// Kubernetes mode over nodes the watch has, with pods pending as the API server shows them.
struct WatchedCluster : testing::EngineHarness {
  RecordingBinder binder;
  std::map<std::string, model::Pod>& pending = pods.pending;
  Extender* ext = nullptr;

  explicit WatchedCluster(const std::vector<model::Node>& nodes) {
    cfg.mode = config::Mode::kKubernetes;
    std::vector<model::NodeSupply> supplies;
    for (const auto& n : nodes) supplies.push_back(model::supply_from_node(n, cfg.supply_rules()));
    state.upsert_nodes(supplies);
    ext = &kubernetes(binder);
  }
  // A pod the watch shows bound to `node`, holding `cpu_milli` and a pod slot.
  void bound_elsewhere(const std::string& uid, const std::string& node, std::int64_t cpu_milli) {
    state::Claim claim;
    claim.owner = "other/" + uid;
    claim.node = node;
    claim.allocation.cpu_milli = cpu_milli;
    claim.allocation.pods = 1;
    state.place(uid, claim);
  }
};

TEST(BindEligibility, KubernetesModeBindsOnlyWhereKubeSchedulerCouldHave) {
  struct Case {
    const char* what;
    const char* node;
    std::function<void(model::Pod&)> tweak;
    Refusal refusal;
    const char* mentions = "";
    std::function<void(wire::BindingArgs&)> ask = [](wire::BindingArgs&) {};
  };
  const auto none = [](model::Pod&) {};
  const std::vector<Case> cases = {
      {"a node of the pod's team", "a", none, Refusal::kNone},
      {"another team's node", "b", none, Refusal::kNodeIneligible, "nodeSelector team=a: node has team=b"},
      {"another team's tainted node", "b-tainted", none, Refusal::kNodeIneligible,
       "taint team=b:NoSchedule, which the pod does not tolerate"},
      {"a tainted node the pod tolerates and selects", "b-tainted",
       [](model::Pod& p) {
         p.constraints.node_selector = {{"team", "b"}};
         p.constraints.tolerations = {{"team", "Equal", "b", "NoSchedule"}};
       },
       Refusal::kNone},
      {"a cordoned node", "cordoned", none, Refusal::kNodeIneligible, "unschedulable"},
      {"a cordoned node, tolerated", "cordoned",
       [](model::Pod& p) {
         p.constraints.tolerations = {{"node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"}};
       },
       Refusal::kNone},
      {"16 CPUs on a 1-CPU node", "one-cpu", [](model::Pod& p) { p.containers[0].requests["cpu"] = "16"; },
       Refusal::kNodeIneligible, "cpu: pod requests 16, node has 1 free of 1"},
      {"CPU of an init container counts", "one-cpu",
       [](model::Pod& p) {
         p.containers[0].requests["cpu"] = "500m";
         model::Container init;
         init.name = "setup";
         init.requests["cpu"] = "2";
         p.init_containers.push_back(init);
       },
       Refusal::kNodeIneligible, "cpu: pod requests 2, node has 1 free of 1"},
      {"memory beyond the node's", "small-memory", none, Refusal::kNodeIneligible,
       "memory: pod requests 4 GiB, node has 1 GiB free of 1 GiB"},
      {"no pod slot left", "one-pod", none, Refusal::kNodeIneligible, "pods: node runs 1 of 1 allocatable"},
      {"required node affinity not met", "a",
       [](model::Pod& p) {
         p.constraints.required_node_affinity = std::vector<model::NodeSelectorTerm>{{{{"zone", "In", {"z1"}}}, {}}};
       },
       Refusal::kNodeIneligible, "required node affinity"},
      {"required node affinity on the node's name", "a",
       [](model::Pod& p) {
         p.constraints.required_node_affinity =
             std::vector<model::NodeSelectorTerm>{{{}, {{"metadata.name", "In", {"a"}}}}};
       },
       Refusal::kNone},
      {"the uid of a pod of another name", "a", none, Refusal::kNameMismatch, "the uid belongs to another pod",
       [](wire::BindingArgs& a) { a.pod_name = "someone-else"; }},
      {"the uid of a pod of another namespace", "a", none, Refusal::kNameMismatch, "the uid belongs to another pod",
       [](wire::BindingArgs& a) { a.pod_namespace = "default"; }},
  };
  for (const auto& c : cases) {
    WatchedCluster h({cluster_node("a", {{"team", "a"}}), cluster_node("b", {{"team", "b"}}),
                      cluster_node("b-tainted", {{"team", "b"}}, {{"team", "b", "NoSchedule"}}),
                      cluster_node("cordoned", {{"team", "a"}}), cluster_node("one-cpu", {{"team", "a"}}, {}, "1"),
                      cluster_node("small-memory", {{"team", "a"}}, {}, "64", "1Gi"),
                      cluster_node("one-pod", {{"team", "a"}}, {}, "64", "512Gi", "1")});
    model::Node cordoned = cluster_node("cordoned", {{"team", "a"}});
    cordoned.unschedulable = true;
    h.state.upsert_nodes({model::supply_from_node(cordoned, h.cfg.supply_rules())});
    h.bound_elsewhere("daemonset-pod", "one-pod", 100);
    model::Pod pod = team_pod("u1");
    c.tweak(pod);
    h.pending[pod.uid] = pod;
    wire::BindingArgs args = bind_args(pod, c.node);
    c.ask(args);
    BindAnswer a = h.ext->bind(args);
    EXPECT_EQ(a.refusal, c.refusal) << c.what << ": " << a.error;
    EXPECT_NE(a.error.find(c.mentions), std::string::npos) << c.what << ": " << a.error;
    EXPECT_EQ(a.error.empty(), c.refusal == Refusal::kNone) << c.what << ": " << a.error;
    EXPECT_EQ(h.binder.bound.size(), c.refusal == Refusal::kNone ? 1u : 0u) << c.what << ": no Binding when refused";
    EXPECT_EQ(h.state.claim_of("u1").has_value(), c.refusal == Refusal::kNone)
        << c.what << ": nothing reserved when refused";
  }
}

TEST(BindEligibility, CpuHeldByPodsOnTheNodeAndByBindsInFlightCounts) {
  WatchedCluster h({cluster_node("a", {{"team", "a"}}, {}, "8")});
  h.bound_elsewhere("web", "a", 3000);
  h.pending["u1"] = team_pod("u1", "4");
  h.pending["u2"] = team_pod("u2", "2");
  h.pending["u3"] = team_pod("u3", "1");
  EXPECT_EQ(h.ext->bind(bind_args(h.pending["u1"], "a")).error, "") << "3 + 4 of 8";
  BindAnswer second = h.ext->bind(bind_args(h.pending["u2"], "a"));
  EXPECT_EQ(second.refusal, Refusal::kNodeIneligible);
  EXPECT_NE(second.error.find("cpu: pod requests 2, node has 1 free of 8"), std::string::npos)
      << "u1's reservation holds its CPUs until the watch shows it bound: " << second.error;
  EXPECT_EQ(h.ext->bind(bind_args(h.pending["u3"], "a")).error, "") << "the last CPU";
  EXPECT_EQ(h.binder.bound, (std::vector<std::string>{"u1", "u3"}));
}

TEST(BindEligibility, APreemptorUnderAnotherPodsNameGetsNoVictims) {
  WatchedCluster h({cluster_node("a", {{"team", "a"}})});
  model::Pod pod = team_pod("u1");
  h.pending[pod.uid] = pod;
  model::Pod renamed = pod;
  renamed.name = "someone-else";
  PreemptAnswer p = h.ext->preempt({renamed, {{"a", {{"victim"}, {}, 0}}}});
  EXPECT_EQ(p.refusal, Refusal::kNameMismatch) << p.summary.note;
  EXPECT_TRUE(p.victims.empty());
  EXPECT_EQ(h.ext->preempt({pod, {{"a", {{"victim"}, {}, 0}}}}).refusal, Refusal::kNone);
}

TEST(BindEligibility, StandaloneJudgesWhatItKnowsOfTheNodeAndThePodItFiltered) {
  Harness h;
  sources::RequestNodes request_nodes(h.state, {}, h.cfg.supply_rules(), 100);
  Extender& ext = h.standalone(&request_nodes);

  model::Node whole = cluster_node("team-b", {{"team", "b"}});
  model::Node partial = cluster_node("team-b-partial", {{"team", "b"}});
  partial.labels_complete = false;  // decoded with only the labels GPUs need
  model::Node tainted = cluster_node("tainted", {}, {{"gpu", "", "NoExecute"}});
  wire::ExtenderArgs args;
  args.pod = team_pod("u1");
  args.nodes.emplace();
  for (const auto* n : {&whole, &partial, &tainted}) args.nodes->push_back({*n, "{}"});
  ASSERT_EQ(ext.filter(args).result.error, "");

  BindAnswer selector = ext.bind(bind_args(args.pod, "team-b"));
  EXPECT_EQ(selector.refusal, Refusal::kNodeIneligible) << selector.error;
  EXPECT_NE(selector.error.find("nodeSelector team=a: node has team=b"), std::string::npos) << selector.error;
  BindAnswer taint = ext.bind(bind_args(args.pod, "tainted"));
  EXPECT_NE(taint.error.find("taint gpu:NoExecute"), std::string::npos) << taint.error;
  wire::BindingArgs renamed = bind_args(args.pod, "big");
  renamed.pod_name = "someone-else";
  EXPECT_EQ(ext.bind(renamed).refusal, Refusal::kNameMismatch);
  EXPECT_FALSE(h.state.claim_of("u1")) << "nothing placed by a refused bind";

  EXPECT_EQ(ext.bind(bind_args(args.pod, "team-b-partial")).error, "") << "partial labels are not judged";
  EXPECT_TRUE(ext.remove_pod("u1"));
  EXPECT_EQ(ext.bind(bind_args(args.pod, "big")).error, "") << "an inventory node's labels are not judged";
}

TEST(Leadership, AStandbyDecidesNoVerbAndALapseBeforeTheBindingAbandonsIt) {
  Harness h;
  h.cfg.mode = config::Mode::kKubernetes;
  model::Pod pod = gpu_pod("u1", "1");
  RecordingBinder binder;
  std::optional<std::string> standby;
  int asked = 0;
  int lapse_after = -1;  // answers "leads" this many times, then "lapsed"
  h.pods.pending[pod.uid] = pod;
  h.gate.leading = [&]() -> std::optional<std::string> {
    ++asked;
    if (standby) return standby;
    if (lapse_after >= 0 && asked > lapse_after) return std::string("leadership lapsed");
    return std::nullopt;
  };
  Extender& ext = h.kubernetes(binder);

  standby = "this replica is a standby; ext-0 leads";
  EXPECT_NE(ext.filter(args_for(pod)).result.error.find("standby; ext-0 leads"), std::string::npos);
  EXPECT_TRUE(ext.prioritize(args_for(pod)).scores.empty());
  EXPECT_NE(ext.bind({pod.name, pod.namespace_name, pod.uid, "big"}).error.find("standby"), std::string::npos);
  PreemptAnswer vetted = ext.preempt({pod, {{"big", {{"victim"}, {}, 0}}}});
  EXPECT_NE(vetted.error.find("standby"), std::string::npos) << "a standby fails the call instead of approving";
  EXPECT_TRUE(vetted.victims.empty());
  EXPECT_TRUE(binder.bound.empty());
  EXPECT_FALSE(h.state.claim_of("u1"));

  standby.reset();
  asked = 0;
  lapse_after = 1;  // leads when the bind starts, lapsed just before the Binding
  BindAnswer lapsed = ext.bind({pod.name, pod.namespace_name, pod.uid, "big"});
  EXPECT_NE(lapsed.error.find("abandoned: leadership lapsed"), std::string::npos) << lapsed.error;
  EXPECT_TRUE(binder.bound.empty()) << "no Binding leaves a replica that no longer leads";
  EXPECT_FALSE(h.state.claim_of("u1")) << "its reservation is dropped";

  lapse_after = -1;
  EXPECT_EQ(ext.bind({pod.name, pod.namespace_name, pod.uid, "big"}).error, "");
  EXPECT_EQ(binder.bound, std::vector<std::string>{"u1"});
}

}  // namespace
}  // namespace extender::engine
