// The Binding waits for its turn under the client-side limit of API writes, and only then does
// the engine check its leadership a last time: a replica that stopped leading while it waited
// sends no Binding, and a turn that cannot come by the bind's deadline fails the bind cleanly.
#include <gtest/gtest.h>

#include "extender/engine/extender.h"
#include "support/engine_harness.h"

namespace extender::engine {
namespace {

// Records the order of the engine's calls; `during_turn` runs while the bind waits for its turn.
class TurnBinder : public Binder {
 public:
  std::string wait_turn(Deadline) override {
    calls.push_back("turn");
    return during_turn ? during_turn() : std::string();
  }
  std::string bind(const wire::BindingArgs&, Deadline deadline) override {
    calls.push_back("bind");
    bind_deadline = deadline;
    return {};
  }
  std::string record_devices(const std::vector<std::pair<std::string, std::string>>&, Deadline) override { return {}; }
  std::string record_gpu_share(const wire::BindingArgs&, const GpuShareAssignment&, Deadline) override { return {}; }
  std::function<std::string()> during_turn;
  std::vector<std::string> calls;
  Deadline bind_deadline{};
};

model::Pod one_gpu_pod() {
  model::Pod pod;
  pod.uid = "u1";
  pod.name = "trainer";
  pod.namespace_name = "ml";
  pod.scheduler_name = "default-scheduler";
  model::Container container;
  container.requests["nvidia.com/gpu"] = "1";
  pod.containers.push_back(container);
  return pod;
}

TEST(BindTurn, TheLeadershipCheckComesAfterTheWaitForATurn) {
  struct Case {
    const char* what;
    const char* turn_error;   // what the wait for a turn answers
    bool lost_while_waiting;  // leadership lapses during the wait
    std::vector<std::string> calls;
    const char* error;  // a part of the bind's error; "" for success
  };
  const Case cases[] = {
      {"a turn, still leading: bound", "", false, {"turn", "bind"}, ""},
      {"leadership lapsed while waiting: no Binding",
       "",
       true,
       {"turn"},
       "binding ml/trainer to n abandoned: the renew deadline passed"},
      {"no turn by the deadline: no Binding",
       "the client-side limit of API writes allows none before the deadline",
       false,
       {"turn"},
       "binding ml/trainer to n failed: the client-side limit of API writes allows none"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    testing::EngineHarness h;
    h.cfg.mode = config::Mode::kKubernetes;
    h.load_inventory("nodes:\n  - {name: n, gpus: {nvidia.com/gpu: 2}}\n");
    const model::Pod pod = one_gpu_pod();

    bool leading = true;
    TurnBinder binder;
    binder.during_turn = [&] {
      if (c.lost_while_waiting) leading = false;
      return std::string(c.turn_error);
    };
    h.pods.pending[pod.uid] = pod;
    h.gate.leading = [&]() -> std::optional<std::string> {
      if (leading) return std::nullopt;
      return "the renew deadline passed";
    };
    Extender& ext = h.kubernetes(binder);
    const BindAnswer a = ext.bind({"trainer", "ml", "u1", "n"});
    EXPECT_EQ(binder.calls, c.calls);
    if (*c.error == '\0') {
      EXPECT_EQ(a.error, "");
    } else {
      EXPECT_NE(a.error.find(c.error), std::string::npos) << a.error;
      EXPECT_FALSE(h.state.claim_of("u1")) << "the reservation is released";
    }
  }
}

// A Binding sent by a leader must be answered before another replica may decide: the binder gets
// the leadership term's write fence as its deadline when that comes before the bind's own.
TEST(BindTurn, TheBindingIsAnsweredByTheTermsWriteFence) {
  using std::chrono::milliseconds;
  struct Case {
    const char* what;
    std::optional<milliseconds> fence_in;  // from the bind's start; none: no election
    milliseconds want_at_most;             // the Binding's deadline, from the bind's start
    milliseconds want_at_least;
  };
  const Case cases[] = {
      {"no election: the bind's own timeout", std::nullopt, milliseconds(4'000), milliseconds(3'900)},
      {"a fence before the bind's timeout caps it", milliseconds(300), milliseconds(300), milliseconds(300)},
      {"a fence after the bind's timeout changes nothing", milliseconds(9'000), milliseconds(4'000),
       milliseconds(3'900)},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    testing::EngineHarness h;
    h.cfg.mode = config::Mode::kKubernetes;
    h.cfg.kubernetes.bind_timeout = milliseconds(4'000);
    h.load_inventory("nodes:\n  - {name: n, gpus: {nvidia.com/gpu: 2}}\n");
    h.pods.pending["u1"] = one_gpu_pod();
    const auto start = std::chrono::steady_clock::now();
    if (c.fence_in) h.gate.fence = start + *c.fence_in;
    TurnBinder binder;
    Extender& ext = h.kubernetes(binder);
    const BindAnswer a = ext.bind({"trainer", "ml", "u1", "n"});
    EXPECT_EQ(a.error, "");
    ASSERT_EQ(binder.calls, (std::vector<std::string>{"turn", "bind"}));
    if (c.fence_in && *c.fence_in == c.want_at_most) {
      EXPECT_EQ(binder.bind_deadline, start + *c.fence_in);
    } else {
      EXPECT_LE(binder.bind_deadline, std::chrono::steady_clock::now() + c.want_at_most);
      EXPECT_GE(binder.bind_deadline, start + c.want_at_least);
    }
  }
}

}  // namespace
}  // namespace extender::engine
