// Concurrency: 8 threads drive filter -> prioritize -> bind for more pods than the nodes can hold,
// 1,000 rounds. The bind-time re-check must keep every node within its GPUs, and every pod must
// end bound or refused with a reason.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <mutex>
#include <thread>

#include "extender/engine/extender.h"
#include "support/engine_harness.h"

namespace extender::engine {
namespace {

constexpr int kThreads = 8;
constexpr int kRounds = 1000;
constexpr int kPods = 16;  // needing 1 or 2 GPUs each: 24 GPUs asked for, 10 on offer

struct Outcome {
  bool bound = false;
  std::string node;
  std::string reason;
};

TEST(Burst, NeverOvercommitsAndAnswersEveryPod) {
  config::Config cfg;
  const std::map<std::string, std::int64_t> capacity = {{"n1", 4}, {"n2", 4}, {"n3", 2}};
  std::int64_t overcommits = 0;
  std::int64_t unexplained = 0;

  for (int round = 0; round < kRounds; ++round) {
    testing::EngineHarness h(cfg, 1000);
    state::ClusterState& state = h.state;
    std::vector<model::NodeSupply> nodes;
    for (const auto& [name, gpus] : capacity) {
      model::NodeSupply n;
      n.name = name;
      n.gpus["nvidia.com/gpu"] = gpus;
      nodes.push_back(n);
    }
    state.upsert_nodes(nodes);
    Extender& ext = h.standalone();

    std::vector<Outcome> outcomes(kPods);
    std::atomic<int> next{0};
    std::barrier start(kThreads);
    auto worker = [&] {
      start.arrive_and_wait();
      for (int i = next++; i < kPods; i = next++) {
        model::Pod pod;
        pod.uid = "r" + std::to_string(round) + "-p" + std::to_string(i);
        pod.name = "p" + std::to_string(i);
        pod.namespace_name = "burst";
        model::Container c;
        c.name = "main";
        c.requests["nvidia.com/gpu"] = (i % 2) ? "2" : "1";
        pod.containers.push_back(c);
        wire::ExtenderArgs args;
        args.pod = pod;
        args.set_node_names({"n1", "n2", "n3"});

        FilterAnswer f = ext.filter(args);
        Outcome& out = outcomes[i];
        if (f.result.node_names->empty()) {
          out.reason = f.result.failed.empty() ? "" : *f.result.failed.sorted().front().second;
          continue;
        }
        args.set_node_names({f.result.node_names->begin(), f.result.node_names->end()});
        PrioritizeAnswer p = ext.prioritize(args);
        std::string best(args.node_names->front());
        std::int64_t best_score = -1;
        for (const auto& s : p.scores) {
          if (s.score > best_score) {
            best = s.host;
            best_score = s.score;
          }
        }
        BindAnswer b = ext.bind({pod.name, pod.namespace_name, pod.uid, best});
        if (b.error.empty()) {
          out.bound = true;
          out.node = best;
        } else {
          out.reason = b.error;
        }
      }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker);
    for (auto& t : threads) t.join();

    std::map<std::string, std::int64_t> bound_gpus;
    for (int i = 0; i < kPods; ++i) {
      if (outcomes[i].bound) {
        bound_gpus[outcomes[i].node] += (i % 2) ? 2 : 1;
      } else if (outcomes[i].reason.empty()) {
        ++unexplained;
      }
    }
    state::Snapshot snap = state.snapshot();
    for (const auto& [name, gpus] : capacity) {
      const std::int64_t used = snap.find(name)->placed.gpus_used("nvidia.com/gpu");
      if (used > gpus || bound_gpus[name] > gpus) ++overcommits;
      EXPECT_EQ(used, bound_gpus[name]) << "round " << round << " node " << name;
    }
  }
  EXPECT_EQ(overcommits, 0);
  EXPECT_EQ(unexplained, 0);
}

}  // namespace
}  // namespace extender::engine
