#include "extender/state/node_index.h"

#include <gtest/gtest.h>

#include "extender/state/cluster_state.h"

namespace extender::state {
namespace {

std::shared_ptr<const NodeMap> map_of(const std::vector<std::string>& names) {
  auto m = std::make_shared<NodeMap>();
  for (const auto& n : names) {
    auto entry = std::make_shared<NodeState>();
    entry->supply.name = n;
    (*m)[n] = std::move(entry);
  }
  return m;
}

TEST(NodeIndex, FindsWhatTheMapFinds) {
  std::vector<std::string> names;
  for (int i = 0; i < 5000; ++i) names.push_back("gke-prod-gpu-a100-pool-" + std::to_string(i));
  names.push_back("");
  const auto m = map_of(names);
  const NodeIndex index(m);
  EXPECT_EQ(&index.nodes(), m.get());
  for (const auto& n : names) {
    const NodeState* found = index.find(n);
    ASSERT_NE(found, nullptr) << n;
    EXPECT_EQ(found, m->find(n)->second.get());
    EXPECT_EQ(found->supply.name, n);
  }
  for (const char* absent : {"gke-prod-gpu-a100-pool-5000", "gke-prod-gpu-a100-pool-", "gke-prod-gpu-a100-pool-12 ",
                             "GKE-prod-gpu-a100-pool-1"}) {
    EXPECT_EQ(index.find(absent), nullptr) << absent;
  }
  EXPECT_EQ(index.find(std::string_view("gke-prod-gpu-a100-pool-7\0", 25)), nullptr) << "lengths count, not C strings";
}

TEST(NodeIndex, EmptyMapFindsNothing) {
  const NodeIndex index(map_of({}));
  EXPECT_EQ(index.find(""), nullptr);
  EXPECT_EQ(index.find("a"), nullptr);
}

TEST(NodeIndex, SnapshotsFindThroughTheirOwnIndex) {
  ClusterState s;
  model::NodeSupply a;
  a.name = "a";
  s.upsert_nodes({a});
  const Snapshot before = s.snapshot();
  s.remove_node("a");
  model::NodeSupply b;
  b.name = "b";
  s.upsert_nodes({b});
  EXPECT_NE(before.find("a"), nullptr);
  EXPECT_EQ(before.find("b"), nullptr);
  const Snapshot after = s.snapshot();
  EXPECT_EQ(after.find("a"), nullptr);
  ASSERT_NE(after.find("b"), nullptr);
  EXPECT_EQ(after.find("b")->supply.name, "b");
  EXPECT_EQ(Snapshot().find("a"), nullptr);
}

}  // namespace
}  // namespace extender::state
