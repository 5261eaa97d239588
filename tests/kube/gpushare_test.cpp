// GPU sharing in kubernetes mode against the fake API server, wired as src/main.cpp wires it: /bind
// merge-patches the gpushare annotations onto the pod (the device chosen under the bind lock, the
// pod's request and the device's memory in GiB, not assigned, the assume time) before it creates the
// Binding; a 403 on that patch binds nothing and is what /readyz names; and the watch rebuilds the
// per-device view from those annotations, so a restarted daemon (or another replica) sees the same.
#include <gtest/gtest.h>

#include "extender/engine/extender.h"
#include "extender/kube/api_binder.h"
#include "extender/kube/gpushare.h"
#include "extender/state/demand_cache.h"
#include "support/cluster_harness.h"

namespace extender::kube {
namespace {

using namespace std::chrono_literals;
using testing::ClusterHarness;
using testing::eventually;
using testing::json;
using testing::Kind;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

// A node of `count` GPUs of `gib` GiB each, as the gpushare device plugin advertises it.
json share_node(const std::string& name, int count, int gib) {
  json node = testing::node_object(name, 0);
  node["status"]["allocatable"].erase("nvidia.com/gpu");
  node["status"]["allocatable"]["aliyun.com/gpu-mem"] = std::to_string(count * gib);
  node["status"]["allocatable"]["aliyun.com/gpu-count"] = std::to_string(count);
  node["status"]["capacity"] = node["status"]["allocatable"];
  return node;
}

// A pod asking `gib` GiB of one GPU; bound to `node` when given, with `annotations`.
json share_pod(const std::string& name, int gib, const std::string& node = {},
               std::map<std::string, std::string> annotations = {}, const std::string& phase = "Running") {
  json pod = testing::pod_object("ml", name, "uid-" + name, 0, node, phase);
  pod["spec"]["containers"][0]["resources"] = {{"requests", {{"aliyun.com/gpu-mem", std::to_string(gib)}}},
                                               {"limits", {{"aliyun.com/gpu-mem", std::to_string(gib)}}}};
  if (!annotations.empty()) pod["metadata"]["annotations"] = annotations;
  return pod;
}

// Per device of the node: "<index>=<GiB shared>/<shares>", from what the state holds.
std::vector<std::string> device_view(const state::ClusterState& state, const std::string& node) {
  const state::NodeState* n = state.snapshot().find(node);
  if (!n) return {"no node " + node};
  std::vector<std::string> out;
  for (const auto& [index, use] : n->usage_excluding("", SteadyClock::now()).gpu_devices) {
    out.push_back(std::to_string(index) + "=" + std::to_string(use.bytes / kGiB) + "/" + std::to_string(use.shares));
  }
  return out;
}

// The device each placed pod's share is on, by pod uid.
std::map<std::string, std::int64_t> share_devices(const state::ClusterState& state, const std::string& node) {
  std::map<std::string, std::int64_t> out;
  const state::NodeState* n = state.snapshot().find(node);
  if (!n) return out;
  for (const auto& [uid, claim] : n->claims) {
    for (const auto& h : claim.allocation.gpu_devices) {
      if (!h.whole) out[uid] = h.index;
    }
  }
  return out;
}

// The view a fresh daemon builds from the same API server (a restart, or another replica).
struct Replica {
  explicit Replica(ClusterHarness& h) : cluster(state, h.cfg.kube_cluster_options(), *h.client) { cluster.start(); }
  ~Replica() { cluster.stop(); }
  bool wait_ready() {
    return eventually([&] { return !cluster.not_ready().has_value(); }, 10'000ms);
  }
  state::ClusterState state;
  sources::KubeCluster cluster;
};

TEST(GpuSharePatch, CarriesTheUidAndTheFiveAnnotationsAsTheDevicePluginParsesThem) {
  const json body = json::parse(gpu_share_patch("uid-\"a\"", {1, 8, 16}, 1764547200123456789));
  EXPECT_EQ(body, (json{{"metadata",
                         {{"uid", "uid-\"a\""},
                          {"annotations",
                           {{"ALIYUN_COM_GPU_MEM_IDX", "1"},
                            {"ALIYUN_COM_GPU_MEM_POD", "8"},
                            {"ALIYUN_COM_GPU_MEM_DEV", "16"},
                            {"ALIYUN_COM_GPU_MEM_ASSIGNED", "false"},
                            {"ALIYUN_COM_GPU_MEM_ASSUME_TIME", "1764547200123456789"}}}}}}));
}

TEST(GpuSharePatch, TheRecordedIndexIsANonNegativeInteger) {
  struct Case {
    std::optional<std::string> text;
    std::optional<std::int64_t> index;
  };
  const Case cases[] = {{"0", 0},
                        {"3", 3},
                        {"12", 12},
                        {std::nullopt, std::nullopt},
                        {"", std::nullopt},
                        {"-1", std::nullopt},
                        {"one", std::nullopt},
                        {"1.5", std::nullopt},
                        {" 1", std::nullopt},
                        {"1 ", std::nullopt},
                        {"99999999999999999999", std::nullopt}};
  for (const auto& c : cases) {
    model::Pod pod;
    if (c.text) pod.annotations[kGpuShareIndex] = *c.text;
    EXPECT_EQ(recorded_gpu_share_index(pod), c.index) << (c.text ? "\"" + *c.text + "\"" : "absent");
  }
}

class GpuShareBinding : public ::testing::Test {
 protected:
  void SetUp() override {
    h_.fake.put(Kind::kNodes, share_node("gs", 2, 16));
    for (auto [name, gib] : {std::pair{"a", 8}, {"b", 8}, {"c", 10}}) h_.fake.put(Kind::kPods, share_pod(name, gib));
    h_.start();
    ASSERT_TRUE(h_.wait_ready());
    ext_ = h_.extender(demands_, binder_);
  }
  engine::BindAnswer bind(const std::string& pod) { return ext_->bind({pod, "ml", "uid-" + pod, "gs"}); }
  json annotations(const std::string& pod) {
    auto object = h_.fake.object(Kind::kPods, "ml/" + pod);
    return object ? (*object)["metadata"].value("annotations", json::object()) : json();
  }
  // Index in the server's request log of the first `method` to `path`; -1 when none.
  long request_index(const std::string& method, const std::string& path) {
    const auto all = h_.server.requests();
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (all[i].method == method && all[i].path == path) return static_cast<long>(i);
    }
    return -1;
  }

  ClusterHarness h_;
  state::DemandCache demands_{1000, std::chrono::minutes(5)};
  ApiBinder binder_{*h_.client};
  std::unique_ptr<engine::Extender> ext_;
};

TEST_F(GpuShareBinding, BindWritesTheAnnotationsBeforeTheBindingAndTheWatchReadsThemBack) {
  const auto before = std::chrono::system_clock::now();
  for (const char* pod : {"a", "b", "c"}) ASSERT_EQ(bind(pod).error, "") << pod;
  const auto after = std::chrono::system_clock::now();
  auto ns = [](std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  };
  struct Want {
    const char* pod;
    const char* index;
    const char* request;
  };
  // binpack: a and b fill GPU 0, c does not fit there and takes GPU 1.
  for (const Want& w : {Want{"a", "0", "8"}, Want{"b", "0", "8"}, Want{"c", "1", "10"}}) {
    const json a = annotations(w.pod);
    EXPECT_EQ(a.value("ALIYUN_COM_GPU_MEM_IDX", ""), w.index) << w.pod;
    EXPECT_EQ(a.value("ALIYUN_COM_GPU_MEM_POD", ""), w.request) << w.pod;
    EXPECT_EQ(a.value("ALIYUN_COM_GPU_MEM_DEV", ""), "16") << w.pod;
    EXPECT_EQ(a.value("ALIYUN_COM_GPU_MEM_ASSIGNED", ""), "false") << w.pod;
    const std::int64_t assumed = std::stoll(a.value("ALIYUN_COM_GPU_MEM_ASSUME_TIME", "0"));
    EXPECT_GE(assumed, ns(before)) << w.pod;
    EXPECT_LE(assumed, ns(after)) << w.pod;
    const long patch = request_index("PATCH", std::string("/api/v1/namespaces/ml/pods/") + w.pod);
    const long binding = request_index("POST", std::string("/api/v1/namespaces/ml/pods/") + w.pod + "/binding");
    ASSERT_GE(patch, 0) << w.pod;
    EXPECT_LT(patch, binding) << w.pod << ": the pod is annotated before it is bound";
  }
  ASSERT_TRUE(eventually([&] {
    for (const char* uid : {"uid-a", "uid-b", "uid-c"}) {
      auto claim = h_.state.claim_of(uid);
      if (!claim || claim->kind != state::Claim::Kind::kPlaced) return false;
    }
    return true;
  })) << "the watch shows the three pods bound";
  const std::vector<std::string> want{"0=16/2", "1=10/1"};
  EXPECT_EQ(device_view(h_.state, "gs"), want) << "read back from the annotations";
  const std::map<std::string, std::int64_t> devices{{"uid-a", 0}, {"uid-b", 0}, {"uid-c", 1}};
  EXPECT_EQ(share_devices(h_.state, "gs"), devices);

  Replica restarted(h_);
  ASSERT_TRUE(restarted.wait_ready());
  EXPECT_EQ(device_view(restarted.state, "gs"), want) << "a restart rebuilds the same per-device view";
  EXPECT_EQ(share_devices(restarted.state, "gs"), devices);
}

TEST_F(GpuShareBinding, AForbiddenPodPatchBindsNothingAndIsNamedForReadyz) {
  h_.fake.refuse_patches(Kind::kPods, 403);
  const engine::BindAnswer refused = bind("a");
  EXPECT_NE(refused.error.find("binding ml/a to gs failed: recording GPU 0 on pod ml/a (403)"), std::string::npos)
      << refused.error;
  EXPECT_TRUE(h_.server.requests("POST", "/api/v1/namespaces/ml/pods/a/binding").empty())
      << "no Binding without the record";
  EXPECT_FALSE(h_.state.claim_of("uid-a")) << "the reservation is given back";
  EXPECT_NE(binder_.refused_permission().find("patch pods is forbidden (HTTP 403)"), std::string::npos)
      << binder_.refused_permission();

  h_.fake.refuse_patches(Kind::kPods, 0);
  EXPECT_EQ(bind("a").error, "") << "a fixed ClusterRole heals at the next bind";
  EXPECT_EQ(binder_.refused_permission(), "");
}

TEST(GpuShareReadBack, BoundPodsHoldTheirShareOnTheRecordedDeviceOrTheBestFitOne) {
  struct Pod {
    std::string name;
    int gib;
    std::optional<std::string> index;  // ALIYUN_COM_GPU_MEM_IDX, if recorded
    std::string phase = "Running";
  };
  struct Case {
    const char* what;
    std::vector<Pod> pods;
    std::vector<std::string> devices;            // "<index>=<GiB>/<shares>"
    std::map<std::string, std::int64_t> placed;  // pod uid -> device
  };
  const Case cases[] = {
      {"recorded indices", {{"a", 8, "1"}, {"b", 4, "1"}}, {"1=12/2"}, {{"uid-a", 1}, {"uid-b", 1}}},
      {"no record: the best-fit device after the recorded ones",
       {{"a", 10, "0"}, {"b", 4, std::nullopt}},
       {"0=14/2"},
       {{"uid-a", 0}, {"uid-b", 0}}},
      {"no record and no device holds it: the one with the most free memory",
       {{"a", 12, "0"}, {"b", 10, "1"}, {"c", 8, std::nullopt}},
       {"0=12/1", "1=18/2"},
       {{"uid-a", 0}, {"uid-b", 1}, {"uid-c", 1}}},
      {"several without a record: in uid order",
       {{"p2", 8, std::nullopt}, {"p1", 10, std::nullopt}},
       {"0=10/1", "1=8/1"},
       {{"uid-p1", 0}, {"uid-p2", 1}}},
      {"an index that is not a number, or names no device of the node, is no record",
       {{"a", 4, "one"}, {"b", 4, "7"}},
       {"0=8/2"},
       {{"uid-a", 0}, {"uid-b", 0}}},
      {"finished pods hold nothing", {{"a", 8, "0", "Succeeded"}, {"b", 8, "1"}}, {"1=8/1"}, {{"uid-b", 1}}},
  };
  for (const auto& c : cases) {
    ClusterHarness h;
    h.fake.put(Kind::kNodes, share_node("gs", 2, 16));
    for (const auto& p : c.pods) {
      std::map<std::string, std::string> annotations;
      if (p.index) annotations[kGpuShareIndex] = *p.index;
      h.fake.put(Kind::kPods, share_pod(p.name, p.gib, "gs", annotations, p.phase));
    }
    h.start();
    ASSERT_TRUE(h.wait_ready()) << c.what;
    EXPECT_EQ(device_view(h.state, "gs"), c.devices) << c.what;
    EXPECT_EQ(share_devices(h.state, "gs"), c.placed) << c.what;
    Replica other(h);
    ASSERT_TRUE(other.wait_ready()) << c.what;
    EXPECT_EQ(device_view(other.state, "gs"), c.devices) << c.what << ": every replica agrees";
  }
}

TEST(GpuShareReadBack, AnAnnotationArrivingLaterMovesTheShareToItsDevice) {
  ClusterHarness h;
  h.fake.put(Kind::kNodes, share_node("gs", 2, 16));
  h.fake.put(Kind::kPods, share_pod("a", 8, "gs"));
  h.start();
  ASSERT_TRUE(h.wait_ready());
  EXPECT_EQ(device_view(h.state, "gs"), std::vector<std::string>{"0=8/1"});
  h.fake.put(Kind::kPods, share_pod("a", 8, "gs", {{kGpuShareIndex, "1"}}));
  EXPECT_TRUE(eventually([&] { return device_view(h.state, "gs") == std::vector<std::string>{"1=8/1"}; }));
}

}  // namespace
}  // namespace extender::kube
