#include "extender/state/node_index.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "extender/state/cluster_state.h"

namespace extender::state {
namespace {

std::shared_ptr<const NodeMap> map_of(const std::vector<std::string>& names) {
  auto m = std::make_shared<NodeMap>();
  for (const auto& n : names) {
    auto entry = std::make_shared<NodeState>();
    entry->supply.name = n;
    const std::string_view name = entry->supply.name;
    m->set(name, std::move(entry));
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

TEST(NodeIndex, KnowsWhetherEveryNameIsOfTheDnsAlphabet) {
  EXPECT_TRUE(NodeIndex(map_of({"gke-prod-gpu-a100-pool-1", "node.example.com", "10-0-0-1"})).names_dns_only());
  EXPECT_TRUE(NodeIndex(map_of({})).names_dns_only());
  for (const char* odd : {"Node-A", "a<b", "a\"b", "a_b", "n\xc3\xa9"}) {
    EXPECT_FALSE(NodeIndex(map_of({"node-a", odd})).names_dns_only()) << odd;
  }
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

TEST(NodeIndex, LookupsGiveTheNodesPlaceInNameOrder) {
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) names.push_back("gke-prod-gpu-a100-pool-" + std::to_string((i * 7919) % 1000));
  const auto m = map_of(names);
  const NodeIndex index(m);
  std::uint32_t order = 0;
  for (const auto& [name, node] : *m) {
    const NodeIndex::Found found = index.lookup(name);
    EXPECT_EQ(found.node, node.get()) << name;
    EXPECT_EQ(found.order, order++) << name;
    ASSERT_NE(found.summary, nullptr) << name;
  }
  // In batches, as filter looks names up: the same answers, absent names and repeats included.
  std::vector<std::string_view> asked;
  for (const auto& n : names) asked.push_back(n);
  for (int i = 0; i < 150; ++i) asked.push_back(i % 2 ? std::string_view(names[i]) : std::string_view("absent-node"));
  std::vector<NodeIndex::Found> batch(asked.size());
  index.lookup(asked, batch);
  for (std::size_t i = 0; i < asked.size(); ++i) {
    const NodeIndex::Found one = index.lookup(asked[i]);
    EXPECT_EQ(batch[i].node, one.node) << asked[i];
    EXPECT_EQ(batch[i].order, one.order) << asked[i];
    EXPECT_EQ(batch[i].summary, one.summary) << asked[i];
    EXPECT_EQ(batch[i].name, one.node ? asked[i] : std::string_view()) << "the index's copy of the name";
  }
  const NodeIndex::Found absent = index.lookup("gke-prod-gpu-a100-pool-x");
  EXPECT_EQ(absent.node, nullptr);
  EXPECT_EQ(absent.summary, nullptr);
}

// The summary a filter reads before the NodeState: its GPU figures are the node's placed_gpus, and
// it never says a pod sees the placed usage alone where the NodeState says otherwise.
TEST(NodeIndex, SummariesAgreeWithTheirNodes) {
  ClusterState s;
  std::vector<model::NodeSupply> nodes;
  for (int i = 0; i < 40; ++i) {
    model::NodeSupply n;
    n.name = "node-" + std::to_string(i);
    if (i % 4 != 0) {
      n.gpus["nvidia.com/gpu"] = 8;
      n.gpu_devices = {"nvidia.com/gpu", 8, 0};
    }
    if (i % 5 == 1) n.gpus["amd.com/gpu"] = 2;
    if (i % 7 == 2) n.problems["nvidia.com/gpu"] = "allocatable \"x\"";
    nodes.push_back(n);
  }
  s.upsert_nodes(nodes);
  const auto now = SteadyClock::now();
  for (int i = 0; i < 120; ++i) {
    Claim c;
    c.node = "node-" + std::to_string(i % 40);
    c.allocation.gpus["nvidia.com/gpu"] = 1;
    if (i % 9 == 0) {
      s.reserve("uid-" + std::to_string(i), c, std::chrono::seconds(30), now);
    } else {
      s.place("uid-" + std::to_string(i), c);
    }
  }
  const Snapshot snap = s.snapshot();
  std::size_t summarized = 0, placed_only = 0;
  for (const auto& n : nodes) {
    const auto [node, order, summary, name] = snap.lookup(n.name);
    EXPECT_EQ(name, n.name);
    ASSERT_NE(node, nullptr);
    EXPECT_EQ(summary->reserved, node->reservations > 0) << n.name;
    if (summary->gpus_summarized) {
      ++summarized;
      const auto gpu = summary->gpu();
      ASSERT_EQ(gpu.has_value(), !node->placed_gpus.empty()) << n.name;
      if (gpu) {
        EXPECT_EQ(*gpu, node->placed_gpus.front()) << n.name;
      }
    } else {
      EXPECT_TRUE(node->placed_gpus.size() > 1 || node->placed_gpus.front().problem) << n.name;
    }
    for (int i = 0; i < 200; ++i) {
      model::PodDemand pod;
      pod.uid = "uid-" + std::to_string(i);
      if (summary->sees_placed_only(NodeIndex::claim_bits(pod.uid))) {
        ++placed_only;
        EXPECT_TRUE(node->sees_placed_only(pod)) << n.name << " " << pod.uid;
      }
    }
  }
  EXPECT_GT(summarized, 0u);
  EXPECT_GT(placed_only, 0u);
}

// A node whose GPUs of "nvidia.com/gpu" have `free` of 8 free.
std::shared_ptr<const NodeState> gpu_node(const std::string& name, std::int64_t free) {
  auto n = std::make_shared<NodeState>();
  n->supply.name = name;
  n->placed_gpus.push_back({"nvidia.com/gpu", 8, free, std::nullopt, std::nullopt});
  return n;
}

std::shared_ptr<NodeMap> gpu_map(int nodes) {
  auto m = std::make_shared<NodeMap>();
  for (int i = 0; i < nodes; ++i) {
    auto n = gpu_node("node-" + std::to_string(i), 8);
    const std::string_view name = n->supply.name;
    m->set(name, std::move(n));
  }
  return m;
}

TEST(NodeIndex, AnIndexOfChangedNodesSharesTheNamesAndMakesTheirEntriesAgain) {
  auto first = gpu_map(100);
  const NodeIndex before(first);
  auto next = std::make_shared<NodeMap>(*first);
  auto changed_node = gpu_node("node-42", 3);
  next->set(changed_node->supply.name, changed_node);
  const std::vector<std::string_view> changed{"node-42"};
  const NodeIndex after(next, before, changed);

  const NodeIndex::Found found = after.lookup("node-42");
  EXPECT_EQ(found.node, changed_node.get());
  ASSERT_TRUE(found.summary->gpu());
  EXPECT_EQ(found.summary->gpu()->free, 3);
  EXPECT_EQ(before.lookup("node-42").summary->gpu()->free, 8) << "the earlier index is unchanged";
  EXPECT_EQ(found.name.data(), before.lookup("node-42").name.data()) << "the names are shared, not copied";
  for (int i = 0; i < 100; ++i) {
    const std::string name = "node-" + std::to_string(i);
    const NodeIndex::Found f = after.lookup(name);
    ASSERT_NE(f.node, nullptr) << name;
    EXPECT_EQ(f.order, before.lookup(name).order);
    if (i != 42) {
      EXPECT_EQ(f.node, before.lookup(name).node) << name;
    }
  }
}

TEST(NodeIndex, AnIndexOfAddedOrRemovedNodesIsBuiltAnew) {
  auto first = gpu_map(10);
  const NodeIndex before(first);
  auto added = std::make_shared<NodeMap>(*first);
  auto extra = gpu_node("node-10", 8);
  added->set(extra->supply.name, extra);
  const std::vector<std::string_view> new_name{"node-10"};
  const NodeIndex grown(added, before, new_name);
  EXPECT_EQ(grown.find("node-10"), extra.get());
  EXPECT_NE(grown.lookup("node-1").name.data(), before.lookup("node-1").name.data());
  EXPECT_EQ(grown.lookup("node-2").order, 3u) << "node-10 sorts between node-1 and node-2";

  auto removed = std::make_shared<NodeMap>(*first);
  removed->erase("node-3");
  const std::vector<std::string_view> gone{"node-3"};
  const NodeIndex shrunk(removed, before, gone);
  EXPECT_EQ(shrunk.find("node-3"), nullptr);
  EXPECT_NE(shrunk.find("node-4"), nullptr);
  EXPECT_EQ(shrunk.lookup("node-4").order, 3u);
}

// The map's entries in order, each as (name, node), and its find() and positions checked against
// the order on the way.
std::vector<std::pair<std::string, const NodeState*>> contents(const NodeMap& m) {
  std::vector<std::pair<std::string, const NodeState*>> out;
  for (auto it = m.begin(); it != m.end(); ++it) {
    EXPECT_EQ(it - m.begin(), static_cast<std::ptrdiff_t>(out.size()));
    const auto found = m.find(it->first);
    EXPECT_TRUE(found == it) << it->first;
    out.emplace_back(std::string(it->first), it->second.get());
  }
  EXPECT_EQ(out.size(), m.size());
  return out;
}

TEST(NodeMap, CopiesShareBlocksYetChangeAlone) {
  // Enough nodes for several blocks; inserted out of order, some replaced, some erased, and a
  // copy taken between steps must keep what it had.
  std::map<std::string, std::shared_ptr<const NodeState>> want;
  NodeMap m;
  std::vector<std::pair<NodeMap, std::vector<std::pair<std::string, const NodeState*>>>> copies;
  auto reference = [&] {
    std::vector<std::pair<std::string, const NodeState*>> r;
    for (const auto& [name, node] : want) r.emplace_back(name, node.get());
    return r;
  };
  for (int step = 0; step < 4000; ++step) {
    const int i = (step * 7919) % 1500;  // every name visited again and again, out of order
    const std::string name = "node-" + std::to_string(i);
    if (step % 5 == 4 && want.count(name)) {
      m.erase(name);
      want.erase(name);
    } else {
      auto n = gpu_node(name, step % 9);
      m.set(n->supply.name, n);
      want[name] = n;
    }
    if (step % 500 == 0) copies.emplace_back(m, reference());
  }
  EXPECT_EQ(contents(m), reference());
  EXPECT_EQ(m.find("node-1500"), m.end());
  EXPECT_EQ(m.count("absent"), 0u);
  for (const auto& [copy, had] : copies) EXPECT_EQ(contents(copy), had) << "a copy changed with the map";

  NodeMap emptied = m;
  for (const auto& [name, node] : want) emptied.erase(name);
  EXPECT_TRUE(emptied.empty());
  EXPECT_EQ(emptied.begin(), emptied.end());
  EXPECT_EQ(contents(m), reference()) << "emptying a copy left the map alone";
}

}  // namespace
}  // namespace extender::state
