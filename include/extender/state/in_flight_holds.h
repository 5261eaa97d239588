#pragma once
// InFlightHolds: where kube-scheduler has put a pod it has not yet published, for the resources only
// the daemon accounts (local pools, drives, GPU shares, per-GPU memory, volume counts). In a pod
// group's cycle kube-scheduler filters the members one after another, each earlier one only assumed
// in its own cache (waiting at Permit); nothing of the gang shows on the API server before the whole
// gang is permitted. /filter narrows such a member to one node and holds its demand there; a pod
// nominated to a node is held there likewise. A hold is a reservation in the ledger
// (ClusterState::reserve, source "in-flight"), so every verb counts it for every other pod and
// never for the pod itself (usage_excluding); this class keeps what the ledger does not: the group,
// the phase, the lifetime, and which events end it (docs/kubernetes.md, "Pod groups").
//
// Cycles, per group: kube-scheduler filters each member once per cycle of its group, so a member
// filtered again means the group's previous cycle is over (it failed: a permitted gang is not filtered
// again); cycle() then drops every hold of that cycle still unpublished before the member is judged.
// Each member filtered also keeps the group's unpublished holds for `settle` from then: a cycle in
// progress never loses an earlier member's hold, and one kube-scheduler gave up ends `settle` after
// its last filter. A member the daemon refuses every node ends its cycle's holds at once when the
// gang can no longer reach its minimum (kube-scheduler's PlacementFeasible check: pending members
// not refused plus bound members below minCount), as kube-scheduler forgets the cycle then.
// Events, per pod uid: hold (filtered: replaces any hold of the uid, a new cycle), nominated and
// pre_bound (the member's node published: its nominatedNodeName, VolumeBinding's selected-node; on
// the held node the hold lives on a full lifetime from then, elsewhere it is dropped: kube-scheduler
// assumed it on another node, which the publication itself counts), bound (the placement replaced
// the hold in the ledger; forgotten), released (deleted, or rejected: a new attempt will filter it
// again), group_failed (every hold of the group taken before the failure), and sweep (lifetime
// ended, or the ledger no longer has the hold: a /bind's reservation or a placement replaced it).
// Bounded: at most `capacity` holds (the oldest dropped first). Thread-safe; holds no lock while
// calling into ClusterState's writers other than under its own mutex, which ClusterState never
// calls back into.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "extender/common/clock.h"
#include "extender/state/cluster_state.h"

namespace extender::state {

// The ledger source of a hold's reservation.
inline constexpr std::string_view kInFlightSource = "in-flight";

class InFlightHolds {
 public:
  enum class Phase { kFiltered, kNominated, kPreBind };
  struct Options {
    // How long a member stays held after its group's last filter until kube-scheduler publishes
    // anything of it: a group's cycle filters its members back to back, and a permitted member's
    // binding cycle starts at once (PreBind writes its nominated node and its claims' selected node
    // within a second or two even for large gangs, /bind follows), so a hold that sees nothing for
    // this long belongs to a cycle kube-scheduler gave up.
    Duration settle = std::chrono::seconds(10);
    // From a nomination or PreBind on: kube-scheduler's Permit timeout for a gang
    // (gangscheduling's permitTimeoutDuration, 5 min), as long as a member may wait for the rest.
    Duration lifetime = std::chrono::minutes(5);
    std::size_t capacity = 4096;
  };
  struct HoldView {
    std::string uid;
    std::string owner;  // namespace/name
    std::string group;  // namespace/name of the PodGroup; empty for a nominated pod outside a group
    std::string node;
    Phase phase = Phase::kFiltered;
    model::Allocation allocation;
    TimePoint since{};
    TimePoint expires{};
  };

  InFlightHolds(ClusterState& state, Options options) : state_(state), options_(options) {}

  // Member `uid` of `group` is about to be judged in a cycle of its group: ends the group's previous
  // cycle when the member was already filtered in it, and keeps the group's unpublished holds for
  // `settle` from `now`. How many holds it dropped.
  std::size_t cycle(const std::string& uid, const std::string& group, TimePoint now);
  // Group `group`'s gang minimum as its PodGroup says (spec.schedulingPolicy.gang.minCount); 0 (not a
  // gang, or the PodGroup is gone) forgets it.
  void group_min_count(const std::string& group, std::int64_t min_count);
  // Member `uid` of `group` passed no node of the daemon's in the group's current cycle, which has
  // `pending` members pending and `bound` bound: drops the cycle's unpublished holds when the gang
  // can no longer reach its minimum. How many it dropped.
  std::size_t refused(const std::string& uid, const std::string& group, std::size_t pending, std::size_t bound);
  // Pod `uid` (of `group`, may be empty) is held on claim.node from `now`, replacing any hold it had.
  void hold(const std::string& uid, std::string group, Claim claim, TimePoint now);
  void nominated(std::string_view uid, std::string_view node, TimePoint now);
  void pre_bound(std::string_view uid, std::string_view node, TimePoint now);
  // The same for the hold whose volumes include `claim` ("namespace/name"): its selected node shows.
  void claim_selected(std::string_view claim, std::string_view node, TimePoint now);
  void bound(std::string_view uid);
  void released(std::string_view uid);
  // Group `group` failed at `when`: its holds taken at or before then are dropped; how many.
  std::size_t group_failed(std::string_view group, TimePoint when);
  // Drops holds whose lifetime ended and forgets those the ledger no longer has; how many.
  std::size_t sweep(TimePoint now);

  std::vector<HoldView> holds() const;
  std::size_t size() const;
  static const char* phase_name(Phase p);

 private:
  struct Entry {
    HoldView view;
  };
  // Needs mu_. Removes uid's entry, and its reservation while that is still the hold.
  void drop_locked(std::string_view uid);
  void advance(std::string_view uid, std::string_view node, Phase phase, TimePoint now);
  bool ledger_has_hold(const Entry& e) const;

  // The members filtered in each group's current cycle (bounded like the holds: the group whose
  // cycle began first is forgotten first).
  struct Cycle {
    std::set<std::string, std::less<>> filtered;
    std::set<std::string, std::less<>> refused;
    TimePoint began{};
  };
  // Needs mu_. Drops the group's holds still unpublished (phase filtered); how many.
  std::size_t drop_unpublished_locked(std::string_view group);

  ClusterState& state_;
  const Options options_;
  mutable std::mutex mu_;
  std::map<std::string, Entry, std::less<>> entries_;
  std::map<std::string, Cycle, std::less<>> cycles_;
  std::map<std::string, std::int64_t, std::less<>> min_counts_;  // per group with a gang minimum
};

}  // namespace extender::state
