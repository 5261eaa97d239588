// The every-pod entry's verbs (PodScope::kUnmanaged): pods that need only managed volumes are
// filtered and scored there, GPU pods are left to the managed entry; and a pod with claims to
// place waits for the previous such pod's placement (made by kube-scheduler) to show on its claims.
// The engine runs on a FakeClock: a wait ends on the claims' change signal or on the test's advance.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "extender/engine/extender.h"
#include "support/engine_harness.h"
#include "support/fake_clock.h"

namespace extender::engine {
namespace {

using namespace std::chrono_literals;
constexpr std::int64_t kGiB = std::int64_t{1} << 30;

class NoBinder : public Binder {
 public:
  std::string bind(const wire::BindingArgs&, Deadline) override { return "not in these tests"; }
  std::string record_devices(const std::vector<std::pair<std::string, std::string>>&, Deadline) override { return {}; }
  std::string record_gpu_share(const wire::BindingArgs&, const GpuShareAssignment&, Deadline) override { return {}; }
};

model::Pod volume_pod(const std::string& uid, const char* size) {
  model::Pod p = testing::gpu_pod(uid, nullptr);
  p.volumes.push_back(
      {"data", model::PodVolume::Kind::kEphemeral, "", std::string("local-storage"), std::string(size)});
  return p;
}

wire::ExtenderArgs args_for(const model::Pod& pod, std::vector<std::string> names) {
  wire::ExtenderArgs a;
  a.pod = pod;
  a.set_node_names(std::move(names));
  return a;
}

struct Harness : testing::EngineHarness {
  explicit Harness(std::chrono::milliseconds wait = 2s) {
    cfg.mode = config::Mode::kKubernetes;
    cfg.scoring.packing = policy::PackingStrategy::kFragmentation;
    cfg.storage.placement_wait = wait;
    load_inventory(R"(
nodes:
  - {name: a, pools: [{name: local, capacity: 100Gi}]}
  - {name: b, pools: [{name: local, capacity: 100Gi}]}
  - {name: g, gpus: {nvidia.com/gpu: 2}}
)");
    claims.lookup = [this](const std::string& ns, const std::string& name) -> std::optional<model::ClaimInfo> {
      if (ns == "ml" && name == "pod-u1-data") ++u1_lookups;
      const bool is_placed = placed.load() && ns == "ml" && name == "pod-u1-data";
      return model::ClaimInfo{"local-storage", 60 * kGiB, is_placed, is_placed ? "a" : "", 0, false, "", ""};
    };
    ext = &*engines.emplace_back(builder(binder).pods(&pods).claims(&claims).clock(&clock).build_owned());
  }
  // What kube-scheduler's choice of node a for pod u1 looks like once it shows: the claim is
  // selected onto a, and the state holds its space there.
  void place_u1_on_a() {
    state::Claim held;
    held.owner = "ml/pod-u1-data";
    held.source = "volume";
    held.node = "a";
    model::VolumePlacement v;
    v.volume = "ml/pod-u1-data";
    v.pool = "local";
    v.bytes = 60 * kGiB;
    v.claim = "ml/pod-u1-data";
    held.allocation.volumes.push_back(v);
    state.place("pvc-u1", held);
    placed = true;
    claims.changes.notify();
  }
  // /filter for a pod the API server has pending (kubernetes mode judges only those).
  FilterAnswer filter(const wire::ExtenderArgs& args, std::optional<TimePoint> deadline, PodScope scope) {
    pods.pending[args.pod.uid] = args.pod;
    return ext->filter(args, deadline, scope);
  }
  testing::FakeClock clock;
  NoBinder binder;
  std::atomic<bool> placed{false};
  std::atomic<int> u1_lookups{0};  // reads of the first pod's claim
  Extender* ext = nullptr;
};

std::vector<std::string_view> passing(const FilterAnswer& a) {
  return a.result.node_names ? *a.result.node_names : std::vector<std::string_view>{};
}

TEST(VolumeOnlyPods, EachVerbDecidesThePodsOfItsScope) {
  Harness h;
  struct Case {
    const char* name;
    model::Pod pod;
    PodScope scope;
    std::vector<std::string_view> want_passing;
    bool want_scores;
  };
  const Case cases[] = {
      {"a volume-only pod is filtered by the every-pod entry",
       volume_pod("v1", "150Gi"),
       PodScope::kUnmanaged,
       {},
       true},
      {"and by the managed entry (second-scheduler route without managedResources)",
       volume_pod("v2", "150Gi"),
       PodScope::kManaged,
       {},
       true},
      {"a GPU pod is left to the managed entry, even one nothing fits",
       testing::gpu_pod("g1", "16"),
       PodScope::kUnmanaged,
       {"a", "b", "g"},
       false},
      {"a pod that needs nothing passes everywhere and is ranked",
       testing::gpu_pod("c1", nullptr),
       PodScope::kUnmanaged,
       {"a", "b", "g"},
       true},
  };
  for (const Case& c : cases) {
    const FilterAnswer f = h.filter(args_for(c.pod, {"a", "b", "g"}), {}, c.scope);
    EXPECT_TRUE(f.result.error.empty()) << c.name << ": " << f.result.error;
    EXPECT_EQ(passing(f), c.want_passing) << c.name;
    const PrioritizeAnswer p = h.ext->prioritize(args_for(c.pod, {"a", "b", "g"}), {}, c.scope);
    EXPECT_EQ(!p.scores.empty(), c.want_scores) << c.name << ": " << p.summary.note;
  }
}

TEST(VolumeOnlyPods, TheNextPodWaitsForThePreviousPlacementToShowInEitherEntry) {
  // VolumeBinding writes the selected node (and provisioning starts) before any extender's /bind:
  // the managed entry's pods with volumes wait as the every-pod entry's do.
  for (PodScope scope : {PodScope::kUnmanaged, PodScope::kManaged}) {
    Harness h;
    ASSERT_EQ(passing(h.filter(args_for(volume_pod("u1", "60Gi"), {"a"}), {}, scope)),
              std::vector<std::string_view>{"a"});
    std::thread scheduler([&] {
      std::this_thread::sleep_for(50ms);
      h.place_u1_on_a();
    });
    const FilterAnswer second = h.filter(args_for(volume_pod("u2", "60Gi"), {"a", "b"}), {}, scope);
    scheduler.join();
    EXPECT_EQ(passing(second), std::vector<std::string_view>{"b"})
        << "the second pod was decided before the first one's 60Gi on a showed";
  }
}

TEST(VolumeOnlyPods, AnEarlierPodThatNeverShowsDelaysTheNextOnlyForTheWait) {
  // The clock never moves by itself: the second filter returns when the test moves it past the
  // wait, or past the call's deadline when that comes first.
  struct Case {
    const char* name;
    std::optional<Duration> deadline;  // after the second filter's start
    Duration advance;                  // what the test moves the clock by, once
  };
  const Case cases[] = {
      {"the wait passes", std::nullopt, 10s},
      {"the call's deadline comes before the wait", 1s, 1s},
  };
  for (const Case& c : cases) {
    Harness h(10s);
    ASSERT_FALSE(passing(h.filter(args_for(volume_pod("u1", "60Gi"), {"a"}), {}, PodScope::kUnmanaged)).empty());
    std::optional<TimePoint> deadline;
    if (c.deadline) deadline = h.clock.now() + *c.deadline;
    std::atomic<bool> advanced{false};
    std::thread scheduler([&] {
      std::this_thread::sleep_for(50ms);
      advanced = true;
      h.clock.advance(c.advance);
    });
    const auto started = std::chrono::steady_clock::now();
    const FilterAnswer second =
        h.filter(args_for(volume_pod("u2", "60Gi"), {"a", "b"}), deadline, PodScope::kUnmanaged);
    const bool returned_after_advance = advanced.load();
    scheduler.join();
    EXPECT_TRUE(returned_after_advance) << c.name << ": returned before the clock reached the end of the wait";
    EXPECT_EQ(passing(second), (std::vector<std::string_view>{"a", "b"})) << c.name;
    EXPECT_LT(std::chrono::steady_clock::now() - started, 5s) << c.name << ": waited on a real clock";
  }
}

TEST(VolumeOnlyPods, AWaitingFilterReadsTheClaimsAgainOnlyWhenTheyChange) {
  // No polling: while nothing changes and the clock stands still, the waiting filter sleeps.
  Harness h(10s);
  ASSERT_FALSE(passing(h.filter(args_for(volume_pod("u1", "60Gi"), {"a"}), {}, PodScope::kUnmanaged)).empty());
  const int before = h.u1_lookups.load();
  std::thread scheduler([&] {
    std::this_thread::sleep_for(100ms);
    h.clock.advance(10s);
  });
  const FilterAnswer second = h.filter(args_for(volume_pod("u2", "60Gi"), {"a", "b"}), {}, PodScope::kUnmanaged);
  scheduler.join();
  EXPECT_EQ(passing(second), (std::vector<std::string_view>{"a", "b"}));
  EXPECT_LE(h.u1_lookups.load() - before, 4) << "the filter read the earlier pod's claim over and over while it waited";
}

TEST(VolumeOnlyPods, PodsWithoutClaimsToPlaceNeverWait) {
  Harness h(10s);
  ASSERT_FALSE(passing(h.filter(args_for(volume_pod("u1", "60Gi"), {"a"}), {}, PodScope::kUnmanaged)).empty());
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(passing(h.filter(args_for(testing::gpu_pod("g1", "1"), {"g"}), {}, PodScope::kManaged)),
            std::vector<std::string_view>{"g"});
  EXPECT_EQ(passing(h.filter(args_for(testing::gpu_pod("c1", nullptr), {"a"}), {}, PodScope::kUnmanaged)),
            std::vector<std::string_view>{"a"});
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s) << "a pod with no claim to place waited for u1";
}

}  // namespace
}  // namespace extender::engine
