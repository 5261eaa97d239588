#pragma once
// ClusterState: the nodes this daemon knows (supply) and the claims pods hold on them, either
// placed (a pod bound there) or reserved (a bind in flight, with an expiry). Readers take an
// immutable Snapshot: snapshot() copies the current pointer under a mutex that a writer holds only
// to swap that pointer, so a reader never waits on a writer's rebuild. Writers replace node
// entries under a lock of their own and publish a new snapshot. Binds serialise per node through
// bind_lock(). No lock is held across I/O by this class. Thread-safe.
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "extender/common/clock.h"
#include "extender/model/demand.h"
#include "extender/model/gpu_availability.h"
#include "extender/model/supply.h"
#include "extender/model/usage.h"
#include "extender/state/node_index.h"

namespace extender::state {

struct Claim {
  enum class Kind { kPlaced, kReserved };
  std::string owner;           // "namespace/name" of the pod (or claim) for people reading /debug
  std::string source = "pod";  // what the claim stands for: "pod", or "volume" (a claimed volume)
  std::string node;
  model::Allocation allocation;
  Kind kind = Kind::kPlaced;
  bool terminating = false;   // the pod is being deleted (it holds its allocation until it is gone)
  std::int64_t priority = 0;  // the pod's spec.priority
  TimePoint since{};
  TimePoint expires{};  // kReserved only
};

// One node as readers see it; immutable once published. One ledger for pools and devices: every
// volume of every claim counts against its pool and against one device of a device pool: the device
// recorded on the claim at bind, or for claims that predate that record, the one ledger_device()
// gives. A volume whose claim is held by a placed claim counts once,
// even when a reservation in flight also names it. A GPU share of a placed claim that names no
// device of the node (a pod bound without the gpushare index annotation) is placed on the node's
// devices: in uid order after the recorded holds, each on the best-fit device (the least free
// memory that holds it; the most free memory when none does), so every replica agrees; a guess,
// which may change as other pods come and go.
struct NodeState {
  NodeState() = default;
  NodeState(const NodeState&) = delete;  // placed_gpus views into supply
  NodeState& operator=(const NodeState&) = delete;

  model::NodeSupply supply;
  std::map<std::string, Claim, std::less<>> claims;       // by uid
  model::NodeUsage placed;                                // the sum of the placed claims
  std::set<std::string, std::less<>> held_volume_claims;  // claims (namespace/name) placed claims hold
  std::size_t reservations = 0;                           // claims that are reservations
  model::GpuAvailability placed_gpus;                     // model::gpu_availability(supply, placed)
  std::uint64_t claim_bits = 0;                           // NodeIndex::claim_bits() of every claim's uid, or-ed

  // What is in use for evaluating `uid` at `now`: placed claims and unexpired reservations,
  // without uid's own claim (so evaluating a pod again gives the same answer).
  model::NodeUsage usage_excluding(std::string_view uid, TimePoint now) const;
  // The same for a pod, also without the placements of the volume claims it already holds here
  // (the pod's demand places them again, so they count once): those of the node selected for
  // them, and any placed here for its claims (a csi-baremetal reservation's drives).
  model::NodeUsage usage_for(const model::PodDemand& pod, TimePoint now) const;
  // Whether usage_for(pod, now) is `placed` itself: no reservation in flight, nothing of the pod's
  // here (then placed_gpus is what the pod sees of the GPUs).
  bool sees_placed_only(const model::PodDemand& pod) const;
  // As usage_for(), without a copy when sees_placed_only(pod): then `placed` itself, else
  // `scratch` filled in.
  const model::NodeUsage& usage_for(const model::PodDemand& pod, TimePoint now, model::NodeUsage& scratch) const;
};

// The ledger's device rule for one volume of a device pool: the recorded device when the pool has
// it, else, among the devices large enough to hold the volume alone, the one the claim's uid hashes
// to (FNV-1a). It reads that claim alone, so binds, deletions and restarts never move a volume, and
// every replica makes the same choice.
std::string ledger_device(const model::Pool& pool, std::string_view claim_uid, const std::string& recorded,
                          std::int64_t bytes);

class Snapshot {
 public:
  Snapshot() : index_(std::make_shared<const NodeIndex>(std::make_shared<const NodeMap>())) {}
  explicit Snapshot(std::shared_ptr<const NodeIndex> index) : index_(std::move(index)) {}
  const NodeState* find(std::string_view node) const;
  // The node and its place in name order (NodeIndex::lookup).
  NodeIndex::Found lookup(std::string_view node) const { return index_->lookup(node); }
  void lookup(std::span<const std::string_view> nodes, std::span<NodeIndex::Found> out) const {
    index_->lookup(nodes, out);
  }
  const NodeMap& nodes() const { return index_->nodes(); }
  bool names_dns_only() const { return index_->names_dns_only(); }
  const model::GpuModelSupply& gpu_models() const { return index_->gpu_models(); }
  std::shared_ptr<const model::GpuModelSupply> shared_gpu_models() const { return index_->shared_gpu_models(); }

 private:
  std::shared_ptr<const NodeIndex> index_;
};

class ClusterState {
 public:
  // The current snapshot: a pointer copy under read_mu_, which publishers hold only to swap it.
  Snapshot snapshot() const;

  // Nodes. Upserting an unchanged node publishes nothing.
  void upsert_nodes(std::vector<model::NodeSupply> nodes);
  // Replaces the whole node set (a relist); nodes not listed are removed.
  void replace_nodes(std::vector<model::NodeSupply> nodes);
  void remove_node(std::string_view name);
  // Pools that come from elsewhere than the node object (a storage driver's published capacity),
  // by node: added to the node's own pools, except where the node already has a pool of that
  // name. Replaces the whole set; nodes whose pools did not change publish nothing.
  void set_derived_pools(std::map<std::string, std::vector<model::Pool>, std::less<>> by_node);
  // The same for the nodes named only (an empty list: none), the others' kept: costs the nodes
  // named, not the cluster.
  void set_derived_pools_of(std::map<std::string, std::vector<model::Pool>, std::less<>> by_node);

  // Claims, one per uid: placing or reserving replaces whatever uid held before. Placing a claim
  // equal to the one held publishes nothing.
  void place(std::string uid, Claim claim);
  void reserve(std::string uid, Claim claim, Duration ttl, TimePoint now);
  void drop(std::string_view uid);
  // Drops uid's claim only while it is still a reservation.
  void drop_reservation(std::string_view uid);
  // The same, only while it is a reservation of `source`; whether it dropped one.
  bool drop_reservation(std::string_view uid, std::string_view source);
  // Moves the expiry of uid's reservation of `source` to `expires`; false when uid holds none.
  bool extend_reservation(std::string_view uid, std::string_view source, TimePoint expires);
  // Replaces every placed claim of `source` whose uid starts with `uid_prefix` (empty: all of
  // them, a relist); reservations and other sources stay. Claims equal to those held are kept as
  // they are: only the nodes whose claims changed are published again.
  void replace_placements(std::string_view source, std::vector<std::pair<std::string, Claim>> placed,
                          std::string_view uid_prefix = {});
  std::optional<Claim> claim_of(std::string_view uid) const;
  // Removes reservations whose expiry has passed; returns how many.
  std::size_t sweep_expired(TimePoint now);

  // Serialises binds per node (striped: nodes may share a lock, never a node two locks).
  std::mutex& bind_lock(std::string_view node);

 private:
  // Rebuilds the entries of `nodes` from supply_ and claims_ and publishes. Caller holds write_mu_.
  void publish(const std::set<std::string, std::less<>>& nodes);
  void set_claim(std::string uid, Claim claim, std::set<std::string, std::less<>>& touched);
  void erase_claim(std::string_view uid, std::set<std::string, std::less<>>& touched);

  mutable std::mutex read_mu_;  // guards current_ (the pointer only)
  std::shared_ptr<const NodeIndex> current_ = std::make_shared<const NodeIndex>(std::make_shared<const NodeMap>());

  mutable std::mutex write_mu_;  // guards everything below and serialises publishers
  std::map<std::string, model::NodeSupply, std::less<>> supply_;
  std::map<std::string, std::vector<model::Pool>, std::less<>> derived_pools_;
  std::map<std::string, Claim, std::less<>> claims_;
  std::map<std::string, std::set<std::string, std::less<>>, std::less<>> claims_by_node_;

  std::array<std::mutex, 64> bind_locks_;
};

}  // namespace extender::state
