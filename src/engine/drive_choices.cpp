#include "drive_choices.h"

#include <algorithm>
#include <set>

#include "node_fit.h"

namespace extender::engine {

namespace {

bool unplaced_drive_volume(const model::VolumeDemand& v) { return !v.drive_class.empty() && v.held_on.empty(); }

}  // namespace

bool wants_drives(const model::PodDemand& demand) {
  return std::any_of(demand.volumes.begin(), demand.volumes.end(), unplaced_drive_volume);
}

std::vector<DriveChoice> drive_choices(const model::PodDemand& demand, const policy::DraFit* dra,
                                       const state::Snapshot& snapshot, std::span<const std::string_view> names,
                                       std::span<const std::uint32_t> passed, TimePoint now) {
  std::set<std::string_view> volumes;
  for (const auto& v : demand.volumes) {
    if (unplaced_drive_volume(v)) volumes.insert(v.volume);
  }
  std::vector<DriveChoice> out;
  for (std::uint32_t i : passed) {
    const state::NodeState* node = snapshot.find(names[i]);
    if (!node) continue;
    const policy::Fit fit = fit_on(dra, demand, node->supply, node->usage_for(demand, now), policy::GpuPlacement{});
    if (fit.verdict != policy::Verdict::kFits) continue;
    DriveChoice choice{node->supply.name, {}};
    for (const auto& placed : fit.allocation.volumes) {
      if (volumes.count(placed.volume)) choice.volumes.push_back(placed);
    }
    out.push_back(std::move(choice));
  }
  return out;
}

std::optional<std::string> hold_drives(DriveReserver& drives, const model::PodDemand& demand, const policy::DraFit* dra,
                                       const state::Snapshot& snapshot, std::span<const std::string_view> names,
                                       std::vector<std::uint32_t>& passed, wire::FilterResult& r, TimePoint now) {
  const auto choices = drive_choices(demand, dra, snapshot, names, passed, now);
  auto held = drives.reserve(demand, choices);
  if (!held) {
    return "pod " + demand.display_name() +
           ": the drives of its csi-baremetal volumes could not be reserved: " + held.message();
  }
  if (!held->only) return std::nullopt;
  const std::set<std::string_view> only(held->only->begin(), held->only->end());
  std::vector<std::uint32_t> kept;
  for (std::uint32_t i : passed) {
    if (only.count(names[i])) {
      kept.push_back(i);
    } else {
      r.failed.add(names[i], held->others_why);
    }
  }
  passed = std::move(kept);
  return std::nullopt;
}

}  // namespace extender::engine
