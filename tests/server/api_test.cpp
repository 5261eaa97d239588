#include "extender/server/api.h"

#include <gtest/gtest.h>

#include "extender/config/config.h"

namespace extender::server {
namespace {

using namespace std::chrono_literals;

HttpRequest request(std::string method, std::string path, std::string body = "") {
  HttpRequest r;
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

struct Harness {
  config::Config cfg;
  state::ClusterState state;
  state::DemandCache demands{100, std::chrono::minutes(1)};
  std::optional<std::string> why_not_ready;
  std::unique_ptr<engine::Extender> extender;
  Metrics metrics;

  Api api(std::chrono::milliseconds deadline) {
    engine::ExtenderDeps deps;
    deps.state = &state;
    deps.demands = &demands;
    deps.not_ready = [this] { return why_not_ready; };
    extender = std::make_unique<engine::Extender>(cfg, std::move(deps));
    ApiDeps api_deps{extender.get(), &state, &metrics, [this] { return why_not_ready; }, "standalone", deadline, true,
                     cfg.node_fields(), &demands, {}, {}};
    return Api(api_deps, {"/scheduler", true, true, true});
  }
};

TEST(Api, ReadyzAnswers503WithTheReasonWhileNotReady) {
  Harness h;
  Api api = h.api(4s);
  h.why_not_ready = "nodes not synced yet";
  HttpResponse res = api.handle(request("GET", "/readyz"));
  EXPECT_EQ(res.status, 503);
  EXPECT_EQ(res.body, R"({"status":"not ready","reason":"nodes not synced yet"})");
  h.why_not_ready.reset();
  res = api.handle(request("GET", "/readyz"));
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.body, R"({"status":"ready"})");
}

TEST(Api, FilterAndPrioritizeGiveUpPastTheRequestDeadline) {
  Harness h;
  Api late = h.api(0ms);
  HttpResponse res = late.handle(request("POST", "/scheduler/filter", names_body(600)));
  EXPECT_EQ(res.status, 200);
  EXPECT_NE(res.body.find(R"("Error":"filter took longer than server.request_deadline)"), std::string::npos) << res.body;
  EXPECT_NE(res.body.find(R"("NodeNames":null)"), std::string::npos) << "no partial answer: " << res.body.substr(0, 200);

  Harness in_time;
  Api api = in_time.api(10s);
  res = api.handle(request("POST", "/scheduler/filter", names_body(600)));
  EXPECT_NE(res.body.find(R"("Error":"")"), std::string::npos) << res.body.substr(res.body.size() - 200);
}

TEST(Api, TheRequestDeadlineCountsFromWhenTheRequestWasQueued) {
  Harness h;
  Api api = h.api(4s);
  HttpRequest waited = request("POST", "/scheduler/filter", names_body(600));
  waited.queued_at = std::chrono::steady_clock::now() - 5s;
  HttpResponse res = api.handle(waited);
  EXPECT_NE(res.body.find(R"("Error":"filter took longer than server.request_deadline)"), std::string::npos)
      << "five seconds in the queue left the filter a full deadline: " << res.body.substr(0, 200);
  HttpRequest fresh = request("POST", "/scheduler/filter", names_body(600));
  fresh.queued_at = std::chrono::steady_clock::now();
  res = api.handle(fresh);
  EXPECT_NE(res.body.find(R"("Error":"")"), std::string::npos) << res.body.substr(res.body.size() - 200);
}

}  // namespace
}  // namespace extender::server
