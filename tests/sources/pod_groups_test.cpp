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
    g["status"]["conditions"] = json::array({{{"type", "PodGroupInitiallyScheduled"},
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

}  // namespace
}  // namespace extender::kube::testing
