#include "extender/policy/local_volumes.h"

#include <gtest/gtest.h>

namespace extender::policy {
namespace {

constexpr std::uint8_t RWO = model::kReadWriteOnce;
constexpr std::uint8_t ROX = model::kReadOnlyMany;
constexpr std::uint8_t RWOP = model::kReadWriteOncePod;

struct Row {
  const char* what;
  std::vector<LocalVolumeOffer> offers;
  std::vector<LocalVolumeAsk> asks;
  std::vector<int> want;  // per ask: the offer's index, -1 for none
};

LocalVolumeOffer pv(std::string_view name, std::int64_t gi, std::uint8_t modes = RWO, bool free = true,
                    std::string_view cls = "fast", bool block = false) {
  return {name, cls, gi << 30, modes, block, free};
}
LocalVolumeAsk claim(std::int64_t gi, std::uint8_t modes = RWO, std::string_view cls = "fast", bool block = false,
                     std::string_view bound = {}) {
  return {cls, gi << 30, modes, block, bound};
}

TEST(LocalVolumes, MatchTable) {
  const Row rows[] = {
      {"the smallest volume that holds the request", {pv("a", 100), pv("b", 50), pv("c", 30)}, {claim(40)}, {1}},
      {"a volume of exactly the request fits", {pv("a", 100), pv("b", 40)}, {claim(40)}, {1}},
      {"none large enough", {pv("a", 30)}, {claim(40)}, {-1}},
      {"two claims never take one volume", {pv("a", 100)}, {claim(10), claim(10)}, {0, -1}},
      {"smallest request first: the small claim does not take the volume the large one needs",
       {pv("big", 100), pv("small", 20)},
       {claim(90), claim(10)},
       {0, 1}},
      {"smallest request first, each its smallest fit",
       {pv("a", 50), pv("b", 50), pv("c", 200)},
       {claim(60), claim(40), claim(45)},
       {2, 0, 1}},
      {"a taken volume is not offered", {pv("a", 50, RWO, false), pv("b", 60)}, {claim(40)}, {1}},
      {"access modes must contain the claim's", {pv("rwo", 50, RWO), pv("both", 80, RWO | ROX)}, {claim(10, ROX)}, {1}},
      {"ReadWriteOncePod is its own mode", {pv("rwo", 50, RWO)}, {claim(10, RWOP)}, {-1}},
      {"another class does not match", {pv("a", 50, RWO, true, "slow")}, {claim(10)}, {-1}},
      {"a block claim needs a block volume",
       {pv("fs", 50), pv("blk", 80, RWO, true, "fast", true)},
       {claim(10, RWO, "fast", true)},
       {1}},
      {"a filesystem claim does not take a block volume", {pv("blk", 80, RWO, true, "fast", true)}, {claim(10)}, {-1}},
      {"a bound claim takes its own volume, whatever its size",
       {pv("a", 10), pv("mine", 500)},
       {claim(40, RWO, "fast", false, "mine")},
       {1}},
      {"a bound claim's volume is not offered to the other claim",
       {pv("mine", 50), pv("b", 100)},
       {claim(40), claim(40, RWO, "fast", false, "mine")},
       {1, 0}},
      {"a bound claim whose volume is not here fits nowhere here",
       {pv("a", 50)},
       {claim(10, RWO, "fast", false, "gone")},
       {-1}},
      {"equal sizes: by name", {pv("b", 50), pv("a", 50)}, {claim(10)}, {1}},
      {"three volumes, two pods of two claims: the first pod takes two",
       {pv("a", 100), pv("b", 100), pv("c", 100)},
       {claim(40), claim(40)},
       {0, 1}},
      {"... and the second finds one",
       {pv("a", 100, RWO, false), pv("b", 100, RWO, false), pv("c", 100)},
       {claim(40), claim(40)},
       {2, -1}},
  };
  for (const Row& r : rows) {
    const auto got = match_local_volumes(r.asks, r.offers);
    ASSERT_EQ(got.size(), r.want.size()) << r.what;
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i], r.want[i] < 0 ? std::nullopt : std::optional<std::size_t>(r.want[i]))
          << r.what << " (ask " << i << ")";
    }
  }
}

model::PersistentVolume local(std::string phase, std::string claim = {}, std::string host = "n1") {
  model::PersistentVolume v;
  v.name = "pv";
  v.local = true;
  v.node_affinity = std::vector<model::NodeSelectorTerm>{{{{"kubernetes.io/hostname", "In", {host}}}, {}}};
  v.phase = std::move(phase);
  v.claim = std::move(claim);
  return v;
}

TEST(LocalVolumes, WhichVolumesCountAndWhichAreFree) {
  struct Case {
    const char* what;
    model::PersistentVolume pv;
    bool counted, free;
  };
  model::PersistentVolume network = local("Available");
  network.local = false;
  model::PersistentVolume nowhere = local("Available");
  nowhere.node_affinity.reset();
  model::PersistentVolume deleting = local("Available");
  deleting.terminating = true;
  const Case cases[] = {
      {"available", local("Available"), true, true},
      {"pre-bound to a claim (claimRef set, still Available)", local("Available", "ml/a"), true, false},
      {"bound", local("Bound", "ml/a"), true, false},
      {"released: holds data", local("Released", "ml/a"), false, false},
      {"failed", local("Failed"), false, false},
      {"pending", local("Pending"), false, false},
      {"not local", network, false, false},
      {"no node affinity", nowhere, false, false},
      {"being deleted", deleting, false, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(local_volume_counted(c.pv), c.counted) << c.what;
    EXPECT_EQ(local_volume_free(c.pv), c.free) << c.what;
  }
}

TEST(LocalVolumes, NodeAffinitySelectsTheNode) {
  model::NodeSupply n1;
  n1.name = "n1";
  n1.labels = {{"kubernetes.io/hostname", "n1"}, {"zone", "a"}};
  model::NodeSupply n2 = n1;
  n2.name = "n2";
  n2.labels["kubernetes.io/hostname"] = "n2";
  EXPECT_TRUE(local_volume_on_node(local("Available"), n1));
  EXPECT_FALSE(local_volume_on_node(local("Available"), n2));
  model::PersistentVolume either = local("Available");
  either.node_affinity->push_back({{{"kubernetes.io/hostname", "In", {"n2"}}}, {}});
  EXPECT_TRUE(local_volume_on_node(either, n2)) << "any one term";
  model::PersistentVolume by_field = local("Available");
  by_field.node_affinity = std::vector<model::NodeSelectorTerm>{{{}, {{"metadata.name", "In", {"n2"}}}}};
  EXPECT_TRUE(local_volume_on_node(by_field, n2));
  EXPECT_FALSE(local_volume_on_node(by_field, n1));
  model::PersistentVolume none = local("Available");
  none.node_affinity->clear();
  EXPECT_FALSE(local_volume_on_node(none, n1)) << "no terms: no node";
}

}  // namespace
}  // namespace extender::policy
