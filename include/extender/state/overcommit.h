#pragma once
// Overcommit: a node whose placed claims (pods the cluster shows bound there) hold more of a
// managed GPU resource than the node's allocatable, or more bytes of a pool or pool device than
// its capacity. find_overcommit() is a pure function of one node; OvercommitTracker turns
// successive snapshots into episodes (an episode starts when a node becomes overcommitted on a
// subject and ends when it no longer is, or the node goes away), so each is reported once.
// Reservations (binds in flight) never count: the daemon made them under the node's lock.
// Value types; OvercommitTracker is not thread-safe (one caller, e.g. a periodic check).
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "extender/state/cluster_state.h"

namespace extender::state {

struct Overcommit {
  enum class Kind { kGpu, kPool };
  std::string node;
  Kind kind = Kind::kGpu;
  std::string subject;        // the GPU resource name, or the pool ("pool" or "pool/device")
  std::int64_t bound = 0;     // GPUs, or bytes
  std::int64_t capacity = 0;  // allocatable GPUs, or bytes
  std::size_t pods = 0;       // placed claims holding the subject
  bool operator==(const Overcommit&) const = default;
};

const char* kind_name(Overcommit::Kind kind);  // "gpu" or "pool"

// Every subject over capacity on the node: GPUs in name order, then pools in the node's order.
// Subjects whose supply could not be read (NodeSupply::problems) are skipped.
std::vector<Overcommit> find_overcommit(const NodeState& node);

// One line for the error log: the node, the figures, the likely causes and their fixes.
std::string describe(const Overcommit& o);

class OvercommitTracker {
 public:
  // Compares `snapshot` with the previous one (only nodes whose entry changed are examined) and
  // returns the episodes that start now.
  std::vector<Overcommit> update(const Snapshot& snapshot);
  // Episodes open now.
  std::size_t open_episodes() const;

 private:
  using Key = std::pair<std::string, std::string>;  // kind name, subject
  Snapshot previous_;
  std::map<std::string, std::set<Key>, std::less<>> open_;  // node -> open episodes
};

}  // namespace extender::state
