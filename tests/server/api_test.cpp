#include "extender/server/api.h"

#include <gtest/gtest.h>

#include "extender/config/config.h"
#include "extender/sources/inventory.h"
#include "support/engine_harness.h"

namespace extender::server {
namespace {

using namespace std::chrono_literals;

http::HttpRequest request(std::string method, std::string path, std::string body = "") {
  http::HttpRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.body = std::move(body);
  r.body.reserve(r.body.size() + 64);
  r.remote = "127.0.0.1:1";
  r.peer_ip = "127.0.0.1";
  r.peer_loopback = true;
  return r;
}

// A GPU pod and `n` node names the daemon does not know (each is judged, each fails).
std::string names_body(int n) {
  std::string body = R"({"Pod":{"metadata":{"name":"p","namespace":"t","uid":"u1"},"spec":{"containers":[{"name":"c",)"
                     R"("resources":{"limits":{"nvidia.com/gpu":"1"}}}]}},"Nodes":null,"NodeNames":[)";
  for (int i = 0; i < n; ++i) body += (i ? ",\"n" : "\"n") + std::to_string(i) + "\"";
  return body + "]}";
}

// A standalone engine (testing::EngineHarness) behind an Api; not ready while why_not_ready is set.
struct Harness : testing::EngineHarness {
  std::optional<std::string> why_not_ready;
  engine::Extender* extender = nullptr;
  Metrics metrics;

  Api api(std::chrono::milliseconds deadline) {
    gate.ready = [this] { return why_not_ready; };
    extender = &standalone();
    ApiDeps api_deps{extender,
                     &state,
                     &metrics,
                     [this] { return why_not_ready; },
                     "standalone",
                     deadline,
                     true,
                     cfg.node_fields(),
                     cfg.decode_limits(),
                     &demands,
                     {},
                     {}};
    return Api(api_deps, {"/scheduler", true, true, true});
  }
};

TEST(Api, ReadyzAnswers503WithTheReasonWhileNotReady) {
  Harness h;
  Api api = h.api(4s);
  h.why_not_ready = "nodes not synced yet";
  http::HttpResponse res = api.handle(request("GET", "/readyz"));
  EXPECT_EQ(res.status, 503);
  EXPECT_EQ(res.body, R"({"status":"not ready","reason":"nodes not synced yet"})");
  h.why_not_ready.reset();
  res = api.handle(request("GET", "/readyz"));
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.body, R"({"status":"ready"})");
}

TEST(Api, AReplicaThatDoesNotLeadClosesTheConnectionAfterAVerb) {
  struct Case {
    const char* what;
    std::optional<bool> leading;  // none: no election
    bool close;
  };
  const Case cases[] = {
      {"no election", std::nullopt, false},
      {"the leader", true, false},
      {"a standby or a lapsed leader", false, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Harness h;
    (void)h.api(4s);  // builds the engine
    ApiDeps deps{
        h.extender, &h.state, &h.metrics, {}, "kubernetes", 4s, false, h.cfg.node_fields(), h.cfg.decode_limits(),
        &h.demands, {},       {}};
    if (c.leading) {
      deps.leadership = [leading = *c.leading] {
        LeadershipView view;
        view.leading = leading;
        return view;
      };
    }
    Api api(deps, {"/scheduler", true, true, true});
    for (const char* path : {"/scheduler/filter", "/scheduler/prioritize"}) {
      EXPECT_EQ(api.handle(request("POST", path, names_body(2))).close, c.close) << path;
    }
    EXPECT_FALSE(api.handle(request("GET", "/readyz")).close) << "probes keep their connection";
  }
}

TEST(Api, FilterAndPrioritizeGiveUpPastTheRequestDeadline) {
  Harness h;
  Api late = h.api(0ms);
  http::HttpResponse res = late.handle(request("POST", "/scheduler/filter", names_body(600)));
  EXPECT_EQ(res.status, 200);
  EXPECT_NE(res.body.find(R"("Error":"filter took longer than server.request_deadline)"), std::string::npos)
      << res.body;
  EXPECT_NE(res.body.find(R"("NodeNames":null)"), std::string::npos)
      << "no partial answer: " << res.body.substr(0, 200);

  Harness in_time;
  Api api = in_time.api(10s);
  res = api.handle(request("POST", "/scheduler/filter", names_body(600)));
  EXPECT_NE(res.body.find(R"("Error":"")"), std::string::npos) << res.body.substr(res.body.size() - 200);
}

TEST(Api, TheRequestDeadlineCountsFromWhenTheRequestWasQueued) {
  Harness h;
  Api api = h.api(4s);
  http::HttpRequest waited = request("POST", "/scheduler/filter", names_body(600));
  waited.queued_at = std::chrono::steady_clock::now() - 5s;
  http::HttpResponse res = api.handle(waited);
  EXPECT_NE(res.body.find(R"("Error":"filter took longer than server.request_deadline)"), std::string::npos)
      << "five seconds in the queue left the filter a full deadline: " << res.body.substr(0, 200);
  http::HttpRequest fresh = request("POST", "/scheduler/filter", names_body(600));
  fresh.queued_at = std::chrono::steady_clock::now();
  res = api.handle(fresh);
  EXPECT_NE(res.body.find(R"("Error":"")"), std::string::npos) << res.body.substr(res.body.size() - 200);
}

struct Declined {
  const char* path;
  int status;
  const char* answer;  // where the refusal is
};

TEST(Api, DeclinesMoreNodesThanTheCapAsTheProtocolCarriesIt) {
  const Declined cases[] = {
      // kube-scheduler puts a filter's Error into the pod's FailedScheduling event.
      {"/scheduler/filter", 200,
       R"("Error":"scheduler-extender declines the request: NodeNames lists more than 3 nodes)"},
      // A prioritize answer has no error field; any status but 200 fails the call (scores ignored).
      {"/scheduler/prioritize", 413, R"({"error":"prioritize request declined: NodeNames lists more than 3 nodes)"},
  };
  for (const auto& c : cases) {
    Harness h;
    h.cfg.server.max_nodes_per_request = 3;
    Api api = h.api(10s);
    http::HttpResponse res = api.handle(request("POST", c.path, names_body(4)));
    EXPECT_EQ(res.status, c.status) << c.path;
    EXPECT_NE(res.body.find(c.answer), std::string::npos) << c.path << ": " << res.body;
    EXPECT_EQ(api.handle(request("POST", c.path, names_body(3))).status, 200) << c.path;
    EXPECT_EQ(api.handle(request("POST", c.path, "{\"Pod\":{},\"NodeNames\":[1]}")).status, 400)
        << "malformed stays 400";
  }
}

// A pod with these container requests and the NodeNames form of `nodes`.
std::string pod_body(const std::string& uid, const std::string& requests, const std::string& nodes) {
  return R"({"Pod":{"metadata":{"name":")" + uid + R"(","namespace":"t","uid":")" + uid +
         R"("},"spec":{"containers":[{"name":"c","resources":{"requests":)" + requests + R"(,"limits":)" + requests +
         R"(}}]}},"Nodes":null,"NodeNames":)" + nodes + "}";
}

TEST(Api, TheEveryPodVerbsDecideOnlyThePodsWithoutGpus) {
  Harness h;
  h.cfg.scoring.packing = policy::PackingStrategy::kFragmentation;
  auto inv = sources::parse_inventory(R"(
nodes:
  - name: gpu
    labels: {nvidia.com/gpu.memory: "81559"}
    gpus: {nvidia.com/gpu: 8}
    cpu: "64"
    memory: 256Gi
  - name: plain
    cpu: "64"
    memory: 256Gi
)",
                                      "inv", h.cfg.gpu.resources);
  ASSERT_TRUE(inv) << inv.message();
  h.state.upsert_nodes(*inv);
  Api api = h.api(4s);
  const std::string cpu_only = pod_body("cpu-1", R"({"cpu":"2","memory":"1Gi"})", R"(["gpu","plain"])");
  const std::string gpu = pod_body("gpu-1", R"({"nvidia.com/gpu":"1"})", R"(["gpu","plain"])");

  http::HttpResponse res = api.handle(request("POST", "/scheduler/prioritize-unmanaged", cpu_only));
  EXPECT_EQ(res.status, 200);
  EXPECT_NE(res.body.find(R"({"Host":"plain","Score":)"), std::string::npos)
      << "a pod without GPUs goes where no GPU waits for its CPU: " << res.body;
  EXPECT_EQ(res.body.find(R"("Host":"gpu")"), std::string::npos)
      << "the GPU node ranks lowest, and the lowest is left out (wire::above_lowest): " << res.body;
  EXPECT_EQ(api.handle(request("POST", "/scheduler/prioritize", cpu_only)).body, "[]")
      << "the managed entry's verb scores no pod that needs nothing managed";
  EXPECT_EQ(api.handle(request("POST", "/scheduler/prioritize-unmanaged", gpu)).body, "[]")
      << "a GPU pod is scored by the managed entry only, never twice";
  EXPECT_NE(h.metrics.render({}).find(R"(requests_total{outcome="ok",verb="prioritize_unmanaged"} 2)"),
            std::string::npos)
      << "the two calls of the every-pod verb counted under their own label";

  res = api.handle(request("POST", "/scheduler/filter-unmanaged", gpu));
  EXPECT_EQ(res.status, 200);
  EXPECT_NE(res.body.find(R"("NodeNames":["gpu","plain"])"), std::string::npos)
      << "a GPU pod passes the every-pod entry's filter untouched (the managed entry filters it): " << res.body;
  EXPECT_NE(h.metrics.render({}).find(R"(requests_total{outcome="ok",verb="filter_unmanaged"} 1)"), std::string::npos)
      << "the every-pod filter counted under its own label";
}

}  // namespace
}  // namespace extender::server
