// Local volume accounting in kubernetes mode against the fake API server, wired as src/main.cpp
// wires it: a device-form pool is capacity-checked like a capacity-form one; the claim that
// VolumeBinding's PreBind places before /bind is counted once, so the bind lands first time and
// records the device on the claim; other pods' generic ephemeral volumes are space preemption frees.
#include <gtest/gtest.h>

#include "extender/engine/extender.h"
#include "extender/kube/api_binder.h"
#include "extender/state/demand_cache.h"
#include "support/cluster_harness.h"

namespace extender::engine {
namespace {

using namespace std::chrono_literals;
using kube::testing::claim_object;
using kube::testing::ClusterHarness;
using kube::testing::eventually;
using kube::testing::json;
using kube::testing::Kind;
using kube::testing::node_object;
using kube::testing::pod_object;
using kube::testing::storage_class_object;

constexpr const char* kPool = "scheduler-extender.io/pool.local";
constexpr std::int64_t kGiB = std::int64_t{1} << 30;

json with_scratch(json pod, const std::string& size) {
  pod["spec"]["volumes"] = json::array({{{"name", "scratch"},
                                         {"ephemeral",
                                          {{"volumeClaimTemplate",
                                            {{"spec",
                                              {{"storageClassName", "local-storage"},
                                               {"accessModes", {"ReadWriteOnce"}},
                                               {"resources", {{"requests", {{"storage", size}}}}}}}}}}}}});
  return pod;
}

// The claim the ephemeral-volume controller makes for a pod's "scratch" volume.
json scratch_claim(const std::string& pod, const std::string& pod_uid, const std::string& size,
                   const std::string& node = {}) {
  json pvc = claim_object("ml", pod + "-scratch", "pvc-" + pod, "local-storage", size, node);
  pvc["metadata"]["ownerReferences"] =
      json::array({{{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", pod}, {"uid", pod_uid}, {"controller", true}}});
  return pvc;
}

class VolumeAccounting : public ::testing::Test {
 protected:
  void start() {
    h_.fake.put(Kind::kClasses, storage_class_object("local-storage", false));
    h_.start();
    ASSERT_TRUE(h_.wait_ready());
    ext_ = h_.extender(demands_, binder_);
  }
  FilterAnswer filter(const std::string& pod, std::vector<std::string> nodes) {
    return kube::testing::filter_pending(*ext_, *h_.cluster, pod, std::move(nodes));
  }
  std::int64_t pool_used(const std::string& node) {
    return h_.state.snapshot().find(node)->usage_excluding("", SteadyClock::now()).pool_used("local");
  }

  ClusterHarness h_;
  state::DemandCache demands_{1000, std::chrono::minutes(5)};
  kube::ApiBinder binder_{*h_.client};
  std::unique_ptr<Extender> ext_;
};

TEST_F(VolumeAccounting, ADevicePoolIsCapacityCheckedLikeACapacityPool) {
  h_.fake.put(Kind::kNodes, node_object("cap", 0, {{kPool, "2Ti"}}));
  h_.fake.put(Kind::kNodes, node_object("dev", 0, {{kPool, "nvme0n1=1Ti,nvme1n1=1Ti"}}));
  for (const char* node : {"cap", "dev"}) {
    for (int i = 0; i < 2; ++i) {
      const std::string name = std::string(node) + "-held-" + std::to_string(i);
      h_.fake.put(Kind::kClaims, claim_object("ml", name, "pvc-" + name, "local-storage", "900Gi", node));
    }
  }
  h_.fake.put(Kind::kPods, with_scratch(pod_object("ml", "big", "uid-big", 0), "800Gi"));
  h_.fake.put(Kind::kClaims, scratch_claim("big", "uid-big", "800Gi"));
  start();
  FilterAnswer a = filter("big", {"cap", "dev"});
  EXPECT_EQ(a.result.error, "");
  EXPECT_TRUE(a.result.node_names->empty());
  EXPECT_EQ(a.result.failed_unresolvable.at("cap"), "pool local: pod needs 800 GiB, node has 248 GiB free of 2048 GiB");
  EXPECT_EQ(a.result.failed_unresolvable.at("dev"), "pool local: pod needs 800 GiB, node has 248 GiB free of 2048 GiB");
  const auto usage = h_.state.snapshot().find("dev")->usage_excluding("", SteadyClock::now());
  EXPECT_EQ(usage.device_used("local", "nvme0n1") + usage.device_used("local", "nvme1n1"), 1800 * kGiB)
      << "every watched claim sits on a device";
}

TEST_F(VolumeAccounting, TheClaimPreBindPlacesIsCountedOnceAndTheBindLandsFirstTime) {
  h_.fake.put(Kind::kNodes, node_object("n", 0, {{kPool, "nvme0n1=1Ti"}}));
  h_.fake.put(Kind::kPods, with_scratch(pod_object("ml", "etl", "uid-etl", 0), "600Gi"));
  h_.fake.put(Kind::kClaims, scratch_claim("etl", "uid-etl", "600Gi"));
  start();
  FilterAnswer a = filter("etl", {"n"});
  ASSERT_EQ(a.result.node_names, std::vector<std::string_view>{"n"}) << a.result.failed_unresolvable.at("n");
  // kube-scheduler's VolumeBinding PreBind selects the node before it calls /bind.
  h_.fake.put(Kind::kClaims, scratch_claim("etl", "uid-etl", "600Gi", "n"));
  ASSERT_TRUE(eventually([&] { return h_.state.claim_of("pvc/pvc-etl").has_value(); }));
  EXPECT_EQ(pool_used("n"), 600 * kGiB);
  BindAnswer bound = ext_->bind({"etl", "ml", "uid-etl", "n"});
  EXPECT_EQ(bound.error, "") << "the volume was counted twice";
  EXPECT_EQ(pool_used("n"), 600 * kGiB) << "the reservation and the claim name the same volume";
  const auto stored = h_.fake.object(Kind::kClaims, "ml/etl-scratch");
  ASSERT_TRUE(stored);
  EXPECT_EQ((*stored)["metadata"]["annotations"].value("scheduler-extender.io/device", ""), "nvme0n1")
      << "the bind records the device where every replica reads it back";
}

TEST_F(VolumeAccounting, AClaimHeldOnAnotherNodeKeepsThePodOffThisOne) {
  h_.fake.put(Kind::kNodes, node_object("a", 0, {{kPool, "1Ti"}}));
  h_.fake.put(Kind::kNodes, node_object("b", 0, {{kPool, "1Ti"}}));
  h_.fake.put(Kind::kPods, with_scratch(pod_object("ml", "p", "uid-p", 0), "100Gi"));
  h_.fake.put(Kind::kClaims, scratch_claim("p", "uid-p", "100Gi", "a"));
  start();
  BindAnswer wrong = ext_->bind({"p", "ml", "uid-p", "b"});
  EXPECT_NE(wrong.error.find("volume scratch: its claim is held on node a"), std::string::npos) << wrong.error;
  EXPECT_EQ(ext_->bind({"p", "ml", "uid-p", "a"}).error, "");
}

TEST_F(VolumeAccounting, OtherPodsScratchSpaceIsFreedByPreemptingThem) {
  h_.fake.put(Kind::kNodes, node_object("n", 0, {{kPool, "1Ti"}}));
  for (const char* low : {"low1", "low2"}) {
    h_.fake.put(Kind::kPods, with_scratch(pod_object("ml", low, std::string("uid-") + low, 0, "n"), "450Gi"));
    h_.fake.put(Kind::kClaims, scratch_claim(low, std::string("uid-") + low, "450Gi", "n"));
  }
  h_.fake.put(Kind::kPods, pod_object("ml", "keeper", "uid-keeper", 0, "n"));
  h_.fake.put(Kind::kPods, with_scratch(pod_object("ml", "high", "uid-high", 0), "600Gi"));
  h_.fake.put(Kind::kClaims, scratch_claim("high", "uid-high", "600Gi"));
  start();
  FilterAnswer a = filter("high", {"n"});
  EXPECT_EQ(a.result.failed.at("n"), "pool local: pod needs 600 GiB, node has 124 GiB free of 1024 GiB")
      << "evicting the scratch users helps, so the node is FailedNodes, not unresolvable";
  EXPECT_TRUE(a.result.failed_unresolvable.empty());

  wire::PreemptionArgs args;
  args.pod = *h_.cluster->pending_pod("uid-high");
  args.victims_by_node["n"] = {{"uid-low1", "uid-low2"}, {}, 0};
  EXPECT_EQ(ext_->preempt(args).victims.count("n"), 1u) << "their scratch volumes go with them";
  args.victims_by_node["n"] = {{"uid-low1"}, {}, 0};
  EXPECT_EQ(ext_->preempt(args).victims.count("n"), 0u) << "one of them frees 450 GiB, not enough";
  args.victims_by_node["n"] = {{"uid-keeper"}, {}, 0};
  EXPECT_EQ(ext_->preempt(args).victims.count("n"), 0u);
}

TEST_F(VolumeAccounting, ClaimsOfClassesNotManagedStayOutAndAClassChangeIsReaccounted) {
  h_.fake.put(Kind::kNodes, node_object("n", 0, {{kPool, "1Ti"}}));
  h_.fake.put(Kind::kClaims, claim_object("ml", "data", "pvc-data", "local-storage", "300Gi", "n"));
  h_.fake.put(Kind::kClaims, claim_object("ml", "nfs", "pvc-nfs", "nfs", "900Gi", "n"));
  start();
  EXPECT_EQ(pool_used("n"), 300 * kGiB);
  h_.fake.put(Kind::kClaims, claim_object("ml", "data", "pvc-data", "nfs", "300Gi", "n"));
  EXPECT_TRUE(eventually([&] { return pool_used("n") == 0; })) << "the claim left the managed class";
  h_.fake.put(Kind::kClaims, claim_object("ml", "nfs", "pvc-nfs", "local-storage", "900Gi", "n"));
  EXPECT_TRUE(eventually([&] { return pool_used("n") == 900 * kGiB; }));
}

}  // namespace
}  // namespace extender::engine
