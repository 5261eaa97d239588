// Binding GPU share pods: the device the policy chose under the bind lock is what the placement
// holds (standalone: in memory) and what the Binder is asked to record on the pod (kubernetes
// mode: index, the pod's request and the device's memory in the share unit), before the Binding;
// a failed record binds nothing and gives the share back.
#include <gtest/gtest.h>

#include "extender/engine/extender.h"
#include "support/engine_harness.h"

namespace extender::engine {
namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

// Two 16 GiB GPUs shared through the gpushare device plugin.
constexpr const char* kInventory = R"(
nodes:
  - name: share
    gpus: {aliyun.com/gpu-mem: 32, aliyun.com/gpu-count: 2}
  - name: whole
    gpus: {nvidia.com/gpu: 2}
    gpu_memory: {nvidia.com/gpu: 16Gi}
)";

model::Pod share_pod(const std::string& uid, const char* gib) {
  model::Pod p;
  p.uid = uid;
  p.name = uid;
  p.namespace_name = "ml";
  model::Container c;
  c.name = "main";
  c.requests["aliyun.com/gpu-mem"] = gib;
  c.limits["aliyun.com/gpu-mem"] = gib;
  p.containers.push_back(c);
  return p;
}

// Records, in order, what the engine asks of the cluster.
class RecordingBinder : public Binder {
 public:
  std::string bind(const wire::BindingArgs& args, Deadline) override {
    calls.push_back("bind " + args.pod_uid + " " + args.node);
    return {};
  }
  std::string record_devices(const std::vector<std::pair<std::string, std::string>>&, Deadline) override { return {}; }
  std::string record_gpu_share(const wire::BindingArgs& args, const GpuShareAssignment& share, Deadline) override {
    calls.push_back("share " + args.pod_uid + " idx=" + std::to_string(share.index) +
                    " pod=" + std::to_string(share.pod_units) + " dev=" + std::to_string(share.device_units));
    return share_error;
  }
  std::vector<std::string> calls;
  std::string share_error;
};

struct Harness : testing::EngineHarness {
  explicit Harness(bool kubernetes) {
    if (kubernetes) cfg.mode = config::Mode::kKubernetes;
    load_inventory(kInventory);
    ext = kubernetes ? &EngineHarness::kubernetes(binder) : &standalone();
  }
  BindAnswer bind(const model::Pod& pod, const std::string& node = "share") {
    pods.pending[pod.uid] = pod;
    wire::ExtenderArgs args;
    args.pod = pod;
    args.set_node_names({node});
    ext->filter(args);
    return ext->bind({pod.name, pod.namespace_name, pod.uid, node});
  }
  // Each device's shared bytes, as the state holds them.
  std::vector<std::int64_t> shared_bytes() {
    const auto usage = state.snapshot().find("share")->usage_excluding("", SteadyClock::now());
    std::vector<std::int64_t> out(2, 0);
    for (const auto& [index, use] : usage.gpu_devices) out.at(static_cast<std::size_t>(index)) = use.bytes;
    return out;
  }

  RecordingBinder binder;
  Extender* ext = nullptr;
};

TEST(GpuShareBind, TheDeviceChosenAtBindIsTheOneRecorded) {
  struct Step {
    const char* pod;
    const char* gib;
    std::int64_t device;
  };
  // binpack: the fullest device that still holds the share.
  const Step steps[] = {{"a", "8", 0}, {"b", "8", 0}, {"c", "10", 1}, {"d", "6", 1}};
  for (bool kubernetes : {false, true}) {
    Harness h(kubernetes);
    std::vector<std::string> want_calls;
    for (const auto& s : steps) {
      BindAnswer a = h.bind(share_pod(s.pod, s.gib));
      ASSERT_EQ(a.error, "") << s.pod;
      auto claim = h.state.claim_of(s.pod);
      ASSERT_TRUE(claim) << s.pod;
      EXPECT_EQ(claim->allocation.gpu_devices,
                (std::vector<model::GpuHold>{{s.device, std::stoll(s.gib) * kGiB, false}}))
          << s.pod << (kubernetes ? " (kubernetes)" : " (standalone)");
      EXPECT_EQ(claim->kind, kubernetes ? state::Claim::Kind::kReserved : state::Claim::Kind::kPlaced) << s.pod;
      want_calls.push_back(std::string("share ") + s.pod + " idx=" + std::to_string(s.device) + " pod=" + s.gib +
                           " dev=16");
      want_calls.push_back(std::string("bind ") + s.pod + " share");
    }
    EXPECT_EQ(h.shared_bytes(), (std::vector<std::int64_t>{16 * kGiB, 16 * kGiB}));
    EXPECT_EQ(h.binder.calls, kubernetes ? want_calls : std::vector<std::string>{})
        << "the share is recorded on the pod before its Binding, and only in kubernetes mode";
  }
}

TEST(GpuShareBind, AShareThatCannotBeRecordedIsNotBoundAndIsGivenBack) {
  Harness h(true);
  h.binder.share_error = "recording GPU 0 on pod ml/a (403): forbidden";
  BindAnswer a = h.bind(share_pod("a", "8"));
  EXPECT_EQ(a.error, "binding ml/a to share failed: recording GPU 0 on pod ml/a (403): forbidden");
  EXPECT_EQ(h.binder.calls, std::vector<std::string>{"share a idx=0 pod=8 dev=16"})
      << "no Binding after a failed record";
  EXPECT_FALSE(h.state.claim_of("a")) << "the reservation is dropped";
  EXPECT_EQ(h.shared_bytes(), (std::vector<std::int64_t>{0, 0}));
}

TEST(GpuShareBind, WholeGpuPodsRecordNoShare) {
  Harness h(true);
  model::Pod p = share_pod("w", "8");
  p.containers[0].requests = {{"nvidia.com/gpu", "1"}};
  p.containers[0].limits = p.containers[0].requests;
  BindAnswer a = h.bind(p, "whole");
  EXPECT_EQ(a.error, "");
  EXPECT_EQ(h.binder.calls, std::vector<std::string>{"bind w whole"});
}

}  // namespace
}  // namespace extender::engine
