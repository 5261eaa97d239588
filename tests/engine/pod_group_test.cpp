// Pod groups in flight: kube-scheduler filters a gang's members one after another and publishes
// none of them before the whole gang is permitted. A member that needs something only the daemon
// accounts is narrowed to one node and held there, so the next member is judged with it.
#include <gtest/gtest.h>

#include <map>

#include "extender/engine/extender.h"
#include "extender/state/in_flight_holds.h"
#include "support/engine_harness.h"

namespace extender::engine {
namespace {

using namespace std::chrono_literals;

class NoBinder : public Binder {
 public:
  std::string bind(const wire::BindingArgs&, Deadline) override { return "not in these tests"; }
  std::string record_devices(const std::vector<std::pair<std::string, std::string>>&, Deadline) override { return {}; }
  std::string record_gpu_share(const wire::BindingArgs&, const GpuShareAssignment&, Deadline) override { return {}; }
};

// A member of `group` asking one GPU and a 40Gi local volume (none: not a member).
model::Pod member(const std::string& uid, const std::string& group, const char* size = "40Gi") {
  model::Pod p = testing::gpu_pod(uid, "1");
  p.pod_group = group;
  if (size)
    p.volumes.push_back(
        {"data", model::PodVolume::Kind::kEphemeral, "", std::string("local-storage"), std::string(size)});
  return p;
}

wire::ExtenderArgs args_for(const model::Pod& pod) {
  wire::ExtenderArgs a;
  a.pod = pod;
  a.set_node_names({"a", "b"});
  return a;
}

std::vector<std::string_view> passing(const FilterAnswer& a) {
  return a.result.node_names ? *a.result.node_names : std::vector<std::string_view>{};
}

struct Harness : testing::EngineHarness {
  explicit Harness(bool with_holds = true) {
    cfg.mode = config::Mode::kKubernetes;
    load_inventory(R"(
nodes:
  - {name: a, gpus: {nvidia.com/gpu: 4}, pools: [{name: local, capacity: 100Gi}]}
  - {name: b, gpus: {nvidia.com/gpu: 4}, pools: [{name: local, capacity: 100Gi}]}
)");
    ext = &*engines.emplace_back(builder(binder).pods(&pods).in_flight(with_holds ? &holds : nullptr).build_owned());
  }
  // Filters each member in turn, as kube-scheduler's pod group cycle does; the node each got
  // (empty: none passed).
  std::vector<std::string> cycle(const std::vector<model::Pod>& members) {
    std::vector<std::string> got;
    for (const auto& m : members) {
      const FilterAnswer f = filter(m);
      EXPECT_TRUE(f.result.error.empty()) << f.result.error;
      const auto p = passing(f);
      got.push_back(p.size() == 1 ? std::string(p[0]) : p.empty() ? "" : "several");
    }
    return got;
  }
  // Filters `pod` as the API server has it pending (the daemon judges volumes for real pods only).
  FilterAnswer filter(const model::Pod& pod) {
    pods.pending[pod.uid] = pod;
    return ext->filter(args_for(pod));
  }
  NoBinder binder;
  state::InFlightHolds holds{state, {}};
  Extender* ext = nullptr;
};

std::vector<model::Pod> gang(const std::string& prefix, const std::string& group, int n, const char* size = "40Gi") {
  std::vector<model::Pod> out;
  for (int i = 0; i < n; ++i) out.push_back(member(prefix + std::to_string(i), group, size));
  return out;
}

TEST(PodGroups, AGangThatFitsIsPlacedWholeAndTheNextFindsItsSpaceTaken) {
  Harness h;
  const auto first = h.cycle(gang("a", "gang-a", 4));
  std::map<std::string, int> per_node;
  for (const auto& n : first) ++per_node[n];
  EXPECT_EQ(per_node["a"], 2) << "two 40Gi members per 100Gi pool";
  EXPECT_EQ(per_node["b"], 2);
  EXPECT_EQ(h.holds.size(), 4u);
  EXPECT_EQ(h.cycle(gang("b", "gang-b", 1)), std::vector<std::string>{""})
      << "the first gang's members, published nowhere yet, hold 80Gi of each pool";
}

TEST(PodGroups, WithoutHoldsTheSameCycleOverbooks) {
  Harness h(false);
  const auto first = h.cycle(gang("a", "gang-a", 4));
  EXPECT_EQ(first, std::vector<std::string>(4, "several")) << "every member passes every node";
}

TEST(PodGroups, AMemberFilteredAgainReplacesItsHold) {
  Harness h;
  const auto members = gang("a", "gang-a", 4);
  for (int round = 0; round < 3; ++round) {
    const auto got = h.cycle(members);
    for (const auto& n : got) EXPECT_TRUE(n == "a" || n == "b") << "round " << round << ": a member refused";
  }
  EXPECT_EQ(h.holds.size(), 4u);
}

TEST(PodGroups, AFailedGroupReleasesWhatItHeld) {
  Harness h;
  const auto too_big = gang("a", "gang-a", 5);  // 200Gi of 200Gi: the fifth finds 20Gi on each
  const auto got = h.cycle(too_big);
  EXPECT_EQ(got.back(), "");
  EXPECT_EQ(h.holds.group_failed("ml/gang-a", SteadyClock::now()), 4u);
  for (const auto& n : h.cycle(gang("b", "gang-b", 4))) {
    EXPECT_TRUE(n == "a" || n == "b") << "the failed gang's holds still count";
  }
}

TEST(PodGroups, AGangThatCanNoLongerReachItsMinimumReleasesItsCycleAtTheRefusal) {
  Harness h;
  h.holds.group_min_count("ml/gang-a", 5);
  const auto too_big = gang("a", "gang-a", 5);
  for (const auto& m : too_big) h.pods.pending[m.uid] = m;
  const auto got = h.cycle(too_big);
  EXPECT_EQ(got.back(), "") << "the fifth finds 20Gi on each pool";
  EXPECT_EQ(h.holds.size(), 0u) << "five needed, one refused: kube-scheduler forgets the cycle, so do the holds";
  EXPECT_EQ(h.cycle({member("solo", "", "100Gi")}), std::vector<std::string>{"several"})
      << "a whole pool is free again";
}

TEST(PodGroups, ARefusedMemberWithMembersToSpareKeepsTheCycle) {
  Harness h;
  h.holds.group_min_count("ml/gang-a", 4);
  const auto members = gang("a", "gang-a", 5);
  for (const auto& m : members) h.pods.pending[m.uid] = m;
  const auto got = h.cycle(members);
  EXPECT_EQ(got.back(), "");
  EXPECT_EQ(h.holds.size(), 4u) << "four of five reach the minimum: the four stay held";
}

TEST(PodGroups, AMemberOfTheLastCycleFilteredAgainFindsThatCyclesHoldsGone) {
  Harness h;
  const auto members = gang("a", "gang-a", 3, "60Gi");
  EXPECT_EQ(h.cycle(members).back(), "") << "one 60Gi member per 100Gi pool";
  EXPECT_EQ(h.holds.size(), 2u);
  // kube-scheduler tries the group again, this time the refused member first.
  const auto again = h.cycle({members[2]});
  EXPECT_TRUE(again[0] == "a" || again[0] == "b") << "judged with the last cycle's holds still counted";
  EXPECT_EQ(h.holds.size(), 1u);
}

TEST(PodGroups, OnlyMembersNeedingWhatOnlyTheDaemonCountsAreNarrowed) {
  Harness h;
  EXPECT_EQ(h.cycle({member("solo", "", "40Gi")}), std::vector<std::string>{"several"}) << "not in a group";
  EXPECT_EQ(h.cycle({member("gpu", "gang-g", nullptr)}), std::vector<std::string>{"several"})
      << "whole GPUs alone: kube-scheduler counts them in its own cache";
  EXPECT_EQ(h.holds.size(), 0u);
}

TEST(NominatedPods, CountOnTheirNodeForPodsOfLowerOrEqualPriorityOnly) {
  Harness h;
  model::Pod q = testing::gpu_pod("q", "4");
  q.priority = 10;
  q.nominated_node = "a";
  model::Pod v = testing::gpu_pod("v", nullptr);  // volumes only: held where the daemon accounts them
  v.volumes.push_back(
      {"data", model::PodVolume::Kind::kEphemeral, "", std::string("local-storage"), std::string("80Gi")});
  v.priority = 10;
  v.nominated_node = "b";
  h.pods.nominated = {q, v};
  struct Case {
    const char* name;
    std::int64_t priority;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"lower priority: the nominated pod's 4 GPUs count on a, another's volumes nowhere", 0, {"b"}},
      {"equal priority: they count", 10, {"b"}},
      {"higher priority: they do not", 20, {"several"}},
  };
  for (const Case& c : cases) {
    model::Pod p = member("p" + std::to_string(c.priority), "", "40Gi");
    p.priority = c.priority;
    EXPECT_EQ(h.cycle({p}), c.want) << c.name;
  }
  const FilterAnswer f = h.filter(member("p0", "", "40Gi"));
  ASSERT_NE(f.result.failed.find("a"), nullptr);
  EXPECT_NE(f.result.failed.find("a")->find("nominated"), std::string::npos) << *f.result.failed.find("a");
  EXPECT_EQ(h.cycle({q}), std::vector<std::string>{"several"}) << "a nominated pod does not count against itself";
}

}  // namespace
}  // namespace extender::engine
