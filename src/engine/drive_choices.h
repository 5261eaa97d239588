#pragma once
// The drives a pod's csi-baremetal volumes would take on the nodes /filter passed, for the
// reservation csi-baremetal's CreateVolume reads (engine::DriveReserver). Private to the engine;
// pure functions of their arguments.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "extender/common/clock.h"
#include "extender/engine/ports.h"
#include "extender/model/demand.h"
#include "extender/policy/dra_fit.h"
#include "extender/state/cluster_state.h"
#include "extender/wire/results.h"

namespace extender::engine {

// Whether the pod has a csi-baremetal volume whose claim no node holds yet.
bool wants_drives(const model::PodDemand& demand);

// For each passed node (names[i] for i in `passed`) the placements of those volumes, as the fit
// there chooses them; a node where the fit no longer holds is left out.
std::vector<DriveChoice> drive_choices(const model::PodDemand& demand, const policy::DraFit* dra,
                                       const state::Snapshot& snapshot, std::span<const std::string_view> names,
                                       std::span<const std::uint32_t> passed, TimePoint now);

// Reserves through `drives` the drives of the passed nodes and keeps in `passed` those the
// reservation holds, the others recorded in r.failed; the filter's error when that failed.
std::optional<std::string> hold_drives(DriveReserver& drives, const model::PodDemand& demand, const policy::DraFit* dra,
                                       const state::Snapshot& snapshot, std::span<const std::string_view> names,
                                       std::vector<std::uint32_t>& passed, wire::FilterResult& r, TimePoint now);

}  // namespace extender::engine
