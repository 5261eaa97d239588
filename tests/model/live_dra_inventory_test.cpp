#include "extender/model/live_dra_inventory.h"

#include <gtest/gtest.h>

#include <optional>

namespace extender::model {
namespace {

ResourceSlice slice(const std::string& node, int gpus, std::int64_t generation = 1, std::int64_t count = 1) {
  ResourceSlice s;
  s.name = node + "-slice-" + std::to_string(generation);
  s.driver = kNvidiaGpuDriver;
  s.node_name = node;
  s.pool = node;
  s.pool_generation = generation;
  s.pool_slice_count = count;
  for (int i = 0; i < gpus; ++i) {
    DraDevice d;
    d.name = "gpu-" + std::to_string(i);
    d.attributes["gpu.nvidia.com/index"] = {DraAttribute::Kind::kInt, i, false, {}};
    s.devices.push_back(std::move(d));
  }
  return s;
}

// One event: a claim allocated (devices "node/gpu-i"), unallocated, deleted, or a node's slice
// replaced (gpus < 0: removed).
struct Event {
  enum class Kind { kAllocate, kUnallocate, kDelete, kSlice } kind;
  std::string name;                  // the claim, or the slice's node
  std::vector<std::string> devices;  // kAllocate: "<pool>/<device>"
  int gpus = 0;                      // kSlice
  std::int64_t generation = 1;
  std::int64_t slice_count = 1;
};

Event allocate(std::string claim, std::vector<std::string> devices) {
  return {Event::Kind::kAllocate, std::move(claim), std::move(devices)};
}
Event unallocate(std::string claim) { return {Event::Kind::kUnallocate, std::move(claim), {}}; }
Event erase(std::string claim) { return {Event::Kind::kDelete, std::move(claim), {}}; }
Event slice_of(std::string node, int gpus, std::int64_t generation = 1, std::int64_t count = 1) {
  return {Event::Kind::kSlice, std::move(node), {}, gpus, generation, count};
}

ResourceClaim claim_of(const Event& e) {
  ResourceClaim c;
  c.uid = "uid-" + e.name;
  c.namespace_name = "ml";
  c.name = e.name;
  c.allocated = e.kind == Event::Kind::kAllocate;
  for (const std::string& d : e.devices) {
    const auto slash = d.find('/');
    c.results.push_back({"r", kNvidiaGpuDriver, d.substr(0, slash), d.substr(slash + 1), false});
  }
  return c;
}

struct World {
  std::map<std::string, ResourceSlice> slices;  // by node
  std::map<std::string, ResourceClaim> claims;  // by key
  std::vector<ResourceSlice> slice_list() const {
    std::vector<ResourceSlice> out;
    for (const auto& [node, s] : slices) out.push_back(s);
    return out;
  }
  std::vector<ResourceClaim> claim_list() const {
    std::vector<ResourceClaim> out;
    for (const auto& [key, c] : claims) out.push_back(c);
    return out;
  }
};

struct Case {
  const char* name;
  std::vector<Event> events;
};

const Case kCases[] = {
    {"allocate then release one device", {allocate("a", {"n1/gpu-0"}), unallocate("a")}},
    {"allocate then delete", {allocate("a", {"n1/gpu-0", "n1/gpu-1"}), erase("a")}},
    {"two claims on one device: freed only when both let go",
     {allocate("a", {"n1/gpu-0"}), allocate("b", {"n1/gpu-0"}), unallocate("a"), erase("b")}},
    {"a claim moves between nodes",
     {allocate("a", {"n1/gpu-0"}), allocate("a", {"n2/gpu-1"}), allocate("a", {"n1/gpu-1", "n2/gpu-0"})}},
    {"a device named twice by one claim",
     {allocate("a", {"n1/gpu-0", "n1/gpu-0"}), allocate("a", {"n1/gpu-0"}), unallocate("a")}},
    {"results naming no counted device, listed by claim",
     {allocate("b", {"n9/gpu-0"}), allocate("a", {"n1/gpu-0", "n8/gpu-1"}), allocate("b", {"n1/gpu-1"}), erase("a")}},
    {"a slice change rebuilds, claims made before still count",
     {allocate("a", {"n3/gpu-0"}), slice_of("n3", 2), allocate("b", {"n3/gpu-1"}), slice_of("n3", 1), unallocate("a")}},
    {"an incomplete pool holds nothing, then completes",
     {allocate("a", {"n1/gpu-0"}), slice_of("n1", 4, 2, 2), allocate("b", {"n1/gpu-1"}), slice_of("n1", 4, 3, 1),
      allocate("a", {"n1/gpu-2"})}},
    {"a node's slice removed and back",
     {allocate("a", {"n2/gpu-0"}), slice_of("n2", -1), erase("a"), slice_of("n2", 2), allocate("a", {"n2/gpu-1"})}},
};

// After every event the inventory updated claim by claim equals the one built whole; a claim
// event copies only the nodes it touches.
TEST(LiveDraInventory, EqualsAFullRebuildAfterEachEvent) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    World w;
    w.slices = {{"n1", slice("n1", 4)}, {"n2", slice("n2", 2)}, {"n4", slice("n4", 2)}};
    std::optional<LiveDraInventory> live(std::in_place, w.slice_list(), w.claims, DraRules{});
    for (std::size_t i = 0; i < c.events.size(); ++i) {
      const Event& e = c.events[i];
      SCOPED_TRACE("after event " + std::to_string(i));
      const auto before = live->inventory();
      if (e.kind == Event::Kind::kSlice) {
        if (e.gpus < 0) {
          w.slices.erase(e.name);
        } else {
          w.slices[e.name] = slice(e.name, e.gpus, e.generation, e.slice_count);
        }
        live.emplace(w.slice_list(), w.claims, DraRules{});
      } else {
        const std::string key = "ml/" + e.name;
        if (e.kind == Event::Kind::kDelete) {
          w.claims.erase(key);
        } else {
          w.claims[key] = claim_of(e);
        }
        live->set_claim(key, e.kind == Event::Kind::kDelete ? nullptr : &w.claims[key]);
        EXPECT_EQ(live->inventory()->nodes.at("n4"), before->nodes.at("n4"))
            << "an untouched node is shared, not copied";
      }
      const DraInventory rebuilt = build_dra_inventory(w.slice_list(), w.claim_list());
      EXPECT_EQ(*live->inventory(), rebuilt);
      EXPECT_EQ(live->inventory()->unmatched_results, rebuilt.unmatched_results);
    }
  }
}

TEST(LiveDraInventory, PublishesANewInventoryAndLeavesTheOldOneAsItWas) {
  std::map<std::string, ResourceClaim> claims;
  LiveDraInventory live({slice("n1", 2), slice("n2", 2)}, claims, DraRules{});
  const auto before = live.inventory();
  ResourceClaim c = claim_of(allocate("a", {"n1/gpu-1"}));
  live.set_claim("ml/a", &c);
  const auto after = live.inventory();
  ASSERT_NE(after, before);
  EXPECT_EQ(before->node("n1")->allocated_gpus(), 0) << "a reader's snapshot never changes";
  EXPECT_EQ(after->node("n1")->allocated_gpus(), 1);
  EXPECT_TRUE(after->node("n1")->gpus[1].allocated);
  EXPECT_EQ(after->nodes.at("n2"), before->nodes.at("n2"));
  c.allocated = false;
  live.set_claim("ml/b", &c);
  EXPECT_EQ(live.inventory(), after) << "a claim that holds nothing and held nothing publishes nothing";
}

}  // namespace
}  // namespace extender::model
