// Published pools under the churn real clusters make, in kubernetes mode against the fake API
// server: a node's label change re-matches that node alone and moves exactly the pools its labels
// decide; a CSIStorageCapacity's change moves the pools it selects; and kube-scheduler's pipelining
// (the next pod filtered while the previous one's claim is being selected) never puts two pods'
// volumes into one pool's space while every node's labels churn.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "support/cluster_harness.h"
#include "support/engine_fixture.h"

namespace extender::engine {
namespace {

using namespace std::chrono_literals;
using kube::testing::capacity_object;
using kube::testing::claim_object;
using kube::testing::csi_class_object;
using kube::testing::csi_driver_object;
using kube::testing::eventually;
using kube::testing::json;
using kube::testing::Kind;
using kube::testing::node_object;
using kube::testing::pod_object;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;
constexpr const char* kHost = "topology.topolvm.io/node";
constexpr const char* kZone = "topology.kubernetes.io/zone";
constexpr const char* kStamp = "nvidia.com/gfd.timestamp";
constexpr const char* kClass = "topolvm";

using Labels = std::map<std::string, std::string>;

json capacity_with(const std::string& name, json topology, const std::string& size) {
  json c = capacity_object(name, kClass, kHost, "-", size);
  c["nodeTopology"] = std::move(topology);
  return c;
}

class CapacityChurn : public kube::testing::EngineFixture {
 protected:
  void classes() {
    h_.fake.put(Kind::kCsiDrivers, csi_driver_object("topolvm.io", true));
    h_.fake.put(Kind::kClasses, csi_class_object(kClass, "topolvm.io"));
  }
  // Each node's pool of the class, in GiB (0: none), as the state has it.
  std::map<std::string, std::int64_t> pools(const std::vector<std::string>& nodes) {
    std::map<std::string, std::int64_t> out;
    for (const auto& n : nodes) {
      const model::Pool* p = pool_of(n, kClass);
      out[n] = p ? p->capacity_bytes / kGiB : 0;
    }
    return out;
  }
};

TEST_F(CapacityChurn, ANodesLabelChangeMovesThePoolsItsLabelsDecide) {
  classes();
  h_.fake.put(Kind::kNodes, node_object("a", 0, {}, {{kHost, "a"}, {kZone, "z1"}}));
  h_.fake.put(Kind::kNodes, node_object("b", 0, {}, {{kHost, "b"}, {kZone, "z2"}}));
  h_.fake.put(Kind::kCapacities, capacity_object("host-a", kClass, kHost, "a", "100Gi"));
  h_.fake.put(Kind::kCapacities, capacity_with("zone-z1", {{"matchLabels", {{kZone, "z1"}}}}, "30Gi"));
  h_.fake.put(Kind::kCapacities,
              capacity_with("has-gpu", {{"matchExpressions", {{{"key", "gpu"}, {"operator", "Exists"}}}}}, "20Gi"));
  h_.fake.put(Kind::kCapacities,
              capacity_with("not-z3",
                            {{"matchExpressions", {{{"key", kZone}, {"operator", "NotIn"}, {"values", {"z1", "z2"}}}}}},
                            "10Gi"));
  start();
  const std::vector<std::string> nodes{"a", "b", "c"};
  ASSERT_TRUE(eventually([&] { return pools(nodes)["a"] == 100; }));
  struct Step {
    const char* what;
    std::string node;
    Labels labels;  // empty: the node is deleted
    std::map<std::string, std::int64_t> want;
  };
  const Step steps[] = {
      {"a label no selector names changes nothing",
       "a",
       {{kHost, "a"}, {kZone, "z1"}, {kStamp, "1"}},
       {{"a", 100}, {"b", 0}, {"c", 0}}},
      {"b joins z1: the zone's object selects it",
       "b",
       {{kHost, "b"}, {kZone, "z1"}},
       {{"a", 100}, {"b", 30}, {"c", 0}}},
      {"a gains a key an Exists names; the largest figure stays",
       "a",
       {{kHost, "a"}, {kZone, "z1"}, {"gpu", "yes"}},
       {{"a", 100}, {"b", 30}, {"c", 0}}},
      {"a loses its host label: the zone's and the gpu's remain, the largest is chosen",
       "a",
       {{kZone, "z1"}, {"gpu", "yes"}},
       {{"a", 30}, {"b", 30}, {"c", 0}}},
      {"a new node outside z1 and z2: NotIn selects it", "c", {{kHost, "c"}}, {{"a", 30}, {"b", 30}, {"c", 10}}},
      {"b moves to z3: NotIn selects it, the zone's object no longer",
       "b",
       {{kHost, "b"}, {kZone, "z3"}},
       {{"a", 30}, {"b", 10}, {"c", 10}}},
      {"a takes back its host label", "a", {{kHost, "a"}, {kZone, "z1"}}, {{"a", 100}, {"b", 10}, {"c", 10}}},
      {"c is deleted", "c", {}, {{"a", 100}, {"b", 10}, {"c", 0}}},
  };
  for (const Step& s : steps) {
    if (s.labels.empty()) {
      h_.fake.remove(Kind::kNodes, s.node);
    } else {
      h_.fake.put(Kind::kNodes, node_object(s.node, 0, {}, s.labels));
    }
    EXPECT_TRUE(eventually([&] { return pools(nodes) == s.want; })) << s.what;
  }
}

TEST_F(CapacityChurn, AnObjectsChangeMovesThePoolsItSelects) {
  classes();
  for (const char* n : {"a", "b"}) h_.fake.put(Kind::kNodes, node_object(n, 0, {}, {{kHost, n}, {kZone, "z1"}}));
  h_.fake.put(Kind::kCapacities, capacity_object("host-a", kClass, kHost, "a", "100Gi"));
  start();
  const std::vector<std::string> nodes{"a", "b"};
  ASSERT_TRUE(eventually([&] { return pools(nodes)["a"] == 100; }));
  struct Step {
    const char* what;
    std::string name;
    json topology;  // null: the object is deleted
    std::string size;
    std::map<std::string, std::int64_t> want;
  };
  const Step steps[] = {
      {"a new figure", "host-a", {{"matchLabels", {{kHost, "a"}}}}, "80Gi", {{"a", 80}, {"b", 0}}},
      {"the object now selects b", "host-a", {{"matchLabels", {{kHost, "b"}}}}, "80Gi", {{"a", 0}, {"b", 80}}},
      {"a zone's object selects both", "zone", {{"matchLabels", {{kZone, "z1"}}}}, "50Gi", {{"a", 50}, {"b", 80}}},
      {"the host object is deleted", "host-a", nullptr, "", {{"a", 50}, {"b", 50}}},
      {"an empty selector selects every node", "zone", json::object(), "40Gi", {{"a", 40}, {"b", 40}}},
  };
  for (const Step& s : steps) {
    if (s.topology.is_null()) {
      h_.fake.remove(Kind::kCapacities, "kube-system/" + s.name);
    } else {
      h_.fake.put(Kind::kCapacities, capacity_with(s.name, s.topology, s.size));
    }
    EXPECT_TRUE(eventually([&] { return pools(nodes) == s.want; })) << s.what;
  }
}

json volume_pod(int i) {
  json pod = pod_object("ml", "p" + std::to_string(i), "uid-p" + std::to_string(i), 0);
  pod["spec"]["volumes"] = {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "c" + std::to_string(i)}}}}};
  return pod;
}

// kube-scheduler filters pod k+1 while pod k's claim is being selected (VolumeBinding's PreBind),
// and every node's labels churn meanwhile (GPU feature discovery's timestamp, a zone flapping):
// each pool holds one 10Gi claim of 15Gi, so a pool over capacity is a double booking.
TEST_F(CapacityChurn, PipelinedPodsNeverOverfillAPoolWhileLabelsChurn) {
  constexpr int kNodes = 600;
  constexpr int kPods = 12;
  classes();
  std::vector<std::string> nodes;
  for (int i = 0; i < kNodes; ++i) {
    nodes.push_back("n" + std::to_string(1000 + i));
    h_.fake.put(Kind::kNodes, node_object(nodes.back(), 0, {}, {{kHost, nodes.back()}}));
    h_.fake.put(Kind::kCapacities, capacity_object("cap-" + nodes.back(), kClass, kHost, nodes.back(), "15Gi"));
  }
  for (int i = 0; i < kPods; ++i) {
    h_.fake.put(Kind::kClaims,
                claim_object("ml", "c" + std::to_string(i), "pvc-c" + std::to_string(i), kClass, "10Gi"));
    h_.fake.put(Kind::kPods, volume_pod(i));
  }
  start();
  ASSERT_TRUE(eventually([&] { return pool_of(nodes.back(), kClass) != nullptr; }, 60s));
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    for (int i = 0; !stop; ++i) {
      const std::string& n = nodes[static_cast<std::size_t>(i) % nodes.size()];
      h_.fake.put(Kind::kNodes,
                  node_object(n, 0, {}, {{kHost, n}, {kStamp, std::to_string(i)}, {kZone, i % 2 ? "z1" : "z2"}}));
    }
  });
  std::map<std::string, int> chosen;  // node -> claims selected there
  std::vector<std::thread> binding;
  for (int i = 0; i < kPods; ++i) {
    wire::ExtenderArgs args;
    args.pod = *h_.cluster->pending_pod("uid-p" + std::to_string(i));
    args.set_node_names(nodes);
    const FilterAnswer a = ext_->filter(args, {}, PodScope::kUnmanaged);
    ASSERT_TRUE(a.result.node_names && !a.result.node_names->empty()) << a.result.error;
    const std::string node(a.result.node_names->front());
    ++chosen[node];
    // The binding cycle writes the selected node a few milliseconds later, while the next pod is filtered.
    binding.emplace_back([this, i, node] {
      std::this_thread::sleep_for(5ms);
      h_.fake.put(Kind::kClaims,
                  claim_object("ml", "c" + std::to_string(i), "pvc-c" + std::to_string(i), kClass, "10Gi", node));
    });
  }
  for (auto& t : binding) t.join();
  stop = true;
  churn.join();
  for (const auto& [node, claims] : chosen) EXPECT_EQ(claims, 1) << node << " holds " << claims * 10 << "Gi of 15Gi";
}

}  // namespace
}  // namespace extender::engine
