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
  int changed_at;                                    // last observed change of the figure
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
      {"claims without a volume are subtracted, however the figure moves (until they expire)",
       100,
       50,
       {{40, -1}, {40, -1}},
       60,
       80,
       0,
       600},
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
    PublishedCapacity published{r.published_gi * kGi,
                                r.changed_at < 0 ? std::nullopt : std::optional(at(r.changed_at))};
    std::vector<CapacityClaim> claims;
    for (const auto& [gi, seen] : r.claims) {
      claims.push_back({"ns/c", gi * kGi, seen < 0 ? std::nullopt : std::optional(at(seen)), at(0)});
    }
    const CapacityAccount a = account(published, claims, at(r.now), rule);
    EXPECT_EQ(a.published, r.published_gi * kGi) << r.what;
    EXPECT_EQ(a.subtracted, r.want_subtracted_gi * kGi) << r.what;
    EXPECT_EQ(a.reflected, r.want_reflected_gi * kGi) << r.what;
    EXPECT_EQ(a.free, (r.published_gi - r.want_subtracted_gi) * kGi) << r.what;
    EXPECT_EQ(a.next_change, r.want_next_change < 0 ? std::nullopt : std::optional(at(r.want_next_change))) << r.what;
  }
}

// Claims selected for the node without a volume (volume.kubernetes.io/selected-node, which any user
// of the namespace can write) count only while they could be provisioning: no larger than the pool
// could provision as one volume, and for `selected_hold` after they were seen selected.
struct SelectedRow {
  const char* what;
  std::int64_t published_gi;
  std::int64_t max_volume_gi;  // 0: none published
  int changed_at;              // -1: only listed
  struct Claim {
    std::int64_t gi;
    int volume_seen;  // -1: no volume
    int selected;
  };
  std::vector<Claim> claims;
  int now;
  std::int64_t want_subtracted_gi;
  std::int64_t want_ignored_gi;
  std::vector<std::size_t> want_ignored_claims;
  int want_next_change;  // -1: none
};

TEST(CapacityAccounting, SelectedClaimsWithoutAVolume) {
  const CapacityRule rule{std::chrono::milliseconds(120'000), std::chrono::milliseconds(600'000)};
  const SelectedRow rows[] = {
      {"larger than the pool could provision: ignored", 100, 0, -1, {{1024, -1, 0}}, 10, 0, 1024, {0}, -1},
      {"as large as the pool: counted until it expires", 100, 0, -1, {{100, -1, 0}}, 10, 100, 0, {}, 600},
      {"hand-set 1Ti claims beside a scheduler's 20Gi: the 20Gi alone counts",
       100,
       0,
       -1,
       {{1024, -1, 0}, {20, -1, 5}, {1024, -1, 0}},
       10,
       20,
       2048,
       {0, 2},
       605},
      {"the figure plus the claims it reflects is what the pool could provision",
       60,
       0,
       20,
       {{40, 10, 0}, {90, -1, 0}},
       30,
       90,
       0,
       {},
       600},
      {"maximumVolumeSize bounds one volume", 100, 50, -1, {{60, -1, 0}, {40, -1, 0}}, 10, 40, 60, {0}, 600},
      {"selected just under the hold ago: counted", 100, 0, -1, {{40, -1, 0}}, 599, 40, 0, {}, 600},
      {"selected the hold ago and still without a volume: ignored", 100, 0, -1, {{40, -1, 0}}, 600, 0, 40, {0}, -1},
      {"a volume that appears after the hold counts until reflected", 100, 0, -1, {{40, 700, 0}}, 701, 40, 0, {}, 820},
      {"a claim with a volume counts whatever its size: the volume exists", 10, 0, -1, {{40, 5, 0}}, 6, 40, 0, {}, 125},
  };
  for (const SelectedRow& r : rows) {
    PublishedCapacity published{r.published_gi * kGi, r.changed_at < 0 ? std::nullopt : std::optional(at(r.changed_at)),
                                r.max_volume_gi * kGi};
    std::vector<CapacityClaim> claims;
    for (const auto& c : r.claims) {
      claims.push_back(
          {"ns/c", c.gi * kGi, c.volume_seen < 0 ? std::nullopt : std::optional(at(c.volume_seen)), at(c.selected)});
    }
    const CapacityAccount a = account(published, claims, at(r.now), rule);
    EXPECT_EQ(a.subtracted, r.want_subtracted_gi * kGi) << r.what;
    EXPECT_EQ(a.ignored, r.want_ignored_gi * kGi) << r.what;
    EXPECT_EQ(a.ignored_claims, r.want_ignored_claims) << r.what;
    EXPECT_EQ(a.free, (r.published_gi - r.want_subtracted_gi) * kGi) << r.what;
    EXPECT_EQ(a.next_change, r.want_next_change < 0 ? std::nullopt : std::optional(at(r.want_next_change))) << r.what;
  }
}

TEST(CapacityAccounting, HandWrittenPoolsBoundAndExpireClaimsWithoutAVolume) {
  const CapacityRule rule{std::chrono::milliseconds(120'000), std::chrono::milliseconds(600'000)};
  struct HandRow {
    const char* what;
    std::int64_t largest_gi;
    std::vector<std::pair<std::int64_t, int>> claims;  // size in Gi, volume seen at (-1: none); selected at 0
    int now;
    std::int64_t want_subtracted_gi;
    std::int64_t want_ignored_gi;
    std::vector<std::size_t> want_ignored_claims;
    int want_next_change;  // -1: none
  };
  const HandRow rows[] = {
      {"within the largest volume: counted until it expires", 100, {{100, -1}}, 10, 100, 0, {}, 600},
      {"larger than the largest volume: ignored", 100, {{1024, -1}, {20, -1}}, 10, 20, 1024, {0}, 600},
      {"the timeout passed without a volume: ignored", 100, {{40, -1}}, 600, 0, 40, {0}, -1},
      {"a claim with a volume counts whatever its size and age, with no change to wait for",
       10,
       {{40, 5}},
       9000,
       40,
       0,
       {},
       -1},
  };
  for (const HandRow& r : rows) {
    std::vector<CapacityClaim> claims;
    for (const auto& [gi, seen] : r.claims) {
      claims.push_back({"ns/c", gi * kGi, seen < 0 ? std::nullopt : std::optional(at(seen)), at(0)});
    }
    const CapacityAccount a = account_hand_written(r.largest_gi * kGi, claims, at(r.now), rule);
    EXPECT_EQ(a.subtracted, r.want_subtracted_gi * kGi) << r.what;
    EXPECT_EQ(a.ignored, r.want_ignored_gi * kGi) << r.what;
    EXPECT_EQ(a.ignored_claims, r.want_ignored_claims) << r.what;
    EXPECT_EQ(a.next_change, r.want_next_change < 0 ? std::nullopt : std::optional(at(r.want_next_change))) << r.what;
  }
}

// A claim is subtracted exactly once over its life: before its volume, until a change after it,
// and never again after (a republish, or more time, does not bring it back).
TEST(CapacityAccounting, OnceReflectedStaysReflected) {
  const CapacityRule rule;
  CapacityClaim claim{"ns/c", 40 * kGi, std::nullopt, at(0)};
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
  EXPECT_FALSE(
      topology_selects(std::vector<Req>{{"topology.topolvm.io/node", "In", {"a"}}, {"zone", "NotIn", {"z1"}}}, node_a));
  EXPECT_TRUE(topology_selects(std::vector<Req>{{"zone", "Exists", {}}}, node_a));
}

}  // namespace
}  // namespace extender::policy
