#include "extender/inspect/inspect_tables.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "extender/server/debug_view.h"
#include "extender/server/pending_view.h"
#include "support/status_fixture.h"

namespace extender::inspect {
namespace {

// Compares with tests/fixtures/inspect/<name>; UPDATE_GOLDEN=1 rewrites the file instead.
void expect_golden(const std::string& name, const std::string& got) {
  const std::string path = std::string(EXTENDER_FIXTURES_DIR) + "/inspect/" + name;
  if (std::getenv("UPDATE_GOLDEN")) {
    std::ofstream(path) << got;
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing golden file " << path;
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(got, want.str()) << "golden " << name << " differs (UPDATE_GOLDEN=1 rewrites it)";
}

struct Fixture {
  state::ClusterState st;
  server::DecisionLog log;
  TimePoint now = SteadyClock::now();
  Fixture() {
    testing::fill_status_fixture(st, now);
    testing::refuse_fixture_pod(log, now);
  }
};

TEST(InspectTables, EveryNodeMatchesGolden) {
  Fixture f;
  auto text = nodes_table(server::render_state(f.st.snapshot(), f.now));
  ASSERT_TRUE(text) << text.message();
  expect_golden("nodes.txt", *text);
}

TEST(InspectTables, OneNodeMatchesGolden) {
  Fixture f;
  auto text = node_table(server::render_node(*f.st.snapshot().find("gpu-a100-1"), f.now));
  ASSERT_TRUE(text) << text.message();
  expect_golden("node-gpu-a100-1.txt", *text);
}

TEST(InspectTables, PoolsMatchGolden) {
  Fixture f;
  auto text = pools_table(server::render_state(f.st.snapshot(), f.now));
  ASSERT_TRUE(text) << text.message();
  expect_golden("pools.txt", *text);
}

TEST(InspectTables, WhyAPodWaitsMatchesGolden) {
  Fixture f;
  const auto refusal = f.log.refused_pod("ml/trainer-1");
  ASSERT_TRUE(refusal);
  auto text = pod_table(server::render_pending_json(server::pending_view(*refusal, f.st.snapshot(), f.now)));
  ASSERT_TRUE(text) << text.message();
  expect_golden("pod-ml-trainer-1.txt", *text);
}

TEST(InspectTables, RefusesAnswersThatAreNotTheEndpointsJson) {
  for (const char* body : {"", "not json", "[1,2]", "{\"nodes\":"}) {
    EXPECT_FALSE(nodes_table(body)) << body;
    EXPECT_FALSE(node_table(body)) << body;
    EXPECT_FALSE(pools_table(body)) << body;
    EXPECT_FALSE(pod_table(body)) << body;
  }
  auto odd = nodes_table(R"({"nodes":[1,{"name":"a\u0007b","gpus":[],"pools":{}},{"gpu_devices":{"devices":7}}]})");
  ASSERT_TRUE(odd);
  EXPECT_NE(odd->find("a?b"), std::string::npos);
}

}  // namespace
}  // namespace extender::inspect
