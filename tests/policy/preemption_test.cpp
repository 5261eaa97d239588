#include "extender/policy/preemption.h"

#include <gtest/gtest.h>

namespace extender::policy {
namespace {

using model::Allocation;
using model::NodeSupply;
using model::NodeUsage;
using model::PodDemand;

Allocation gpus(std::int64_t n) {
  Allocation a;
  a.gpus["nvidia.com/gpu"] = n;
  return a;
}

TEST(EvictionMakesRoom, Table) {
  NodeSupply node;
  node.gpus["nvidia.com/gpu"] = 4;
  node.pools = {{"local", 100, {}}};
  PodDemand pod;
  pod.gpus["nvidia.com/gpu"] = 2;

  NodeUsage full;
  full.add(gpus(3));
  full.add(gpus(1));

  EXPECT_TRUE(eviction_makes_room(pod, node, full, std::vector<Allocation>{gpus(3)}));
  EXPECT_FALSE(eviction_makes_room(pod, node, full, std::vector<Allocation>{gpus(1)})) << "frees 1 of the 2 needed";
  EXPECT_TRUE(eviction_makes_room(pod, node, full, std::vector<Allocation>{gpus(1), gpus(3)}));
  EXPECT_FALSE(eviction_makes_room(pod, node, full, {})) << "victims of unknown demand free nothing";

  // Storage is never freed by eviction.
  PodDemand with_volume = pod;
  with_volume.volumes.push_back({"v", "local", "local", 60, false, "", false, "", 0, false, ""});
  NodeUsage storage_full = full;
  Allocation victim = gpus(3);
  victim.volumes.push_back({"old", "local", "", 50, "", ""});
  Allocation held_volumes;
  held_volumes.volumes = victim.volumes;
  storage_full.add(held_volumes);
  EXPECT_FALSE(eviction_makes_room(with_volume, node, storage_full, std::vector<Allocation>{victim}));

  // A node too small for the pod never survives, whatever is evicted.
  PodDemand big;
  big.gpus["nvidia.com/gpu"] = 8;
  EXPECT_FALSE(eviction_makes_room(big, node, full, std::vector<Allocation>{gpus(3), gpus(1)}));
}

}  // namespace
}  // namespace extender::policy

namespace extender::policy {
namespace {

TEST(EvictionMakesRoom, VictimsEphemeralVolumesAreFreedTheirPersistentOnesAreNot) {
  constexpr std::int64_t kGiB = std::int64_t{1} << 30;
  NodeSupply node;
  node.pools = {{"local", 1024 * kGiB, {}}};
  PodDemand pod;
  pod.uid = "new";
  pod.volumes.push_back({"scratch", "local-storage", "local", 600 * kGiB, false, "ns/new-scratch", true, ""});
  Allocation scratch;
  scratch.volumes.push_back({"scratch", "local", "", 600 * kGiB, "ns/old-scratch", "old"});
  Allocation data;
  data.volumes.push_back({"data", "local", "", 400 * kGiB, "ns/old-data", ""});
  NodeUsage used;
  used.add(scratch);
  used.add(data);
  EXPECT_TRUE(eviction_makes_room(pod, node, used, std::vector<Allocation>{scratch}));
  EXPECT_FALSE(eviction_makes_room(pod, node, used, std::vector<Allocation>{data})) << "a persistent volume stays";
}

}  // namespace
}  // namespace extender::policy
