// The PodGroup watch and what the pod and claim watches publish of members in flight reach the
// holds (state/in_flight_holds.h) through KubeCluster, against the fake API server.
#include <gtest/gtest.h>

#include "support/cluster_harness.h"

namespace extender::kube::testing {
namespace {

using namespace std::chrono_literals;

json pod_group(const std::string& name, const char* scheduled, const char* message) {
  json g = {{"apiVersion", "scheduling.k8s.io/v1beta1"},
            {"kind", "PodGroup"},
            {"metadata", {{"name", name}, {"namespace", "ml"}}},
            {"spec", {{"schedulingPolicy", {{"gang", {{"minCount", 2}}}}}}}};
  if (scheduled) {
    g["status"]["conditions"] =
        json::array({{{"type", "PodGroupInitiallyScheduled"},
                      {"status", scheduled},
                      {"reason", std::string(scheduled) == "True" ? "Scheduled" : "Unschedulable"},
                      {"message", message},
                      {"lastTransitionTime", "2026-12-05T23:00:00Z"}}});
  }
  return g;
}

state::Claim held_on(const std::string& node) {
  state::Claim c;
  c.owner = "ml/m";
  c.node = node;
  c.allocation.gpus[kGpu] = 1;
  return c;
}

bool held(const ClusterHarness& h, const std::string& uid) {
  for (const auto& v : h.in_flight.holds()) {
    if (v.uid == uid) return true;
  }
  return false;
}

TEST(PodGroups, AGroupKubeSchedulerGaveUpEndsItsMembersHolds) {
  ClusterHarness h;
  h.fake.put(Kind::kNodes, node_object("gpu-1", 4));
  h.fake.put(Kind::kPodGroups, pod_group("train", nullptr, ""));
  h.fake.put(Kind::kPodGroups, pod_group("other", nullptr, ""));
  h.start();
  ASSERT_TRUE(h.wait_ready());
  ASSERT_TRUE(eventually([&] { return h.state.snapshot().find("gpu-1") != nullptr; }, 5s));
  const auto now = SteadyClock::now();
  h.in_flight.hold("m1", "ml/train", held_on("gpu-1"), now);
  h.in_flight.hold("x1", "ml/other", held_on("gpu-1"), now);
  h.fake.put(Kind::kPodGroups, pod_group("train", "False", "0/1 nodes are available"));
  EXPECT_TRUE(eventually([&] { return !held(h, "m1"); }, 5s)) << "the failed group's hold stayed";
  EXPECT_FALSE(h.state.claim_of("m1").has_value());
  EXPECT_TRUE(held(h, "x1")) << "another group's hold went with it";
  h.fake.put(Kind::kPodGroups, pod_group("other", "True", ""));
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(held(h, "x1")) << "a scheduled group keeps its members held until they are published";
}

json member(const std::string& ns, const std::string& name, const std::string& group, const std::string& node = {}) {
  json pod = pod_object(ns, name, "uid-" + ns + "-" + name, 1, node);
  pod["spec"]["schedulingGroup"] = {{"podGroupName", group}};
  return pod;
}

TEST(PodGroups, TheWatchesTellAGangsMinimumAndItsMembersPendingAndBound) {
  ClusterHarness h;
  h.fake.put(Kind::kNodes, node_object("gpu-1", 4));
  h.fake.put(Kind::kPodGroups, pod_group("train", nullptr, ""));  // minCount 2
  h.fake.put(Kind::kPods, member("ml", "w0", "train", "gpu-1"));
  h.fake.put(Kind::kPods, member("ml", "w1", "train"));
  h.fake.put(Kind::kPods, member("ml", "w2", "train"));
  h.fake.put(Kind::kPods, member("other", "w1", "train"));
  h.fake.put(Kind::kPods, pod_object("ml", "solo", "uid-solo", 1));
  h.start();
  ASSERT_TRUE(h.wait_ready());
  auto members = h.cluster->group_members("ml", "train");
  EXPECT_EQ(members.pending, 2u);
  EXPECT_EQ(members.bound, 1u);
  h.fake.put(Kind::kPods, member("ml", "w1", "train", "gpu-1"));
  h.fake.remove(Kind::kPods, "ml/w0");
  ASSERT_TRUE(eventually([&] { return h.cluster->group_members("ml", "train").pending == 1; }, 5s));
  EXPECT_TRUE(eventually([&] { return h.cluster->group_members("ml", "train").bound == 1; }, 5s))
      << "w1 bound, w0 deleted";

  // The PodGroup's minimum reached the holds: with one member pending and none bound, a refusal
  // leaves the gang of two short, and the cycle's holds end.
  const auto now = SteadyClock::now();
  h.in_flight.cycle("m1", "ml/train", now);
  h.in_flight.hold("m1", "ml/train", held_on("gpu-1"), now);
  h.in_flight.cycle("m2", "ml/train", now);
  EXPECT_EQ(h.in_flight.refused("m2", "ml/train", 2, 1), 0u) << "two reachable of two";
  h.in_flight.cycle("m3", "ml/train", now);
  EXPECT_EQ(h.in_flight.refused("m3", "ml/train", 2, 0), 1u) << "two refused of two pending, none bound";
}

}  // namespace
}  // namespace extender::kube::testing
