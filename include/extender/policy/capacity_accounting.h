#pragma once
// The accounting rule for pools whose free space a storage driver publishes (CSIStorageCapacity).
// The published figure is the driver's free space as of its last update. A claim placed on the
// node (reserved by a bind here, or seen selected there with volume.kubernetes.io/selected-node)
// whose volume the figure cannot yet reflect is subtracted from it; one the figure already
// reflects is not, so nothing is subtracted twice.
//
// "Already reflected" is known from what the daemon observed, never from the driver's word:
// - a claim without a volume (in flight, selected, provisioning) is never reflected;
// - a claim whose volume the daemon saw appear (the claim bound to a PersistentVolume) at time V is
//   reflected once the daemon observes a change of the published figure strictly after V (the
//   provisioner creates the volume before the PersistentVolume, so a figure computed after V
//   counts it), or once `settle` has passed since V: external-provisioner re-reads the capacity at
//   least every poll interval and writes it when it changed, so after a poll that started after
//   the volume existed, either a change was observed or the figure already counted the volume.
// A figure republished before provisioning finished is observed before V and so reflects nothing
// that is subtracted; a slow provisioner keeps its claim without a volume, and so subtracted.
// After a restart (or on a standby that just started) volumes are first seen in the list, at
// that moment: each is subtracted until a later change or `settle` (over-counting, never under).
//
// A claim without a volume is counted only while it could be a scheduler's selection that is
// provisioning (any namespace user can write volume.kubernetes.io/selected-node on a claim):
// - not when it is larger than the pool could provision as one volume (the published
//   maximumVolumeSize when there is one, else the figure plus the claims it reflects), which no
//   scheduler that checks capacity selects;
// - not once `selected_hold` has passed since the daemon saw it selected there without a volume.
// Such a claim is "ignored" (neither subtracted nor reflected); one whose volume appears counts
// again, by the rule above.
// Pure; thread-safe.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "extender/common/clock.h"
#include "extender/model/pod_constraints.h"

namespace extender::policy {

struct CapacityRule {
  // At least the driver's poll interval (external-provisioner --capacity-poll-interval, 1m by
  // default) plus the time its write takes to reach the daemon.
  std::chrono::milliseconds settle{120'000};
  // How long a claim selected for the node without a volume counts: kube-scheduler's VolumeBinding
  // waits this long (bindTimeoutSeconds, 600 s) for its claims to bind before it gives up.
  std::chrono::milliseconds selected_hold{600'000};
};

struct CapacityClaim {
  std::string id;                        // namespace/name, for people
  std::int64_t bytes = 0;                // its requested size
  std::optional<TimePoint> volume_seen;  // when its volume was seen, if it has one
  TimePoint selected{};                  // when it was seen selected for the node
};

struct PublishedCapacity {
  std::int64_t bytes = 0;
  // The last change of the figure the daemon saw happen (a watch event); nullopt when the figure
  // has only been listed (it may predate anything).
  std::optional<TimePoint> changed;
  std::int64_t max_volume_bytes = 0;  // the largest one volume may be; 0: no limit published
};

bool reflected(const CapacityClaim& claim, const PublishedCapacity& published, TimePoint now, const CapacityRule& rule);

struct CapacityAccount {
  std::int64_t published = 0;
  std::int64_t subtracted = 0;              // claims the figure cannot reflect yet
  std::int64_t reflected = 0;               // claims it already reflects
  std::int64_t free = 0;                    // published - subtracted (negative when over-committed)
  std::int64_t ignored = 0;                 // claims without a volume that are not counted (see above)
  std::vector<std::size_t> ignored_claims;  // their indexes in the claims accounted
  // When a subtracted claim settles or expires (the account changes with no event), if one will.
  std::optional<TimePoint> next_change;
};

CapacityAccount account(const PublishedCapacity& published, const std::vector<CapacityClaim>& claims, TimePoint now,
                        const CapacityRule& rule);

// A hand-written pool (a size the operator gave: no figure to reflect anything) counts its claims
// without a volume by the same bound and timeout, `largest` being the most one volume there could
// take (its largest device, or its capacity). The claims with a volume count; the account's
// `ignored` and `ignored_claims` are the others not counted, `subtracted` those counted, and
// `next_change` when the next of those stops counting.
CapacityAccount account_hand_written(std::int64_t largest, const std::vector<CapacityClaim>& claims, TimePoint now,
                                     const CapacityRule& rule);

// A CSIStorageCapacity's nodeTopology: nullopt selects no node (the field absent), an empty list
// every node, else the nodes whose labels meet every requirement (matchLabels as In).
bool topology_selects(const std::optional<std::vector<model::NodeSelectorRequirement>>& topology,
                      const model::StringMap& labels);

}  // namespace extender::policy
