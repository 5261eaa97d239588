// Overcommit over real sockets: a node that shrinks under placed pods is logged once, counted in
// /metrics and explained in /debug/nodes/<name>.
#include <gtest/gtest.h>
#include <httplib.h>

#include <string>
#include <thread>

#include "daemon/daemon_process.h"

namespace extender::testing {
namespace {

using namespace std::chrono_literals;

std::string filter_body(const std::string& uid, int gpus_needed, int gpus_offered) {
  return R"({"Pod":{"metadata":{"name":")" + uid + R"(","namespace":"t","uid":")" + uid +
         R"("},"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":")" +
         std::to_string(gpus_needed) +
         R"("}}}]}},"Nodes":{"metadata":{},"items":[{"metadata":{"name":"n1"},"status":{"allocatable":{"nvidia.com/gpu":")" +
         std::to_string(gpus_offered) + R"("}}}]},"NodeNames":null})";
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(OvercommitOverSockets, ANodeThatShrinksUnderItsPodsIsLoggedOnceCountedAndExplained) {
  DaemonProcess daemon({}, "admin:\n  listen: 127.0.0.1:0\n");
  httplib::Client c("127.0.0.1", daemon.port());
  httplib::Client admin("127.0.0.1", daemon.admin_port());
  for (const char* uid : {"p1", "p2"}) {
    auto f = c.Post("/filter", filter_body(uid, 2, 4), "application/json");
    ASSERT_TRUE(f);
    ASSERT_NE(f->body.find("\"FailedNodes\":{}"), std::string::npos) << f->body;
    auto b =
        c.Post("/bind",
               std::string(R"({"PodName":")") + uid + R"(","PodNamespace":"t","PodUID":")" + uid + R"(","Node":"n1"})",
               "application/json");
    ASSERT_TRUE(b);
    ASSERT_EQ(b->body, R"({"Error":""})");
  }
  auto m = admin.Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("scheduler_extender_overcommit_episodes_total{kind=\"gpu\"} 0\n"), std::string::npos)
      << m->body;

  // The node now reports 3 GPUs (a resize): 4 are held.
  ASSERT_TRUE(c.Post("/filter", filter_body("p3", 1, 3), "application/json"));
  const std::string line =
      "node n1 is overcommitted: 2 pod(s) bound there hold 4 nvidia.com/gpu but the node has 3 allocatable";
  std::string log = daemon.wait_for_log(line);
  ASSERT_NE(log.find(line), std::string::npos) << log;
  EXPECT_NE(log.find("ignoredByScheduler: true"), std::string::npos);

  m = admin.Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("scheduler_extender_overcommit_episodes_total{kind=\"gpu\"} 1\n"), std::string::npos)
      << m->body;
  EXPECT_NE(m->body.find("scheduler_extender_overcommitted_nodes{kind=\"gpu\"} 1\n"), std::string::npos);
  EXPECT_NE(m->body.find("scheduler_extender_node_gpus_used{node=\"n1\",resource=\"nvidia.com/gpu\"} 4\n"),
            std::string::npos);
  auto d = admin.Get("/debug/nodes/n1");
  ASSERT_TRUE(d);
  EXPECT_NE(d->body.find("\"overcommitted\": ["), std::string::npos) << d->body;
  EXPECT_NE(d->body.find("\"bound\": 4"), std::string::npos) << d->body;

  // Still overcommitted a few checks later: no second line, no second count.
  ASSERT_TRUE(c.Post("/filter", filter_body("p4", 1, 3), "application/json"));
  std::this_thread::sleep_for(2500ms);
  EXPECT_EQ(count(daemon.log(), "node n1 is overcommitted"), 1u) << daemon.log();
  // Back to 4 GPUs ends the episode; shrinking again starts a new one.
  ASSERT_TRUE(c.Post("/filter", filter_body("p5", 1, 4), "application/json"));
  std::this_thread::sleep_for(1500ms);
  ASSERT_TRUE(c.Post("/filter", filter_body("p6", 1, 2), "application/json"));
  log = daemon.wait_for_log("node n1 is overcommitted: 2 pod(s) bound there hold 4 nvidia.com/gpu but the node has 2");
  EXPECT_EQ(count(log, "node n1 is overcommitted"), 2u) << log;
  m = admin.Get("/metrics");
  EXPECT_NE(m->body.find("scheduler_extender_overcommit_episodes_total{kind=\"gpu\"} 2\n"), std::string::npos)
      << m->body;
  EXPECT_EQ(daemon.stop(), 0);
}

}  // namespace
}  // namespace extender::testing
