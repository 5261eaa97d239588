// Binds wait on the API server on workers of their own: with every Binding delayed by the fake
// API server and fifty binds in flight through the scheduler listener, a filter still answers at
// once. Wired as src/main.cpp wires kubernetes mode.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <thread>

#include "extender/engine/extender.h"
#include "extender/http/listener.h"
#include "extender/kube/api_binder.h"
#include "extender/server/api.h"
#include "extender/state/demand_cache.h"
#include "support/cluster_harness.h"

namespace extender::server {
namespace {

using namespace std::chrono_literals;
using kube::testing::BindingReply;
using kube::testing::BindingRequest;
using kube::testing::ClusterHarness;
using kube::testing::Kind;
using kube::testing::node_object;
using kube::testing::pod_object;

TEST(BindLane, BindsWaitingOnTheApiServerDoNotHoldWhatFiltersNeed) {
  ClusterHarness h([](config::Config& c) { c.kubernetes.bind_timeout = 8s; });
  h.fake.put(Kind::kNodes, node_object("gpu-1", 64));
  for (int i = 0; i < 50; ++i)
    h.fake.put(Kind::kPods, pod_object("ml", "p" + std::to_string(i), "uid-p" + std::to_string(i), 1));
  std::atomic<int> delayed{0};
  h.fake.set_binding_hook([&](const BindingRequest&) -> std::optional<BindingReply> {
    ++delayed;
    std::this_thread::sleep_for(4s);
    return std::nullopt;
  });
  h.start();
  ASSERT_TRUE(h.wait_ready());

  state::DemandCache demands(1000, 5min);
  kube::ApiBinder binder(*h.client);
  auto built = h.extender(demands, binder);
  engine::Extender& extender = *built;
  Metrics metrics;
  ApiDeps api_deps;
  api_deps.extender = &extender;
  api_deps.state = &h.state;
  api_deps.metrics = &metrics;
  api_deps.mode = "kubernetes";
  api_deps.admin_mutations = false;
  api_deps.node_fields = h.cfg.node_fields();
  Api api(api_deps, {"/scheduler", true, false, false});
  http::ListenerOptions options = http::listener_options(h.cfg.server, "scheduler");
  options.threads = 2;
  options.lane_of = [&](std::string_view m, std::string_view p) { return api.lane_of(m, p); };
  http::Listener listener(options, [&](const http::HttpRequest& r) { return api.handle(r); });
  ASSERT_TRUE(listener.bind("127.0.0.1", 0).ok());
  std::thread serving([&] { listener.serve(); });

  std::vector<std::thread> binds;
  std::atomic<int> bound{0};
  for (int i = 0; i < 50; ++i) {
    binds.emplace_back([&, i] {
      httplib::Client c("127.0.0.1", listener.port());
      c.set_read_timeout(20, 0);
      const std::string body = R"({"PodName":"p)" + std::to_string(i) + R"(","PodNamespace":"ml","PodUID":"uid-p)" +
                               std::to_string(i) + R"(","Node":"gpu-1"})";
      auto res = c.Post("/scheduler/bind", body, "application/json");
      if (res && res->body == R"({"Error":""})") ++bound;
    });
  }
  ASSERT_TRUE(kube::testing::eventually([&] { return delayed.load() == 50; }, 3000ms))
      << delayed.load() << " binds reached the API server";

  httplib::Client c("127.0.0.1", listener.port());
  const auto started = std::chrono::steady_clock::now();
  auto res = c.Post(
      "/scheduler/filter",
      R"({"Pod":{"metadata":{"name":"f","namespace":"ml","uid":"uid-f"},"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"1"}}}]}},"NodeNames":["gpu-1"],"Nodes":null})",
      "application/json");
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find(R"("NodeNames":["gpu-1"])"), std::string::npos) << res->body;
  EXPECT_LT(took, 1s) << "the filter waited behind the binds";

  for (auto& t : binds) t.join();
  EXPECT_EQ(bound.load(), 50);
  listener.stop();
  serving.join();
}

}  // namespace
}  // namespace extender::server
