#pragma once
// Pod groups in flight (docs/kubernetes.md, "Pod groups"): kube-scheduler filters a group's
// members one after another and publishes none of them before the whole group is permitted, so
// for a member that needs something only the daemon accounts, /filter narrows its answer to the one
// node the daemon ranks best and holds the member's demand there (state/in_flight_holds.h): the
// next member is judged with it, and no member is held on nodes it will not get. Pure choice plus
// one call into the holds; private to the engine.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "extender/common/clock.h"
#include "extender/model/demand.h"
#include "extender/model/pod.h"
#include "extender/policy/dra_fit.h"
#include "extender/policy/fit.h"
#include "extender/policy/score.h"
#include "extender/state/cluster_state.h"
#include "extender/state/in_flight_holds.h"

namespace extender::engine {

// Whether the pod's placement must be held while in flight: it names a pod group and needs
// something kube-scheduler cannot count itself (a volume still to be placed, a GPU share: memory
// of one GPU). Whole GPUs, CPU and memory kube-scheduler counts in its own cache; a per-GPU memory
// floor is a property of the node, which nothing in flight changes.
bool needs_group_hold(const model::Pod& pod, const model::PodDemand& demand);

// The pod's group as the holds name it: "namespace/name" of its PodGroup.
std::string group_key(const model::Pod& pod);

// The index (into `passed`) of the node the daemon ranks best for the pod, by the same scorers as
// /prioritize; ties go to the first. nullopt when none of them is in the snapshot.
std::optional<std::size_t> best_of(const model::PodDemand& demand, const state::Snapshot& snapshot,
                                   std::span<const std::string_view> names, std::span<const std::uint32_t> passed,
                                   const policy::ScoringRules& rules, const policy::ShapeMix& mix, TimePoint now);

// Narrows `passed` to its best node and holds the pod's fit there in `holds` (replacing the hold of
// its previous cycle); whether it did. With nothing passed, or when the best node no longer fits,
// `passed` stays as it is and the pod's previous hold is released. The group is "namespace/name".
bool narrow_and_hold(const model::Pod& pod, const model::PodDemand& demand, const policy::DraFit* dra,
                     const state::Snapshot& snapshot, std::span<const std::string_view> names,
                     std::vector<std::uint32_t>& passed, const policy::ScoringRules& rules,
                     const policy::GpuPlacement& gpu, const policy::ShapeMix& mix, state::InFlightHolds& holds,
                     TimePoint now);

}  // namespace extender::engine
