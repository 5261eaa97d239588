#include "extender/daemon/daemon.h"
#include "extender/daemon/simulator_config.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include "extender/config/config.h"

namespace extender::daemon {
namespace {

config::Config standalone_config(const std::string& extra = "") {
  auto cfg = config::parse_config("server:\n  listen: 127.0.0.1:0\nadmin:\n  listen: 127.0.0.1:0\n" + extra, "<test>");
  EXPECT_TRUE(cfg) << cfg.message();
  return *cfg;
}

std::string pod(const char* uid, const char* gpus) {
  return std::string(R"({"metadata":{"name":"p-)") + uid + R"(","namespace":"t","uid":")" + uid +
         R"("},"spec":{"containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":")" + gpus + R"("}}}]}})";
}

TEST(DaemonBuilder, AStandaloneDaemonServesVerbsAndProbesAndBindsInMemory) {
  auto built = Daemon::create(standalone_config());
  ASSERT_TRUE(built) << built.message();
  Daemon& d = **built;
  ASSERT_GT(d.port(), 0);
  ASSERT_GT(d.admin_port(), 0);
  ASSERT_NE(d.port(), d.admin_port());
  d.start();

  httplib::Client admin("127.0.0.1", d.admin_port());
  auto ready = admin.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200) << ready->body;

  httplib::Client c("127.0.0.1", d.port());
  const std::string nodes =
      R"({"metadata":{},"items":[{"metadata":{"name":"n1"},"status":{"allocatable":{"nvidia.com/gpu":"4"}}}]})";
  auto filtered = c.Post("/filter", "{\"Pod\":" + pod("b1", "4") + ",\"Nodes\":" + nodes + ",\"NodeNames\":null}",
                         "application/json");
  ASSERT_TRUE(filtered);
  EXPECT_NE(filtered->body.find("\"name\":\"n1\""), std::string::npos) << filtered->body;
  auto bound =
      c.Post("/bind", R"({"PodName":"p-b1","PodNamespace":"t","PodUID":"b1","Node":"n1"})", "application/json");
  ASSERT_TRUE(bound);
  EXPECT_EQ(bound->body, R"({"Error":""})");
  auto claim = d.state().claim_of("b1");
  ASSERT_TRUE(claim);
  EXPECT_EQ(claim->kind, state::Claim::Kind::kPlaced) << "standalone: the placement is in memory at once";
  EXPECT_EQ(claim->node, "n1");

  d.stop();
  EXPECT_FALSE(httplib::Client("127.0.0.1", d.port()).Get("/healthz")) << "the listener is closed";
}

TEST(DaemonBuilder, FailuresToBuildAreValuesNamingTheCause) {
  auto missing = Daemon::create(standalone_config("standalone:\n  inventory: /nonexistent/inventory.yaml\n"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("inventory"), std::string::npos) << missing.message();

  auto first = Daemon::create(standalone_config());
  ASSERT_TRUE(first) << first.message();
  config::Config taken = standalone_config();
  taken.server.listen = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = Daemon::create(taken);
  EXPECT_FALSE(second) << "the port is taken";
}

TEST(DaemonBuilder, SimulatorConfigCarriesTheEngineOptionsOfTheFile) {
  auto defaults = simulator_config("");
  ASSERT_TRUE(defaults) << defaults.message();
  const config::Config cfg = standalone_config();
  EXPECT_EQ(defaults->engine.demand.gpu_resources, std::vector<std::string>{cfg.gpu.resources.front().name});
  EXPECT_EQ(defaults->engine.scoring.packing, cfg.scoring.packing);
  EXPECT_EQ(defaults->gpu_resources.size(), cfg.gpu.resources.size());
  EXPECT_FALSE(simulator_config("/nonexistent/config.yaml"));
}

}  // namespace
}  // namespace extender::daemon
