#pragma once
// SchedulerModel: kube-scheduler as the simulator models it around the extender. Its own fit
// first (NodeResourcesFit: a schedulable node passes when the pod's CPU and memory requests fit
// what earlier placements left of the node's allocatable; a node that gives no `cpu` or `memory`
// never runs out of it), then, among the nodes the extender passes, the highest total score
// (the extender's 0..10 × weight × 10; the scheduler's own scoring plugins add the same to every
// node and are left out), chosen at random among ties by a generator seeded once. Owns copies of
// what it needs; not thread-safe. The simulator and the test that compares it with the daemon
// over HTTP both drive the extender through this one model.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "extender/model/supply.h"

namespace extender::sim {

class SchedulerModel {
 public:
  SchedulerModel(const std::vector<model::NodeSupply>& nodes, std::uint64_t seed);

  // The schedulable nodes the pod's CPU and memory fit, in inventory order.
  std::vector<std::string> fitting(std::int64_t cpu_milli, std::int64_t memory_bytes) const;
  // The candidate kube-scheduler picks given each candidate's extender score: the highest
  // score × weight × 10, uniformly at random among ties; nullopt when there is no candidate.
  std::optional<std::size_t> choose(const std::vector<std::int64_t>& scores, std::int64_t weight);
  // Takes the pod's CPU and memory from the node (unknown names are ignored).
  void place(const std::string& node, std::int64_t cpu_milli, std::int64_t memory_bytes);

 private:
  struct Free {
    std::string name;
    bool schedulable = true;
    std::int64_t cpu_milli = 0;     // INT64_MAX when the node gives none
    std::int64_t memory_bytes = 0;  // likewise
  };
  std::vector<Free> nodes_;
  std::mt19937_64 rng_;
};

}  // namespace extender::sim
