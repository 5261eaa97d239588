#include "extender/policy/capacity_accounting.h"

#include <gtest/gtest.h>

namespace extender::policy {
namespace {

using std::chrono::seconds;
constexpr std::int64_t kGi = std::int64_t{1} << 30;

// Times are seconds from an origin; -1 is "not observed".
struct Row {
  const char* what;
  std::int64_t published_gi;
  int changed_at;  // last observed change of the figure
  std::vector<std::pair<std::int64_t, int>> claims;  // size in Gi, volume seen at
  int now;
  std::int64_t want_subtracted_gi;
  std::int64_t want_reflected_gi;
  int want_next_change;  // -1: none
};

TimePoint at(int s) { return TimePoint{} + seconds(1000 + s); }

TEST(CapacityAccounting, Table) {
  const CapacityRule rule{std::chrono::milliseconds(120'000)};
  const Row rows[] = {
      {"nothing placed: free is the published figure", 100, 0, {}, 10, 0, 0, -1},
      {"claims without a volume are subtracted, however the figure moves", 100, 50, {{40, -1}, {40, -1}}, 60, 80, 0, -1},
      {"a figure changed before the volume appeared does not reflect it", 60, 5, {{40, 10}}, 20, 40, 0, 130},
      {"a change observed at the same instant is not strictly after", 60, 10, {{40, 10}}, 20, 40, 0, 130},
      {"a change observed strictly after the volume reflects it", 60, 11, {{40, 10}}, 20, 0, 40, -1},
      {"a figure only listed (restart) reflects nothing", 60, -1, {{40, 0}}, 1, 40, 0, 120},
      {"settled: a poll after the volume would have changed the figure", 60, -1, {{40, 0}}, 120, 0, 40, -1},
      {"one reflected, one not yet, one without a volume", 100, 30, {{10, 20}, {20, 40}, {5, -1}}, 50, 25, 10, 160},
      {"republished before provisioning finished: still subtracted", 90, 12, {{10, 15}}, 16, 10, 0, 135},
      {"the earliest settling claim gives the next change", 100, 0, {{10, 30}, {10, 20}}, 40, 20, 0, 140},
  };
  for (const Row& r : rows) {
    PublishedCapacity published{r.published_gi * kGi, r.changed_at < 0 ? std::nullopt : std::optional(at(r.changed_at))};
    std::vector<CapacityClaim> claims;
    for (const auto& [gi, seen] : r.claims) {
      claims.push_back({"ns/c", gi * kGi, seen < 0 ? std::nullopt : std::optional(at(seen))});
    }
    const CapacityAccount a = account(published, claims, at(r.now), rule);
    EXPECT_EQ(a.published, r.published_gi * kGi) << r.what;
    EXPECT_EQ(a.subtracted, r.want_subtracted_gi * kGi) << r.what;
    EXPECT_EQ(a.reflected, r.want_reflected_gi * kGi) << r.what;
    EXPECT_EQ(a.free, (r.published_gi - r.want_subtracted_gi) * kGi) << r.what;
    EXPECT_EQ(a.next_change, r.want_next_change < 0 ? std::nullopt : std::optional(at(r.want_next_change))) << r.what;
  }
}

// A claim is subtracted exactly once over its life: before its volume, until a change after it,
// and never again after (a republish, or more time, does not bring it back).
TEST(CapacityAccounting, OnceReflectedStaysReflected) {
  const CapacityRule rule;
  CapacityClaim claim{"ns/c", 40 * kGi, std::nullopt};
  PublishedCapacity published{100 * kGi, at(0)};
  EXPECT_EQ(account(published, {claim}, at(1), rule).free, 60 * kGi);
  claim.volume_seen = at(5);
  EXPECT_EQ(account(published, {claim}, at(6), rule).free, 60 * kGi);
  published = {60 * kGi, at(8)};
  EXPECT_EQ(account(published, {claim}, at(9), rule).free, 60 * kGi);
  published = {70 * kGi, at(300)};
  EXPECT_EQ(account(published, {claim}, at(301), rule).free, 70 * kGi);
}

TEST(CapacityAccounting, TopologySelects) {
  using Req = model::NodeSelectorRequirement;
  const model::StringMap node_a{{"topology.topolvm.io/node", "a"}, {"zone", "z1"}};
  EXPECT_FALSE(topology_selects(std::nullopt, node_a)) << "no topology: no node";
  EXPECT_TRUE(topology_selects(std::vector<Req>{}, node_a)) << "empty topology: every node";
  EXPECT_TRUE(topology_selects(std::vector<Req>{{"topology.topolvm.io/node", "In", {"a"}}}, node_a));
  EXPECT_FALSE(topology_selects(std::vector<Req>{{"topology.topolvm.io/node", "In", {"b"}}}, node_a));
  EXPECT_FALSE(topology_selects(std::vector<Req>{{"topology.topolvm.io/node", "In", {"a"}}, {"zone", "NotIn", {"z1"}}},
                                node_a));
  EXPECT_TRUE(topology_selects(std::vector<Req>{{"zone", "Exists", {}}}, node_a));
}

}  // namespace
}  // namespace extender::policy
