#pragma once
// SchedulerModel: kube-scheduler (v1.37) as the simulator models it around the extender.
// Filter: NodeResourcesFit's CPU and memory check on schedulable nodes (a node that gives no
// `cpu` or `memory` never runs out of it) and NodeAffinity (the pod's nodeSelector and required
// node affinity on the node's labels, judged by the daemon's own policy::node_affinity_mismatch),
// searched from where the previous pod's search stopped
// until numFeasibleNodesToFind nodes pass (percentageOfNodesToScore; 0 is the adaptive rule).
// Score: the default plugins that differ between nodes here, each 0..100 × its weight 1:
// NodeResourcesFit LeastAllocated (cpu and memory, weight 1 each) and
// NodeResourcesBalancedAllocation, plus the extender's 0..10 × weight × 10; the highest total
// wins, at random among ties by a generator seeded once. Every placed pod's CPU and memory count
// on its node. DRA nodes (set_dra_gpus): kube-scheduler's DRA allocator (DynamicResources with
// DRAExtendedResource) admits a pod asking N whole GPUs only where N devices are free, and placing
// it takes them; the fit of other extended resources (device-plugin GPUs, GPU shares, which a DRA
// node does not offer) is left to the extender's filter. Owns copies of what it needs; not
// thread-safe. The simulator and the test that compares it with the daemon over HTTP both drive the
// extender through this one model.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "extender/model/pod_constraints.h"
#include "extender/model/supply.h"

namespace extender::sim {

struct SchedulerSettings {
  std::int64_t extender_weight = 1;               // the extender entry's `weight`
  std::int64_t percentage_of_nodes_to_score = 0;  // 0: the adaptive default
  // The FGD paper's simulator instead of kube-scheduler: every feasible node is found, in the
  // node list's order, and the extender's score alone decides (no plugin scores), ties going to
  // the node first in paper_tie_order for the run's seed. How the paper's published figures were
  // measured.
  bool paper = false;
};

// The order in which the FGD paper's simulator breaks score ties: it prefixes each node's name
// with the node's place in a permutation drawn once per run from the seed, and among tied nodes
// takes the least name; so ties go to a fixed node order, random per seed. Returns each node's
// place (0 first) in such an order of `nodes` nodes drawn from `seed` (a permutation of
// 0..nodes-1; the same for the same arguments).
std::vector<std::size_t> paper_tie_order(std::size_t nodes, std::uint64_t seed);

// How many feasible nodes the filter phase looks for among `nodes`: all below 100 nodes; else
// `percentage` of them (0: 50 - nodes/125, at least 5), at least 100.
std::int64_t feasible_nodes_to_find(std::int64_t percentage, std::int64_t nodes);

// NodeResourcesFit's LeastAllocated over cpu and memory (weight 1 each): per resource with
// allocatable > 0, (allocatable - requested) × 100 / allocatable (0 past allocatable), averaged by
// integer division. `requested` includes the pod, each pod counted at least 100m and 200 MiB.
std::int64_t least_allocated_score(std::int64_t cpu_requested, std::int64_t cpu_allocatable,
                                   std::int64_t memory_requested, std::int64_t memory_allocatable);
// NodeResourcesBalancedAllocation: (1 - |cpu fraction - memory fraction| / 2) × 100, truncated;
// fractions of requested (the pod included) over allocatable, at most 1; 100 with fewer than two.
std::int64_t balanced_allocation_score(std::int64_t cpu_requested, std::int64_t cpu_allocatable,
                                       std::int64_t memory_requested, std::int64_t memory_allocatable);

class SchedulerModel {
 public:
  SchedulerModel(const std::vector<model::NodeSupply>& nodes, std::uint64_t seed, SchedulerSettings settings = {});

  // Makes node i a DRA node with `gpus` free devices.
  void set_dra_gpus(std::size_t i, std::int64_t gpus);
  // The filter phase for a pod of this CPU and memory, asking `dra_gpus` whole GPUs of the resource
  // DRA serves, with these node constraints (tolerations are not judged): the feasible nodes in
  // search order.
  std::vector<std::string> feasible(std::int64_t cpu_milli, std::int64_t memory_bytes, std::int64_t dra_gpus = 0,
                                    const model::PodConstraints& constraints = {});
  // The same by position: node i is the i-th of the nodes given to the constructor, name(i).
  std::vector<std::size_t> feasible_at(std::int64_t cpu_milli, std::int64_t memory_bytes, std::int64_t dra_gpus = 0,
                                       const model::PodConstraints& constraints = {});
  const std::string& name(std::size_t i) const { return nodes_[i].name; }
  // How many nodes the last filter phase looked at (all of them when it found too few).
  std::size_t last_searched() const { return last_searched_; }
  std::size_t node_count() const { return nodes_.size(); }
  // The score phase: the candidate kube-scheduler picks given each candidate's extender score
  // (`extender_scores` empty: the extender gives none); nullopt when there is no candidate.
  std::optional<std::size_t> choose(const std::vector<std::string>& candidates,
                                    const std::vector<std::int64_t>& extender_scores, std::int64_t cpu_milli,
                                    std::int64_t memory_bytes);
  // choose() over candidates given by position; the same choice, the same draw.
  std::optional<std::size_t> choose_at(const std::vector<std::size_t>& candidates,
                                       const std::vector<std::int64_t>& extender_scores, std::int64_t cpu_milli,
                                       std::int64_t memory_bytes);
  // Counts the pod's CPU and memory on the node (unknown names are ignored), and on a DRA node
  // takes `dra_gpus` of its free devices.
  void place(const std::string& node, std::int64_t cpu_milli, std::int64_t memory_bytes, std::int64_t dra_gpus = 0);
  void place_at(std::size_t i, std::int64_t cpu_milli, std::int64_t memory_bytes, std::int64_t dra_gpus = 0);

 private:
  struct Node {
    std::string name;
    bool schedulable = true;
    std::int64_t cpu_allocatable = 0;  // 0 when the node gives none
    std::int64_t memory_allocatable = 0;
    std::int64_t cpu_requested = 0;
    std::int64_t memory_requested = 0;
    std::int64_t cpu_nonzero = 0;  // requests counted at least 100m / 200 MiB per pod
    std::int64_t memory_nonzero = 0;
    std::int64_t dra_free = -1;  // free DRA devices; -1: not a DRA node
  };
  std::int64_t plugin_scores(const Node& n, std::int64_t cpu_milli, std::int64_t memory_bytes) const;
  // The highest total, at random among ties (paper: the first in paper_tie_order); nullopt when
  // there is none. `at`: each total's node (nodes_.size(): not one of them).
  std::optional<std::size_t> pick(const std::vector<std::int64_t>& total, const std::vector<std::size_t>& at);

  std::vector<Node> nodes_;
  std::vector<model::NodeSupply> labelled_;  // each node's name and labels, for NodeAffinity
  std::unordered_map<std::string, std::size_t> index_;
  SchedulerSettings settings_;
  std::size_t next_start_ = 0;
  std::size_t last_searched_ = 0;
  std::mt19937_64 rng_;
  std::vector<std::size_t> tie_order_;  // paper: paper_tie_order, by node
};

}  // namespace extender::sim
