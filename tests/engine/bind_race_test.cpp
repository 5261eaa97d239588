// Binding one pod twice at once: the check for an existing placement is made again under the
// node's bind lock, so the pod ends up on one node, counted once.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "extender/engine/extender.h"
#include "support/engine_harness.h"

namespace extender::engine {
namespace {

using namespace std::chrono_literals;

struct Harness : testing::EngineHarness {
  Extender* ext = nullptr;

  Harness() {
    load_inventory(
        "nodes:\n  - {name: small, gpus: {nvidia.com/gpu: 2}}\n"
        "  - {name: big, gpus: {nvidia.com/gpu: 8}}\n");
    ext = &standalone();
  }
};

using testing::gpu_pod;

void filter(Harness& h, const model::Pod& p) {
  wire::ExtenderArgs a;
  a.pod = p;
  a.set_node_names({"small", "big"});
  ASSERT_EQ(h.ext->filter(a).result.node_names->size(), 2u);
}

// Starts a bind of `p` to `node` while the test holds `node`'s bind lock, and waits until the
// bind is past its first check (it is then waiting for the lock).
std::future<BindAnswer> bind_behind_lock(Harness& h, const model::Pod& p, const std::string& node) {
  auto f = std::async(std::launch::async, [&h, p, node] {
    return h.ext->bind({p.name, p.namespace_name, p.uid, node});
  });
  std::this_thread::sleep_for(200ms);
  return f;
}

TEST(BindRace, ThePodBoundTwiceAtOnceToTwoNodesLandsOnOne) {
  Harness h;
  ASSERT_NE(&h.state.bind_lock("small"), &h.state.bind_lock("big")) << "the test needs two lock stripes";
  const model::Pod p = gpu_pod("u1", "2");
  filter(h, p);
  std::future<BindAnswer> to_big;
  {
    std::lock_guard hold(h.state.bind_lock("big"));
    to_big = bind_behind_lock(h, p, "big");
    EXPECT_EQ(h.ext->bind({p.name, p.namespace_name, p.uid, "small"}).error, "");
  }
  const BindAnswer late = to_big.get();
  EXPECT_EQ(late.error, "pod ml/pod-u1 is already placed on node small");
  auto claim = h.state.claim_of("u1");
  ASSERT_TRUE(claim);
  EXPECT_EQ(claim->node, "small");
  const state::Snapshot snap = h.state.snapshot();
  EXPECT_EQ(snap.find("small")->placed.gpus_used("nvidia.com/gpu"), 2);
  EXPECT_EQ(snap.find("big")->placed.gpus_used("nvidia.com/gpu"), 0);
}

TEST(BindRace, ThePodBoundTwiceAtOnceToOneNodeIsPlacedOnce) {
  Harness h;
  const model::Pod p = gpu_pod("u1", "2");
  filter(h, p);
  std::future<BindAnswer> first, second;
  {
    std::lock_guard hold(h.state.bind_lock("small"));
    first = bind_behind_lock(h, p, "small");
    second = bind_behind_lock(h, p, "small");
  }
  const BindAnswer a = first.get();
  const BindAnswer b = second.get();
  EXPECT_EQ(a.error, "");
  EXPECT_EQ(b.error, "");
  auto claim = h.state.claim_of("u1");
  ASSERT_TRUE(claim);
  EXPECT_EQ(claim->kind, state::Claim::Kind::kPlaced) << "the later bind found the earlier one's reservation and "
                                                         "made the same placement";
  EXPECT_EQ(h.state.snapshot().find("small")->placed.gpus_used("nvidia.com/gpu"), 2) << "counted once";
}

}  // namespace
}  // namespace extender::engine
