#include "extender/sim/scheduler_model.h"

#include <gtest/gtest.h>

#include <set>

namespace extender::sim {
namespace {

model::NodeSupply node(std::string name, std::int64_t cpu_milli, std::int64_t memory_bytes, bool unschedulable = false) {
  model::NodeSupply n;
  n.name = std::move(name);
  n.cpu_milli = cpu_milli;
  n.memory_bytes = memory_bytes;
  n.unschedulable = unschedulable;
  return n;
}

TEST(SchedulerModel, FitsCpuAndMemoryLeftByEarlierPlacements) {
  SchedulerModel m({node("a", 4000, 100), node("b", 8000, 50), node("c", 0, 0), node("d", 64000, 1000, true)}, 1);
  struct Case {
    const char* what;
    std::int64_t cpu, memory;
    std::vector<std::string> fitting;
  };
  const std::vector<Case> before = {
      {"small: every schedulable node", 1000, 10, {"a", "b", "c"}},
      {"more CPU than a has", 6000, 10, {"b", "c"}},
      {"more memory than b has", 1000, 80, {"a", "c"}},
      {"a node that gives no CPU or memory never runs out", 1'000'000, 1'000'000, {"c"}},
  };
  for (const auto& c : before) EXPECT_EQ(m.fitting(c.cpu, c.memory), c.fitting) << c.what;
  m.place("a", 3500, 0);
  EXPECT_EQ(m.fitting(1000, 10), (std::vector<std::string>{"b", "c"})) << "a has 500m left";
}

TEST(SchedulerModel, ChoosesTheHighestTotalAtRandomAmongTies) {
  const std::vector<model::NodeSupply> nodes = {node("a", 0, 0)};
  struct Case {
    const char* what;
    std::vector<std::int64_t> scores;
    std::set<std::size_t> possible;
  };
  const std::vector<Case> cases = {
      {"a single best", {3, 10, 9}, {1}},
      {"ties: any of the best", {10, 4, 10, 10}, {0, 2, 3}},
      {"no scores from the extender: any", {0, 0, 0}, {0, 1, 2}},
  };
  for (const auto& c : cases) {
    SchedulerModel m(nodes, 7);
    std::set<std::size_t> seen;
    for (int i = 0; i < 200; ++i) seen.insert(*m.choose(c.scores, 1));
    EXPECT_EQ(seen, c.possible) << c.what;
  }
  SchedulerModel m(nodes, 7);
  EXPECT_FALSE(m.choose({}, 1));
  SchedulerModel again(nodes, 7), other(nodes, 7);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(again.choose({5, 5, 5, 5}, 1), other.choose({5, 5, 5, 5}, 1)) << "seeded";
}

}  // namespace
}  // namespace extender::sim
