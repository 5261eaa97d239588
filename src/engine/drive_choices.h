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

#include "extender/engine/ports.h"
#include "extender/model/demand.h"
#include "extender/wire/results.h"
#include "filter_pass.h"

namespace extender::engine {

// Whether the pod has a csi-baremetal volume whose claim no node holds yet.
bool wants_drives(const model::PodDemand& demand);

// For each passed node (names[i] for i in `passed`) the placements of those volumes, as the
// filter's check chose them there (`placed`, by ascending index); a passed node without
// placements is left out.
std::vector<DriveChoice> drive_choices(const model::PodDemand& demand,
                                       std::span<const FilterPass::PlacedVolumes> placed,
                                       std::span<const std::string_view> names, std::span<const std::uint32_t> passed);

// Reserves through `drives` the drives of the passed nodes and keeps in `passed` those the
// reservation holds, the others recorded in r.failed; the filter's error when that failed.
std::optional<std::string> hold_drives(DriveReserver& drives, const model::PodDemand& demand,
                                       std::span<const FilterPass::PlacedVolumes> placed,
                                       std::span<const std::string_view> names, std::vector<std::uint32_t>& passed,
                                       wire::FilterResult& r);

}  // namespace extender::engine
