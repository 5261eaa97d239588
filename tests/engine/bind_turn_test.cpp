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
  std::string bind(const wire::BindingArgs&, Deadline) override {
    calls.push_back("bind");
    return {};
  }
  std::string record_devices(const std::vector<std::pair<std::string, std::string>>&, Deadline) override { return {}; }
  std::string record_gpu_share(const wire::BindingArgs&, const GpuShareAssignment&, Deadline) override { return {}; }
  std::function<std::string()> during_turn;
  std::vector<std::string> calls;
};

TEST(BindTurn, TheLeadershipCheckComesAfterTheWaitForATurn) {
  struct Case {
    const char* what;
    const char* turn_error;    // what the wait for a turn answers
    bool lost_while_waiting;   // leadership lapses during the wait
    std::vector<std::string> calls;
    const char* error;         // a part of the bind's error; "" for success
  };
  const Case cases[] = {
      {"a turn, still leading: bound", "", false, {"turn", "bind"}, ""},
      {"leadership lapsed while waiting: no Binding", "", true, {"turn"},
       "binding ml/trainer to n abandoned: the renew deadline passed"},
      {"no turn by the deadline: no Binding", "the client-side limit of API writes allows none before the deadline",
       false, {"turn"}, "binding ml/trainer to n failed: the client-side limit of API writes allows none"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    testing::EngineHarness h;
    h.cfg.mode = config::Mode::kKubernetes;
    h.load_inventory("nodes:\n  - {name: n, gpus: {nvidia.com/gpu: 2}}\n");
    model::Pod pod;
    pod.uid = "u1";
    pod.name = "trainer";
    pod.namespace_name = "ml";
    pod.scheduler_name = "default-scheduler";
    model::Container container;
    container.requests["nvidia.com/gpu"] = "1";
    pod.containers.push_back(container);

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

}  // namespace
}  // namespace extender::engine
