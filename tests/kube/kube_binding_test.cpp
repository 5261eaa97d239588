// Binding in kubernetes mode, wired as the daemon wires it: an engine::Extender whose state is fed
// by a KubeCluster and whose Binder is an ApiBinder, both talking to the fake API server. The
// reservation taken at /bind holds the GPUs until the watch reports the pod bound; a failed
// binding gives them back; however binds interleave, no node ever holds more GPUs than it has; and
// no Binding is sent for a node kube-scheduler could not have chosen.
#include <gtest/gtest.h>

#include <barrier>

#include "extender/engine/extender.h"
#include "extender/kube/api_binder.h"
#include "extender/state/demand_cache.h"
#include "extender/wire/k8s_objects.h"
#include "support/cluster_harness.h"

namespace extender::engine {
namespace {

using namespace std::chrono_literals;
using kube::testing::BindingReply;
using kube::testing::BindingRequest;
using kube::testing::ClusterHarness;
using kube::testing::eventually;
using kube::testing::json;
using kube::testing::Kind;
using kube::testing::node_object;
using kube::testing::pod_object;
using kube::testing::status_body;

constexpr const char* kGpu = "nvidia.com/gpu";

// The daemon's kubernetes-mode wiring (ClusterHarness::extender) with the API server's binder.
class KubeExtender {
 public:
  explicit KubeExtender(ClusterHarness& h)
      : demands_(1000, std::chrono::minutes(5)), binder_(*h.client), extender_(h.extender(demands_, binder_)) {}
  Extender& operator*() { return *extender_; }
  Extender* operator->() { return extender_.get(); }

 private:
  state::DemandCache demands_;
  kube::ApiBinder binder_;
  std::unique_ptr<Extender> extender_;
};

wire::BindingArgs binding(const std::string& name, const std::string& node) {
  return {name, "ml", "uid-" + name, node};
}

std::int64_t gpus_held(const state::ClusterState& state, const std::string& node) {
  const state::NodeState* n = state.snapshot().find(node);
  return n ? n->usage_excluding("", SteadyClock::now()).gpus_used(kGpu) : -1;
}

std::vector<kube::testing::RecordedRequest> binding_posts(const ClusterHarness& h, const std::string& pod) {
  return h.server.requests("POST", "/api/v1/namespaces/ml/pods/" + pod + "/binding");
}

// gpu-1 has 2 GPUs; p1..p4 are pending and need 2 each.
class KubeBinding : public ::testing::Test {
 protected:
  void SetUp() override { start({}); }

  void start(const std::function<void(config::Config&)>& tweak) {
    h_ = std::make_unique<ClusterHarness>(tweak);
    h_->fake.put(Kind::kNodes, node_object("gpu-1", 2));
    for (const char* p : {"p1", "p2", "p3", "p4"})
      h_->fake.put(Kind::kPods, pod_object("ml", p, std::string("uid-") + p, 2));
    h_->start();
    ASSERT_TRUE(h_->wait_ready());
    ext_ = std::make_unique<KubeExtender>(*h_);
  }
  void TearDown() override {
    ext_.reset();
    h_.reset();
  }

  BindAnswer bind(const std::string& pod, const std::string& node = "gpu-1") {
    return (*ext_)->bind(binding(pod, node));
  }
  std::optional<state::Claim> claim(const std::string& pod) { return h_->state.claim_of("uid-" + pod); }
  bool placed_on(const std::string& pod, const std::string& node) {
    auto c = claim(pod);
    return c && c->kind == state::Claim::Kind::kPlaced && c->node == node;
  }

  std::unique_ptr<ClusterHarness> h_;
  std::unique_ptr<KubeExtender> ext_;
};

TEST_F(KubeBinding, TheReservationHoldsTheGpusUntilTheWatchReportsTheBinding) {
  h_->fake.hold(Kind::kPods);  // the binding lands on the server; its watch event waits
  BindAnswer first = bind("p1");
  ASSERT_EQ(first.error, "");
  EXPECT_EQ(first.summary.nodes_out, 1u);
  const auto posts = binding_posts(*h_, "p1");
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(json::parse(posts[0].body)["metadata"]["uid"], "uid-p1");
  EXPECT_EQ(h_->fake.object(Kind::kPods, "ml/p1").value()["spec"]["nodeName"], "gpu-1");

  auto held = claim("p1");
  ASSERT_TRUE(held);
  EXPECT_EQ(held->kind, state::Claim::Kind::kReserved);
  EXPECT_EQ(held->node, "gpu-1");
  EXPECT_EQ(held->allocation.gpus.at(kGpu), 2);
  EXPECT_EQ(gpus_held(h_->state, "gpu-1"), 2);

  // The second pod's re-check sees the reservation and refuses; nothing is posted for it.
  BindAnswer second = bind("p2");
  EXPECT_NE(second.error.find("node gpu-1 no longer fits pod ml/p2"), std::string::npos) << second.error;
  EXPECT_TRUE(binding_posts(*h_, "p2").empty());
  EXPECT_FALSE(claim("p2"));

  // The watch reports p1 bound: the placement replaces the reservation, holding the same GPUs.
  h_->fake.release(Kind::kPods);
  ASSERT_TRUE(eventually([&] { return placed_on("p1", "gpu-1"); }));
  EXPECT_EQ(gpus_held(h_->state, "gpu-1"), 2);
  EXPECT_FALSE(h_->cluster->pending_pod("uid-p1"));
  EXPECT_NE(bind("p2").error.find("no longer fits"), std::string::npos);

  // The scheduler asking again for p1 (after filtering it, so its demand is known) is told yes
  // without another binding.
  auto pod = wire::decode_pod(pod_object("ml", "p1", "uid-p1", 2));
  ASSERT_TRUE(pod);
  wire::ExtenderArgs args;
  args.pod = *pod;
  args.set_node_names({"gpu-1"});
  (*ext_)->filter(args);
  BindAnswer again = bind("p1");
  EXPECT_EQ(again.error, "");
  EXPECT_EQ(again.summary.note, "already placed there");
  EXPECT_EQ(binding_posts(*h_, "p1").size(), 1u);
  // A pod placed elsewhere cannot be bound here.
  EXPECT_NE(bind("p1", "gpu-9").error.find("already placed on node gpu-1"), std::string::npos);
}

TEST_F(KubeBinding, ConflictNamingTheSameNodeIsSuccess) {
  h_->fake.set_binding_hook([](const BindingRequest& b) -> std::optional<BindingReply> {
    if (b.name != "p1") return std::nullopt;
    return BindingReply{409, status_body(409, "Conflict",
                                         "Operation cannot be fulfilled on pods/binding \"p1\": pod p1 is "
                                         "already assigned to node \"gpu-1\"")};
  });
  EXPECT_EQ(bind("p1").error, "");
  auto held = claim("p1");
  ASSERT_TRUE(held) << "the GPUs stay held for p1";
  EXPECT_EQ(held->kind, state::Claim::Kind::kReserved);
  EXPECT_NE(bind("p2").error.find("no longer fits"), std::string::npos);
}

TEST_F(KubeBinding, ConflictNamingAnotherNodeIsAnErrorAndReleasesTheReservation) {
  h_->fake.set_binding_hook([](const BindingRequest& b) -> std::optional<BindingReply> {
    if (b.name != "p1") return std::nullopt;
    return BindingReply{409, status_body(409, "Conflict",
                                         "Operation cannot be fulfilled on pods/binding \"p1\": pod p1 is "
                                         "already assigned to node \"gpu-7\"")};
  });
  BindAnswer answer = bind("p1");
  EXPECT_NE(answer.error.find("binding ml/p1 to gpu-1 failed: API server refused the binding (409)"), std::string::npos)
      << answer.error;
  EXPECT_NE(answer.error.find("gpu-7"), std::string::npos) << answer.error;
  EXPECT_FALSE(claim("p1")) << "the reservation is dropped";
  EXPECT_EQ(gpus_held(h_->state, "gpu-1"), 0);
  // A later pod fits again.
  EXPECT_EQ(bind("p2").error, "");
  ASSERT_TRUE(eventually([&] { return placed_on("p2", "gpu-1"); }));
}

TEST_F(KubeBinding, ServerErrorThenCreatedIsSuccess) {
  h_->fake.set_binding_hook([](const BindingRequest& b) -> std::optional<BindingReply> {
    if (b.attempt == 1) return BindingReply{500, status_body(500, "InternalError", "etcdserver: request timed out")};
    return std::nullopt;
  });
  EXPECT_EQ(bind("p1").error, "");
  EXPECT_EQ(binding_posts(*h_, "p1").size(), 2u);
  ASSERT_TRUE(eventually([&] { return placed_on("p1", "gpu-1"); }));
  EXPECT_EQ(gpus_held(h_->state, "gpu-1"), 2);
}

TEST_F(KubeBinding, ABindingThatNeverAnswersFailsWithinTheDeadlineAndReleasesTheReservation) {
  TearDown();
  start([](config::Config& c) { c.kubernetes.bind_timeout = 700ms; });
  h_->fake.set_binding_hook([](const BindingRequest& b) -> std::optional<BindingReply> {
    if (b.name == "p1") return BindingReply{0, {}, true};
    return std::nullopt;
  });
  const auto started = SteadyClock::now();
  BindAnswer answer = bind("p1");
  const auto took = SteadyClock::now() - started;
  EXPECT_NE(answer.error.find("binding ml/p1 to gpu-1 failed"), std::string::npos) << answer.error;
  EXPECT_LT(took, 700ms + 250ms) << "bind must answer within kubernetes.bind_timeout";
  EXPECT_FALSE(claim("p1")) << "the reservation is dropped";
  EXPECT_EQ(gpus_held(h_->state, "gpu-1"), 0);
  EXPECT_EQ(bind("p2").error, "");
  ASSERT_TRUE(eventually([&] { return placed_on("p2", "gpu-1"); }));
  h_->server.release_hangs();
}

TEST_F(KubeBinding, ARelistWhileABindIsInFlightKeepsTheReservation) {
  // The first POST for p1 hangs until released, then answers 504; the retry binds.
  h_->fake.set_binding_hook([](const BindingRequest& b) -> std::optional<BindingReply> {
    if (b.name == "p1" && b.attempt == 1) return BindingReply{0, {}, true};
    return std::nullopt;
  });
  BindAnswer first;
  std::thread binder([&] { first = bind("p1"); });
  ASSERT_TRUE(eventually([&] { return h_->server.hanging() == 1; }));
  ASSERT_TRUE(claim("p1"));
  // Meanwhile the pod watch expires and the pods are listed again, p1 still pending in the list.
  ASSERT_TRUE(eventually([&] { return h_->fake.open_watches(Kind::kPods) == 1; }));
  h_->fake.expire_watches(Kind::kPods);
  ASSERT_TRUE(eventually(
      [&] { return h_->server.lists("/api/v1/pods").size() == 2 && h_->fake.open_watches(Kind::kPods) == 1; }));
  auto held = claim("p1");
  ASSERT_TRUE(held) << "the relist must not drop a reservation";
  EXPECT_EQ(held->kind, state::Claim::Kind::kReserved);
  EXPECT_NE(bind("p2").error.find("no longer fits"), std::string::npos);
  h_->server.release_hangs();
  binder.join();
  EXPECT_EQ(first.error, "");
  EXPECT_EQ(binding_posts(*h_, "p1").size(), 2u);
  ASSERT_TRUE(eventually([&] { return placed_on("p1", "gpu-1"); }));
  EXPECT_NE(bind("p2").error.find("no longer fits"), std::string::npos);
}

TEST_F(KubeBinding, NotReadyRefusesToBind) {
  // A fresh cluster that cannot list nodes is not ready; the Extender says why and binds nothing.
  TearDown();
  h_ = std::make_unique<ClusterHarness>();
  h_->fake.forbid(Kind::kNodes, true);
  h_->fake.put(Kind::kPods, pod_object("ml", "p1", "uid-p1", 2));
  h_->start();
  ext_ = std::make_unique<KubeExtender>(*h_);
  ASSERT_TRUE(eventually([&] { return h_->cluster->not_ready()->find("HTTP 403") != std::string::npos; }));
  BindAnswer answer = bind("p1");
  EXPECT_NE(answer.error.find("scheduler-extender is not ready: nodes not synced yet"), std::string::npos)
      << answer.error;
  EXPECT_TRUE(h_->server.requests("POST").empty());
}

// A caller who can reach the scheduler port binds only where kube-scheduler could have placed the
// pod: each refusal below leaves the pod pending and posts no Binding.
TEST(KubeBindingEligibility, NoBindingWhereKubeSchedulerCouldNotHavePlacedThePod) {
  ClusterHarness h;
  h.fake.put(Kind::kNodes, node_object("team-a", 8, {}, {{"team", "a"}}));
  h.fake.put(Kind::kNodes, node_object("team-b", 8, {}, {{"team", "b"}}));
  json tainted = node_object("tainted", 8, {}, {{"team", "a"}});
  tainted["spec"]["taints"] = json::array({{{"key", "dedicated"}, {"value", "infra"}, {"effect", "NoSchedule"}}});
  h.fake.put(Kind::kNodes, tainted);
  json one_cpu = node_object("one-cpu", 8, {}, {{"team", "a"}});
  one_cpu["status"]["allocatable"]["cpu"] = "1";
  h.fake.put(Kind::kNodes, one_cpu);
  json selective = pod_object("ml", "selective", "uid-selective", 1);
  selective["spec"]["nodeSelector"] = {{"team", "a"}};
  h.fake.put(Kind::kPods, selective);
  json hungry = pod_object("ml", "hungry", "uid-hungry", 8);
  hungry["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "16";
  h.fake.put(Kind::kPods, hungry);
  h.start();
  ASSERT_TRUE(h.wait_ready());
  KubeExtender ext(h);

  struct Case {
    const char* what;
    wire::BindingArgs args;
    const char* mentions;
  };
  const Case cases[] = {
      {"a node its nodeSelector does not match", binding("selective", "team-b"),
       "nodeSelector team=a: node has team=b"},
      {"a node with a taint it does not tolerate", binding("selective", "tainted"), "taint dedicated=infra:NoSchedule"},
      {"16 CPUs on a node with 1", binding("hungry", "one-cpu"), "cpu: pod requests 16, node has 1 free of 1"},
      {"another pod's name with its uid",
       {"hungry", "ml", "uid-selective", "team-a"},
       "the uid belongs to another pod"},
  };
  for (const auto& c : cases) {
    BindAnswer answer = ext->bind(c.args);
    EXPECT_NE(answer.refusal, Refusal::kNone) << c.what;
    EXPECT_NE(answer.error.find(c.mentions), std::string::npos) << c.what << ": " << answer.error;
  }
  EXPECT_TRUE(h.server.requests("POST").empty()) << "no Binding reaches the API server";
  EXPECT_FALSE(h.fake.object(Kind::kPods, "ml/selective").value()["spec"].contains("nodeName"));
  EXPECT_FALSE(h.fake.object(Kind::kPods, "ml/hungry").value()["spec"].contains("nodeName"));

  EXPECT_EQ(ext->bind(binding("selective", "team-a")).error, "") << "where kube-scheduler could place it";
  EXPECT_EQ(binding_posts(h, "selective").size(), 1u);
}

// Many binds at once, for more pods than fit, with the fake server confirming each binding
// through the pod watch (a little later than the POST answers). A monitor checks every snapshot
// it can get while this runs: placed plus reserved GPUs never exceed a node's GPUs. At the end
// the server's truth fits the nodes, every successful bind is placed in the state, and no refused
// pod would fit anywhere.
TEST(KubeBindingConcurrency, NeverMoreGpusHeldThanANodeHas) {
  constexpr int kThreads = 8;
  constexpr int kPods = 24;  // 1 or 2 GPUs each: 36 asked for, 10 on offer
  const std::map<std::string, std::int64_t> capacity = {{"gpu-1", 4}, {"gpu-2", 4}, {"gpu-3", 2}};
  ClusterHarness h;
  for (const auto& [name, gpus] : capacity) h.fake.put(Kind::kNodes, node_object(name, gpus));
  std::vector<std::int64_t> need(kPods);
  for (int i = 0; i < kPods; ++i) {
    need[i] = i % 2 ? 2 : 1;
    h.fake.put(Kind::kPods, pod_object("ml", "c" + std::to_string(i), "uid-c" + std::to_string(i), need[i]));
  }
  // The server answers each binding after a short pause, so that several are in flight at once.
  h.fake.set_binding_hook([](const BindingRequest&) -> std::optional<BindingReply> {
    std::this_thread::sleep_for(5ms);
    return std::nullopt;
  });
  h.start();
  ASSERT_TRUE(h.wait_ready());
  KubeExtender ext(h);

  std::atomic<bool> done{false};
  std::atomic<long> snapshots{0};
  std::mutex violations_mu;
  std::vector<std::string> violations;
  std::thread monitor([&] {
    while (!done) {
      const state::Snapshot snap = h.state.snapshot();
      const auto now = SteadyClock::now();
      for (const auto& [key, node] : snap.nodes()) {
        const std::string& name = node->supply.name;
        const std::int64_t held = node->usage_excluding("", now).gpus_used(kGpu);
        if (held > capacity.at(name)) {
          std::lock_guard lock(violations_mu);
          violations.push_back(name + " holds " + std::to_string(held));
        }
      }
      ++snapshots;
      std::this_thread::yield();
    }
  });

  std::vector<std::string> outcome(kPods);  // node bound to, or "" when refused
  std::vector<std::string> reasons(kPods);
  std::atomic<int> next{0};
  std::barrier start_line(kThreads);
  auto worker = [&] {
    start_line.arrive_and_wait();
    for (int i = next++; i < kPods; i = next++) {
      const std::string name = "c" + std::to_string(i);
      auto pod = wire::decode_pod(h.fake.object(Kind::kPods, "ml/" + name).value());
      ASSERT_TRUE(pod) << pod.message();
      // As kube-scheduler does: filter, pick a node, bind; on a lost race, filter again (each
      // lost race means another pod took room, so this ends).
      for (int attempt = 0; attempt < 100 && outcome[i].empty(); ++attempt) {
        wire::ExtenderArgs args;
        args.pod = *pod;
        args.set_node_names({"gpu-1", "gpu-2", "gpu-3"});
        FilterAnswer f = ext->filter(args);
        ASSERT_TRUE(f.result.error.empty()) << f.result.error;
        if (f.result.node_names->empty()) {
          reasons[i] = "filtered out everywhere";
          break;
        }
        const std::string node((*f.result.node_names)[static_cast<std::size_t>(i) % f.result.node_names->size()]);
        BindAnswer b = ext->bind({name, "ml", pod->uid, node});
        if (b.error.empty()) {
          outcome[i] = node;
        } else {
          reasons[i] = b.error;
          ASSERT_NE(b.error.find("no longer fits"), std::string::npos) << b.error;
        }
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();

  // Every successful bind shows up as a placement through the watch.
  auto all_placed = [&] {
    for (int i = 0; i < kPods; ++i) {
      if (outcome[i].empty()) continue;
      auto c = h.state.claim_of("uid-c" + std::to_string(i));
      if (!c || c->kind != state::Claim::Kind::kPlaced || c->node != outcome[i]) return false;
    }
    return true;
  };
  EXPECT_TRUE(eventually(all_placed));
  done = true;
  monitor.join();

  EXPECT_TRUE(violations.empty()) << violations.size() << " snapshots overbooked a node, e.g. " << violations.front();
  EXPECT_GT(snapshots.load(), 0);

  // The server's truth: what it bound fits every node, and is exactly what /bind said yes to.
  std::map<std::string, std::int64_t> bound;
  int bound_pods = 0;
  for (const auto& [key, pod] : h.fake.objects(Kind::kPods)) {
    const std::string node = pod["spec"].value("nodeName", "");
    if (node.empty()) continue;
    ++bound_pods;
    bound[node] += std::stoll(pod["spec"]["containers"][0]["resources"]["requests"][kGpu].get<std::string>());
  }
  int successes = 0;
  for (int i = 0; i < kPods; ++i) successes += outcome[i].empty() ? 0 : 1;
  EXPECT_EQ(bound_pods, successes);
  for (const auto& [node, gpus] : bound) EXPECT_LE(gpus, capacity.at(node)) << node;
  EXPECT_EQ(kube::testing::view_of(h.state), kube::testing::view_of(h.fake));

  // Refusals were for want of room: no refused pod fits anywhere now.
  for (int i = 0; i < kPods; ++i) {
    if (!outcome[i].empty()) continue;
    for (const auto& [node, gpus] : capacity) {
      EXPECT_LT(gpus - bound[node], need[i]) << "c" << i << " was refused (" << reasons[i] << ") but fits " << node;
    }
  }
}

}  // namespace
}  // namespace extender::engine
