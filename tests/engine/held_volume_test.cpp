// A generic ephemeral volume whose claim already holds its space on a node (the scheduler's
// VolumeBinding selected the node before /bind): the pod's own volume is that space, counted once.
#include <gtest/gtest.h>

#include "extender/engine/extender.h"
#include "support/engine_harness.h"

namespace extender::engine {
namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

class RecordingBinder : public Binder {
 public:
  std::string bind(const wire::BindingArgs& args, Deadline) override {
    bound.push_back(args.pod_uid);
    return {};
  }
  std::string record_devices(const std::vector<std::pair<std::string, std::string>>&, Deadline) override { return {}; }
  std::string record_gpu_share(const wire::BindingArgs&, const GpuShareAssignment&, Deadline) override { return {}; }
  std::vector<std::string> bound;
};

TEST(HeldVolume, AnEphemeralVolumeWhoseClaimIsBoundThereIsNotCountedAgain) {
  testing::EngineHarness h;
  h.cfg.mode = config::Mode::kKubernetes;
  h.load_inventory("nodes:\n  - {name: n, pools: [{name: local, capacity: 100Gi}]}\n");
  state::ClusterState& state = h.state;
  // The claim the ephemeral-volume controller made for the pod's "scratch" volume, placed on n.
  state::Claim held;
  held.owner = "ml/etl-scratch";
  held.source = "volume";
  held.node = "n";
  model::VolumePlacement v;
  v.volume = "ml/etl-scratch";
  v.pool = "local";
  v.bytes = 80 * kGiB;
  v.claim = "ml/etl-scratch";
  v.freed_with = "u-etl";
  held.allocation.volumes.push_back(v);
  state.place("pvc-etl", held);

  model::Pod pod;
  pod.uid = "u-etl";
  pod.name = "etl";
  pod.namespace_name = "ml";
  pod.scheduler_name = "default-scheduler";
  pod.containers.push_back({});
  pod.volumes.push_back(
      {"scratch", model::PodVolume::Kind::kEphemeral, "", std::string("local-storage"), std::string("80Gi")});
  RecordingBinder binder;
  h.pods.pending[pod.uid] = pod;
  h.claims.lookup = [](const std::string& ns, const std::string& name) -> std::optional<model::ClaimInfo> {
    if (ns == "ml" && name == "etl-scratch")
      return model::ClaimInfo{"local-storage", 80 * kGiB, true, "n", 0, false, "", ""};
    return std::nullopt;
  };
  Extender& ext = h.kubernetes(binder);
  wire::ExtenderArgs args;
  args.pod = pod;
  args.set_node_names({"n"});
  FilterAnswer a = ext.filter(args);
  ASSERT_TRUE(a.result.node_names) << a.result.error;
  EXPECT_EQ(*a.result.node_names, std::vector<std::string_view>{"n"})
      << "80Gi of 100Gi counted twice: " << (a.result.failed.count("n") ? a.result.failed.at("n") : "")
      << (a.result.failed_unresolvable.count("n") ? a.result.failed_unresolvable.at("n") : "");
  EXPECT_EQ(ext.bind({"etl", "ml", "u-etl", "n"}).error, "");
  EXPECT_EQ(binder.bound, std::vector<std::string>{"u-etl"});
  EXPECT_EQ(state.snapshot().find("n")->usage_excluding("another-pod", SteadyClock::now()).pool_used("local"),
            80 * kGiB)
      << "other pods see the volume once while the bind is in flight";
}

}  // namespace
}  // namespace extender::engine
