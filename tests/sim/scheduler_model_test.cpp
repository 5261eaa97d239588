#include "extender/sim/scheduler_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace extender::sim {
namespace {

constexpr std::int64_t kGi = std::int64_t{1} << 30;

model::NodeSupply node(std::string name, std::int64_t cpu_milli, std::int64_t memory_bytes,
                       bool unschedulable = false) {
  model::NodeSupply n;
  n.name = std::move(name);
  n.cpu_milli = cpu_milli;
  n.memory_bytes = memory_bytes;
  n.unschedulable = unschedulable;
  return n;
}

std::vector<model::NodeSupply> numbered(std::size_t count, std::int64_t cpu_milli, std::int64_t memory_bytes) {
  std::vector<model::NodeSupply> nodes;
  for (std::size_t i = 0; i < count; ++i) nodes.push_back(node("n" + std::to_string(i), cpu_milli, memory_bytes));
  return nodes;
}

TEST(SchedulerModel, FitsCpuAndMemoryLeftByEarlierPlacements) {
  SchedulerModel m({node("a", 4000, 100), node("b", 8000, 50), node("c", 0, 0), node("d", 64000, 1000, true)}, 1);
  struct Case {
    const char* what;
    std::int64_t cpu, memory;
    std::vector<std::string> feasible;
  };
  const std::vector<Case> before = {
      {"small: every schedulable node", 1000, 10, {"a", "b", "c"}},
      {"more CPU than a has", 6000, 10, {"b", "c"}},
      {"more memory than b has", 1000, 80, {"a", "c"}},
      {"a node that gives no CPU or memory never runs out", 1'000'000, 1'000'000, {"c"}},
  };
  for (const auto& c : before) EXPECT_EQ(m.feasible(c.cpu, c.memory), c.feasible) << c.what;
  m.place("a", 3500, 0);
  EXPECT_EQ(m.feasible(1000, 10), (std::vector<std::string>{"b", "c"})) << "a has 500m left";
}

TEST(SchedulerModel, DraNodesAdmitWholeGpuPodsOnlyWhileEnoughDevicesAreFree) {
  SchedulerModel m({node("dp", 0, 0), node("dra4", 0, 0), node("dra2", 0, 0)}, 1);
  m.set_dra_gpus(1, 4);
  m.set_dra_gpus(2, 2);
  struct Step {
    const char* what;
    std::int64_t asks;
    std::vector<std::string> feasible;
    const char* place_on;  // nullptr: nothing placed
  };
  const Step steps[] = {
      {"every node for 2 GPUs", 2, {"dp", "dra4", "dra2"}, "dra2"},
      {"dra2's devices are all allocated", 1, {"dp", "dra4"}, "dra4"},
      {"3 of dra4's 4 are still free", 3, {"dp", "dra4"}, "dra4"},
      {"dra4 has none left", 1, {"dp"}, nullptr},
      {"a pod asking no GPU fits every node", 0, {"dp", "dra4", "dra2"}, nullptr},
  };
  for (const auto& s : steps) {
    auto got = m.feasible(0, 0, s.asks);
    std::sort(got.begin(), got.end());
    auto want = s.feasible;
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want) << s.what;
    if (s.place_on) m.place(s.place_on, 0, 0, s.asks);
  }
}

TEST(SchedulerModel, FeasibleNodesToFindFollowsPercentageOfNodesToScore) {
  struct Case {
    std::int64_t percentage, nodes, expected;
  };
  const std::vector<Case> cases = {
      {0, 50, 50},                                         // below 100 nodes: all of them
      {0, 99, 99},       {0, 100, 100},                    // 50 - 0 = 50% of 100 is 50: at least 100
      {0, 1213, 497},                                      // 50 - 9 = 41%
      {0, 5000, 500},                                      // 50 - 40 = 10%
      {0, 6000, 300},                                      // 50 - 48 = 2%: at least 5%
      {100, 1213, 1213}, {30, 1213, 363}, {5, 1213, 100},  // 60: at least 100
  };
  for (const auto& c : cases) {
    EXPECT_EQ(feasible_nodes_to_find(c.percentage, c.nodes), c.expected) << c.percentage << "% of " << c.nodes;
  }
}

TEST(SchedulerModel, SearchStopsAtEnoughFeasibleNodesAndTheNextStartsWhereItStopped) {
  SchedulerModel m(numbered(200, 4000, 16 * kGi), 1, {1, 50});
  m.place("n1", 4000, 0);  // n1 is full
  const auto first = m.feasible(1000, kGi);
  ASSERT_EQ(first.size(), 100u);
  EXPECT_EQ(first.front(), "n0");
  EXPECT_EQ(first[1], "n2") << "the full node is passed over";
  EXPECT_EQ(first.back(), "n100");
  EXPECT_EQ(m.last_searched(), 101u);
  const auto second = m.feasible(1000, kGi);
  EXPECT_EQ(second.front(), "n101");
  EXPECT_EQ(second.back(), "n0") << "wraps around";
  const auto huge = m.feasible(64000, kGi);
  EXPECT_TRUE(huge.empty());
  EXPECT_EQ(m.last_searched(), 200u) << "a search that finds too few looks at every node";
}

TEST(SchedulerModel, DefaultPluginScoresAreKubeSchedulersIntegerFormulas) {
  struct Case {
    const char* what;
    std::int64_t cpu_req, cpu_alloc, mem_req, mem_alloc;
    std::int64_t least, balanced;
  };
  const std::vector<Case> cases = {
      {"empty", 0, 4000, 0, 8 * kGi, 100, 100},
      {"a quarter of CPU, half of memory", 1000, 4000, 4 * kGi, 8 * kGi, 62, 87},  // (75+50)/2; 1-0.25/2
      {"integer division per resource", 1000, 3000, kGi, 3 * kGi, 66, 100},        // 66 each
      {"past allocatable scores 0 and counts as full", 5000, 4000, 0, 8 * kGi, 50, 50},
      {"a resource the node does not give is left out", 1000, 4000, kGi, 0, 75, 100},
      {"nothing given", 1000, 0, kGi, 0, 0, 100},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(least_allocated_score(c.cpu_req, c.cpu_alloc, c.mem_req, c.mem_alloc), c.least) << c.what;
    EXPECT_EQ(balanced_allocation_score(c.cpu_req, c.cpu_alloc, c.mem_req, c.mem_alloc), c.balanced) << c.what;
  }
}

// Three nodes of 8 cores and 8 GiB: a empty; b half its CPU and memory used; c half its CPU used
// only. A pod that asks nothing (counted 100m and 200 MiB by LeastAllocated, as the pod placed on
// c counts 200 MiB) gets plugin totals a 197 (97 + 100), b 147 (47 + 100), c 146 (71 + 75).
const std::vector<std::string> kAbc = {"a", "b", "c"};
SchedulerModel loaded_abc(std::uint64_t seed, SchedulerSettings settings = {}) {
  SchedulerModel m({node("a", 8000, 8 * kGi), node("b", 8000, 8 * kGi), node("c", 8000, 8 * kGi)}, seed, settings);
  m.place("b", 4000, 4 * kGi);
  m.place("c", 4000, 0);
  return m;
}

TEST(SchedulerModel, ChoosesTheHighestTotalOfPluginsAndWeightedExtenderScoresAtRandomAmongTies) {
  struct Case {
    const char* what;
    std::vector<std::int64_t> scores;
    std::int64_t weight;
    std::set<std::size_t> possible;
  };
  const std::vector<Case> cases = {
      {"no extender scores: the emptiest, balanced node", {}, 1, {0}},
      {"four extender steps (40 points at weight 1) do not outvote 50", {0, 4, 0}, 1, {0}},
      {"weight 10: one step is 100 points", {9, 10, 9}, 10, {1}},
      {"equal totals tie at random: a and b, c one point behind", {0, 5, 5}, 1, {0, 1}},
  };
  for (const auto& c : cases) {
    std::set<std::size_t> seen;
    for (int seed = 0; seed < 100; ++seed) seen.insert(*loaded_abc(seed, {c.weight, 100}).choose(kAbc, c.scores, 0, 0));
    EXPECT_EQ(seen, c.possible) << c.what;
  }
  SchedulerModel m = loaded_abc(7);
  EXPECT_FALSE(m.choose({}, {}, 0, 0));
  SchedulerModel again = loaded_abc(7), other = loaded_abc(7);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(again.choose(kAbc, {}, 100, 0), other.choose(kAbc, {}, 100, 0)) << "seeded";
}

TEST(SchedulerModel, ThePapersTieOrderIsAPermutationFixedBySeed) {
  const std::vector<std::size_t> order = paper_tie_order(50, 42);
  std::vector<std::size_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], i) << "each place once";
  EXPECT_EQ(paper_tie_order(50, 42), order) << "the same seed, the same order";
  EXPECT_NE(paper_tie_order(50, 43), order) << "another seed, another order";
  EXPECT_TRUE(paper_tie_order(0, 42).empty());
}

TEST(SchedulerModel, ThePapersSimulatorSearchesEveryNodeAndTheExtenderAloneDecidesTiesByTheSeedsOrder) {
  // loaded_abc: the plugins alone would choose a (197 points against b 147, c 146).
  SchedulerSettings paper{1, 0};
  paper.paper = true;
  struct Case {
    const char* what;
    std::vector<std::int64_t> scores;
    std::set<std::size_t> possible;  // over seeds
  };
  const std::vector<Case> cases = {
      {"one extender step outvotes the plugins' 50 points", {0, 1, 0}, {1}},
      {"a tie goes to b or c, by the seed's order", {0, 5, 5}, {1, 2}},
      {"no extender scores: all tie", {}, {0, 1, 2}},
  };
  for (const auto& c : cases) {
    std::set<std::size_t> seen;
    for (int seed = 0; seed < 20; ++seed) {
      SchedulerModel m = loaded_abc(seed, paper);
      const auto first = m.choose(kAbc, c.scores, 0, 0);
      for (int again = 0; again < 5; ++again) EXPECT_EQ(m.choose(kAbc, c.scores, 0, 0), first) << "a fixed order";
      const auto order = paper_tie_order(3, static_cast<std::uint64_t>(seed));
      if (c.possible.size() == 3) {
        EXPECT_EQ(order[*first], 0u) << "the first of the order: " << c.what;
      }
      seen.insert(*first);
    }
    EXPECT_EQ(seen, c.possible) << c.what;
  }
  paper.percentage_of_nodes_to_score = 1;
  SchedulerModel m(numbered(300, 8000, kGi), 3, paper);
  EXPECT_EQ(m.feasible(0, 0).size(), 300u) << "every feasible node, whatever percentageOfNodesToScore says";
  EXPECT_EQ(m.feasible(0, 0).front(), "n0") << "in the node list's order, from its start each time";
}

TEST(SchedulerModel, ByPositionSearchesChoosesAndPlacesAsByName) {
  std::vector<model::NodeSupply> nodes = numbered(150, 8000, 32 * kGi);
  for (std::size_t i = 0; i < nodes.size(); i += 3) nodes[i].cpu_milli = 4000;
  SchedulerModel by_name(nodes, 11, {10, 50}), by_position(nodes, 11, {10, 50});
  for (int pod = 0; pod < 60; ++pod) {
    const std::int64_t cpu = 500 + 250 * (pod % 7), memory = (1 + pod % 5) * kGi;
    const std::vector<std::string> names = by_name.feasible(cpu, memory);
    const std::vector<std::size_t> at = by_position.feasible_at(cpu, memory);
    ASSERT_EQ(names.size(), at.size()) << "pod " << pod;
    for (std::size_t k = 0; k < at.size(); ++k) ASSERT_EQ(by_position.name(at[k]), names[k]) << "pod " << pod;
    ASSERT_EQ(by_name.last_searched(), by_position.last_searched()) << "pod " << pod;
    std::vector<std::int64_t> scores;
    for (std::size_t k = 0; k < at.size(); ++k) scores.push_back(static_cast<std::int64_t>((k * 7 + pod) % 11) % 3);
    const auto a = by_name.choose(names, scores, cpu, memory);
    const auto b = by_position.choose_at(at, scores, cpu, memory);
    ASSERT_EQ(a, b) << "pod " << pod;
    if (!a) continue;
    by_name.place(names[*a], cpu, memory);
    by_position.place_at(at[*b], cpu, memory);
  }
  EXPECT_EQ(by_name.feasible(7000, kGi), by_position.feasible(7000, kGi));
}

}  // namespace
}  // namespace extender::sim
