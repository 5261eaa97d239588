#include "extender/server/metrics.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "support/dra_slices.h"

namespace extender::server {
namespace {

using namespace std::chrono_literals;

model::NodeSupply node(const std::string& name, std::int64_t gpus) {
  model::NodeSupply n;
  n.name = name;
  n.gpus["nvidia.com/gpu"] = gpus;
  return n;
}

state::Claim gpu_claim(const std::string& node_name, std::int64_t gpus) {
  state::Claim c;
  c.owner = "ns/p";
  c.node = node_name;
  c.allocation.gpus["nvidia.com/gpu"] = gpus;
  return c;
}

bool has_line(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (l == line) return true;
  }
  return false;
}

std::size_t count_prefix(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::size_t n = 0;
  for (std::string l; std::getline(in, l);) n += l.rfind(prefix, 0) == 0;
  return n;
}

TEST(Metrics, EventCountersKeepTheirNamesAndEverySeriesExistsFromTheStart) {
  Metrics m;
  const std::string empty = m.render({});
  EXPECT_TRUE(has_line(empty, "# TYPE scheduler_extender_requests_total counter"));
  EXPECT_TRUE(has_line(empty, R"(scheduler_extender_requests_total{outcome="error",verb="preempt"} 0)"));
  EXPECT_TRUE(has_line(empty, R"(scheduler_extender_refusals_total{reason="other_scheduler",verb="bind"} 0)"));
  EXPECT_TRUE(has_line(empty, "scheduler_extender_reservation_expiries_total 0"));
  EXPECT_TRUE(has_line(empty, R"(scheduler_extender_overcommit_episodes_total{kind="gpu"} 0)"));

  m.observe_request(Verb::kFilter, Outcome::kOk, 3ms);
  m.observe_request(Verb::kFilter, Outcome::kOk, 30ms);
  m.observe_filter(5, 2, 1);
  m.observe_refusal(Verb::kBind, engine::Refusal::kOtherScheduler);
  m.observe_refusal(Verb::kPreempt, engine::Refusal::kBound);
  m.observe_expired_reservations(3);
  m.observe_overcommit({"a", state::Overcommit::Kind::kPool, "fast", 2, 1, 2});
  const std::string text = m.render({});
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_requests_total{outcome="ok",verb="filter"} 2)")) << text;
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_request_duration_seconds_count{verb="filter"} 2)"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_request_duration_seconds_bucket{verb="filter",le="0.005"} 1)"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_request_duration_seconds_bucket{verb="filter",le="+Inf"} 2)"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_filter_nodes_total{verdict="passed"} 5)"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_filter_nodes_total{verdict="unresolvable"} 1)"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_refusals_total{reason="other_scheduler",verb="bind"} 1)"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_refusals_total{reason="already_bound",verb="preempt"} 1)"));
  EXPECT_TRUE(has_line(text, "scheduler_extender_reservation_expiries_total 3"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_overcommit_episodes_total{kind="pool"} 1)"));
}

TEST(Metrics, APublishedPoolShowsItsFigureAndWhatIsSubtractedFromIt) {
  state::ClusterState s;
  model::NodeSupply a = node("a", 0);
  s.upsert_nodes({a});
  // Published 60, one 40 claim already reflected in it (size 100), a 30 claim not yet.
  s.set_derived_pools({{"a",
                        {model::Pool{"lvm", 100, {}, 0, "CSIStorageCapacity kube-system/c", 60},
                         model::Pool{"ssd", 100, {}, 0, "annotation capacity.topolvm.io/ssd", 100},
                         model::Pool{"disks", 100, {}, 0, "local PVs", 100}}}});
  for (const auto& [uid, bytes] : std::vector<std::pair<std::string, std::int64_t>>{{"v1", 40}, {"v2", 30}}) {
    state::Claim c;
    c.owner = "ml/" + uid;
    c.source = "volume";
    c.node = "a";
    c.allocation.volumes.push_back({uid, "lvm", "", bytes, "ml/" + uid, ""});
    s.place(uid, c);
  }
  Metrics m;
  state::Snapshot snap = s.snapshot();
  std::string text = m.render(ScrapeView{&snap, SteadyClock::now(), 0, {}, std::nullopt});
  EXPECT_TRUE(has_line(
      text, R"(scheduler_extender_node_pool_published_bytes{node="a",pool="lvm",source="CSIStorageCapacity"} 60)"))
      << text;
  EXPECT_TRUE(
      has_line(text, R"(scheduler_extender_node_pool_published_bytes{node="a",pool="ssd",source="annotation"} 100)"));
  EXPECT_TRUE(
      has_line(text, R"(scheduler_extender_node_pool_published_bytes{node="a",pool="disks",source="local PVs"} 100)"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_node_pool_subtracted_bytes{node="a",pool="lvm"} 30)"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_node_pool_free_bytes{node="a",pool="lvm"} 30)"));
}

TEST(Metrics, PerNodeSeriesFollowTheNodesTheDaemonKnows) {
  state::ClusterState s;
  model::NodeSupply a = node("a", 8);
  a.pools.push_back({"fast", 1000, {}});
  s.upsert_nodes({a, node("b", 4)});
  s.place("p1", gpu_claim("a", 3));
  const auto now = SteadyClock::now();
  s.reserve("p2", gpu_claim("a", 2), 30s, now);
  s.reserve("p3", gpu_claim("b", 1), 1s, now - 10s);  // expired, not yet swept

  Metrics m;
  state::Snapshot snap = s.snapshot();
  ScrapeView view{&snap, now, 7, {}, std::nullopt};
  std::string text = m.render(view);
  EXPECT_TRUE(has_line(text, "scheduler_extender_nodes 2")) << text;
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_claims{kind="placed"} 1)"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_claims{kind="reserved"} 2)"));
  EXPECT_TRUE(has_line(text, "scheduler_extender_reservations_in_flight 1"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_node_gpus_allocatable{node="a",resource="nvidia.com/gpu"} 8)"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_node_gpus_used{node="a",resource="nvidia.com/gpu"} 3)"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_node_gpus_reserved{node="a",resource="nvidia.com/gpu"} 2)"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_node_gpus_reserved{node="b",resource="nvidia.com/gpu"} 0)"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_node_pool_capacity_bytes{node="a",pool="fast"} 1000)"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_node_pool_used_bytes{node="a",pool="fast"} 0)"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_node_pool_free_bytes{node="a",pool="fast"} 1000)"));
  EXPECT_TRUE(has_line(text, "scheduler_extender_demand_cache_entries 7"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_overcommitted_nodes{kind="gpu"} 0)"));
  EXPECT_EQ(count_prefix(text, "scheduler_extender_watch_"), 0u) << "no watches outside Kubernetes mode";

  s.remove_node("b");
  s.place("p4", gpu_claim("a", 6));
  snap = s.snapshot();
  text = m.render(view);
  EXPECT_EQ(count_prefix(text, "scheduler_extender_node_gpus_allocatable{"), 1u) << "b's series are gone";
  EXPECT_EQ(text.find("node=\"b\""), std::string::npos);
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_overcommitted_nodes{kind="gpu"} 1)"));
}

TEST(Metrics, ANodeWithoutGpusHasTheSeriesOfEveryManagedResource) {
  state::ClusterState s;
  model::NodeSupply cpu;
  cpu.name = "cpu-1";
  s.upsert_nodes({cpu});
  state::Snapshot snap = s.snapshot();
  const std::string text =
      Metrics({"nvidia.com/gpu", "amd.com/gpu"}).render({&snap, SteadyClock::now(), std::nullopt, {}, std::nullopt});
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_node_gpus_allocatable{node="cpu-1",resource="amd.com/gpu"} 0)"))
      << text;
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_node_gpus_used{node="cpu-1",resource="nvidia.com/gpu"} 0)"));
}

TEST(Metrics, WatchStalenessPerResource) {
  const auto now = SteadyClock::now();
  ScrapeView view;
  view.now = now;
  view.watches = {{"nodes", true, std::nullopt, 1}, {"pods", true, now - 90s, 3}};
  Metrics m;
  const std::string text = m.render(view);
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_watch_stale_seconds{resource="nodes"} 0)")) << text;
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_watch_stale_seconds{resource="pods"} 90)"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_watch_synced{resource="pods"} 1)"));
  EXPECT_TRUE(has_line(text, R"(scheduler_extender_watch_lists_total{resource="pods"} 3)"));
}

TEST(Metrics, NodesWithDevicePluginAndDraGpusAreCountedWhileDraIsServed) {
  state::ClusterState st;
  model::NodeSupply both;
  both.name = "both";
  both.gpus["nvidia.com/gpu"] = 4;
  model::NodeSupply plugin = both;
  plugin.name = "plugin";
  st.upsert_nodes({both, plugin});
  const model::DraInventory dra = model::build_dra_inventory({testing::nvidia_gpu_slice("both", 1)}, {});
  const state::Snapshot snap = st.snapshot();
  ScrapeView view;
  view.snapshot = &snap;
  view.now = SteadyClock::now();
  Metrics m({"nvidia.com/gpu"});
  EXPECT_EQ(m.render(view).find("scheduler_extender_mixed_gpu_source_nodes"), std::string::npos) << "DRA not served";
  view.dra = &dra;
  const std::string text = m.render(view);
  EXPECT_TRUE(has_line(text, "scheduler_extender_mixed_gpu_source_nodes 1")) << text;
}

TEST(Metrics, LabelValuesAreEscaped) {
  state::ClusterState s;
  s.upsert_nodes({node("odd\"name\\\n", 1)});
  state::Snapshot snap = s.snapshot();
  Metrics m;
  const std::string text = m.render({&snap, SteadyClock::now(), std::nullopt, {}, std::nullopt});
  EXPECT_TRUE(
      has_line(text, R"(scheduler_extender_node_gpus_allocatable{node="odd\"name\\\n",resource="nvidia.com/gpu"} 1)"))
      << text;
}

TEST(Metrics, LeadershipIsExportedOnlyWithAnElection) {
  Metrics m;
  const auto now = SteadyClock::now();
  EXPECT_EQ(m.render({nullptr, now, std::nullopt, {}, std::nullopt}).find("scheduler_extender_leader"),
            std::string::npos)
      << "no election (standalone, ha.enabled false): no leadership series";
  LeadershipView standby{false, "ext-1_uid", "ext-0_uid", "2026-12-01T00:00:00.000000Z", 2, "ns/lease", ""};
  std::string text = m.render({nullptr, now, std::nullopt, {}, standby});
  EXPECT_TRUE(has_line(text, "scheduler_extender_leader 0")) << text;
  EXPECT_TRUE(has_line(text, "scheduler_extender_leader_transitions_total 2")) << text;
  LeadershipView leader = standby;
  leader.leading = true;
  leader.transitions = 3;
  text = m.render({nullptr, now, std::nullopt, {}, leader});
  EXPECT_TRUE(has_line(text, "scheduler_extender_leader 1")) << text;
  EXPECT_TRUE(has_line(text, "scheduler_extender_leader_transitions_total 3")) << text;
}

TEST(Metrics, TheChartsDashboardQueriesOnlyMetricsTheDaemonExports) {
  state::ClusterState s;
  model::NodeSupply a = node("a", 8);
  a.pools.push_back({"fast", 1000, {}});
  s.upsert_nodes({a});
  s.place("p1", gpu_claim("a", 1));
  const auto now = SteadyClock::now();
  s.reserve("p2", gpu_claim("a", 1), 30s, now);
  state::Snapshot snap = s.snapshot();
  ScrapeView view{&snap, now, 1, {{"nodes", true, std::nullopt, 1}}, LeadershipView{}};
  Metrics m({"nvidia.com/gpu"});
  m.observe_request(Verb::kFilter, Outcome::kOk, 1ms);
  std::set<std::string> exported;
  std::istringstream text(m.render(view));
  for (std::string line; std::getline(text, line);) {
    if (!line.empty() && line[0] != '#') exported.insert(line.substr(0, line.find_first_of("{ ")));
  }

  std::ifstream in(std::string(EXTENDER_SOURCE_DIR) + "/charts/scheduler-extender/dashboards/scheduler-extender.json");
  ASSERT_TRUE(in) << "the chart's dashboard is missing";
  const std::string dashboard((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::regex name(R"(scheduler_extender_[a-z0-9_]+)");
  std::set<std::string> used;
  for (auto it = std::sregex_iterator(dashboard.begin(), dashboard.end(), name); it != std::sregex_iterator(); ++it) {
    used.insert(it->str());
  }
  EXPECT_GE(used.size(), 15u) << "the dashboard plots requests, verdicts, GPUs, pools, reservations and errors";
  for (const auto& n : used)
    EXPECT_TRUE(exported.count(n)) << "the dashboard queries " << n << ", which the daemon does not export";
}

}  // namespace
}  // namespace extender::server
