#include "extender/server/status_page.h"

#include <gtest/gtest.h>

#include "extender/server/cluster_view.h"
#include "extender/server/html_text.h"
#include "extender/server/pending_view.h"
#include "support/status_fixture.h"

namespace extender::server {
namespace {

using testing::kGiB;
using testing::kHostileNode;

struct Page {
  state::ClusterState st;
  DecisionLog log;
  TimePoint now = SteadyClock::now();
  Page() {
    testing::fill_status_fixture(st, now);
    testing::refuse_fixture_pod(log, now);
  }
  std::string render(std::string_view query = {}) {
    const state::Snapshot snap = st.snapshot();
    StatusInputs in;
    in.snapshot = &snap;
    in.refused = log.refused_pods();
    in.decisions = log.decisions();
    in.mix = {{{1, 0, 0}, 4}, {{2, 0, 0}, 1}, {{0, 10 * kGiB, 0}, 2}};
    in.now = now;
    return render_status_page(in, parse_page_query(query));
  }
};

std::size_t occurrences(const std::string& s, std::string_view needle) {
  std::size_t n = 0;
  for (auto p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

TEST(StatusPage, ShowsEveryNodeItsGpuCellsHoldersAndPools) {
  Page p;
  const std::string html = p.render();
  for (const char* node : {"gpu-a100-1", "gpu-a100-2", "gpu-h100-1", "cpu-1"}) {
    EXPECT_NE(html.find("<td class=\"node\">" + std::string(node)), std::string::npos) << node;
  }
  // 8 + 8 + 4 + 1 devices, one SVG cell each (shared cells add a fill bar).
  EXPECT_EQ(occurrences(html, "<title>nvidia.com/gpu "), 21u);
  EXPECT_NE(html.find("nvidia.com/gpu 2 (40 GiB)\nml/infer-a: 10 GiB\nml/infer-b: 20 GiB"), std::string::npos);
  EXPECT_NE(html.find("2: ml/infer-a 10 GiB"), std::string::npos);
  EXPECT_NE(html.find("0: ml/trainer-0"), std::string::npos);
  EXPECT_NE(html.find("local: 1948 GiB free of 2048 GiB, 100 GiB in flight (hand-written)"), std::string::npos) << html;
  EXPECT_NE(html.find("nvme: 900 GiB free of 900 GiB, published 900 GiB (CSIStorageCapacity storage/nvme-h100-1)"),
            std::string::npos);
  // gpu-a100-1: devices 0, 1 whole, 2 shared, 5 free.
  EXPECT_NE(html.find("gpu-a100-1</td><td><svg"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">2 / 1 / 5</td>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(StatusPage, EscapesEveryHostileName) {
  Page p;
  const std::string html = p.render();
  EXPECT_EQ(html.find(kHostileNode), std::string::npos);
  EXPECT_EQ(html.find("<b>pool"), std::string::npos);
  EXPECT_EQ(html.find("ml/<big>"), std::string::npos);
  EXPECT_NE(html.find(server::html(kHostileNode)), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;pool&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(html.find("ml/&lt;big&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(StatusPage, SummarisesAlikeNodesAndPlacementQuality) {
  Page p;
  const state::Snapshot snap = p.st.snapshot();
  const ClusterSummary s = summarise(snap, nullptr, {{{1, 0, 0}, 1}}, p.now);
  ASSERT_FALSE(s.groups.empty());
  EXPECT_EQ(s.groups.front().nodes, 2u);  // the two A100 nodes
  EXPECT_EQ(s.groups.front().shape, "8 nvidia.com/gpu of 40 GiB, pool local 2048 GiB");
  EXPECT_EQ(s.quality.gpus_total, 21);
  // Whole: 2 + 4; shared: 30 of 40 GiB of one device.
  EXPECT_NEAR(s.quality.allocated_share, 6.75 / 21.0, 1e-9);
  // One GPU a task: only the shared device's 10 GiB free is fragmented, of 14.25 GPUs free.
  EXPECT_NEAR(s.quality.fragmented_share, 0.25 / 14.25, 1e-9);
  const std::string html = p.render();
  EXPECT_NE(html.find("8 nvidia.com/gpu of 40 GiB, pool local 2048 GiB"), std::string::npos);
  EXPECT_NE(html.find("7 (32.1%)"), std::string::npos);
}

TEST(StatusPage, RefusedPodsAndWhyOnePodWaits) {
  Page p;
  const std::string list = p.render();
  EXPECT_NE(list.find("<a href=\"/ui?pod=ml/trainer-1\">ml/trainer-1</a>"), std::string::npos);
  EXPECT_NE(list.find("2 / 5"), std::string::npos);
  const std::string why = p.render("pod=ml%2Ftrainer-1");
  EXPECT_NE(why.find("Why ml/trainer-1 waits"), std::string::npos);
  EXPECT_NE(why.find("Demand: 4 nvidia.com/gpu."), std::string::npos);
  EXPECT_NE(why.find("4 more free nvidia.com/gpu on one node (0 of 4 free)"), std::string::npos);
  EXPECT_NE(why.find("a node with 4 nvidia.com/gpu (these have none)"), std::string::npos);
  EXPECT_NE(why.find("a node with 4 nvidia.com/gpu (these have 1)"), std::string::npos);
  EXPECT_NE(why.find("(preemption cannot help)"), std::string::npos);
  EXPECT_NE(list.find("<tr><td>data/etl-0</td><td>gpu-a100-2</td>"), std::string::npos);  // a bind in flight
  const std::string unknown = p.render("pod=ml/nobody");
  EXPECT_NE(unknown.find("has refused this pod nothing recently"), std::string::npos);
}

TEST(StatusPage, PagesNodesInNameOrder) {
  state::ClusterState st;
  std::vector<model::NodeSupply> nodes;
  for (int i = 0; i < 250; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "n%03d", i);
    nodes.push_back(testing::gpu_node(name, 1, 0));
  }
  st.upsert_nodes(nodes);
  const state::Snapshot snap = st.snapshot();
  StatusInputs in;
  in.snapshot = &snap;
  in.now = SteadyClock::now();
  const std::string first = render_status_page(in, parse_page_query(""));
  EXPECT_NE(first.find(">n000<"), std::string::npos);
  EXPECT_NE(first.find(">n099<"), std::string::npos);
  EXPECT_EQ(first.find(">n100<"), std::string::npos);
  EXPECT_NE(first.find("Page 1 of 3"), std::string::npos);
  const std::string third = render_status_page(in, parse_page_query("page=3"));
  EXPECT_NE(third.find(">n249<"), std::string::npos);
  EXPECT_EQ(third.find(">n199<"), std::string::npos);
  const std::string past = render_status_page(in, parse_page_query("page=99&junk"));
  EXPECT_NE(past.find("Page 3 of 3"), std::string::npos);
}

TEST(HtmlText, EscapesMarkupQuotesAndInvalidUtf8) {
  EXPECT_EQ(html("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(html("ok\xff\x01é"), "ok\xEF\xBF\xBD\xEF\xBF\xBDé");
  EXPECT_EQ(url_component("ml/a b&c"), "ml/a%20b%26c");
  EXPECT_EQ(url_decode("ml%2Fa+b%zz"), "ml/a b%zz");
}

TEST(DecisionLog, KeepsTheLastRefusalPerPodBoundedAndForgetsOnBind) {
  DecisionLog log(3, 2);
  const TimePoint now = SteadyClock::now();
  wire::FilterResult refused;
  refused.failed.add("n1", "full");
  for (const char* name : {"a", "b", "c"}) log.add_filter("ns", name, "u", std::nullopt, 1, refused, now);
  EXPECT_FALSE(log.refused_pod("ns/a"));  // least recently refused, past the two kept
  ASSERT_TRUE(log.refused_pod("ns/c"));
  EXPECT_EQ(log.refused_pod("ns/c")->reasons.at(0).reason, "full");
  log.add_filter("ns", "b", "u", std::nullopt, 1, wire::FilterResult{}, now);  // now passes everywhere
  EXPECT_FALSE(log.refused_pod("ns/b"));
  log.forget_pod("ns/c");
  EXPECT_TRUE(log.refused_pods().empty());
  for (int i = 0; i < 5; ++i) log.add_decision({now, "filter", "ns/p" + std::to_string(i), 1, 1, "ok", ""});
  ASSERT_EQ(log.decisions().size(), 3u);
  EXPECT_EQ(log.decisions().front().pod, "ns/p4");
  wire::FilterResult many;
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i) names.push_back("node-" + std::to_string(i));
  for (int i = 0; i < 40; ++i)
    many.failed.add(names[static_cast<std::size_t>(i)], "reason " + std::to_string(i % 20) + std::string(1000, 'x'));
  log.add_filter("ns", "many", "u", std::nullopt, 40, many, now);
  const auto r = log.refused_pod("ns/many");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->reasons.size(), DecisionLog::kMaxReasons);
  EXPECT_EQ(r->other_nodes, 8u);
  EXPECT_EQ(r->reasons.front().reason.size(), DecisionLog::kMaxText);
  EXPECT_EQ(r->reasons.front().sample.size(), 2u);
}

}  // namespace
}  // namespace extender::server
