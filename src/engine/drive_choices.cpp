#include "drive_choices.h"

#include <algorithm>
#include <set>

namespace extender::engine {

namespace {

bool unplaced_drive_volume(const model::VolumeDemand& v) { return !v.drive_class.empty() && v.held_on.empty(); }

}  // namespace

bool wants_drives(const model::PodDemand& demand) {
  return std::any_of(demand.volumes.begin(), demand.volumes.end(), unplaced_drive_volume);
}

std::vector<DriveChoice> drive_choices(const model::PodDemand& demand,
                                       std::span<const FilterPass::PlacedVolumes> placed,
                                       std::span<const std::string_view> names, std::span<const std::uint32_t> passed) {
  std::set<std::string_view> volumes;
  for (const auto& v : demand.volumes) {
    if (unplaced_drive_volume(v)) volumes.insert(v.volume);
  }
  std::vector<DriveChoice> out;
  auto at = placed.begin();
  for (std::uint32_t i : passed) {
    at = std::lower_bound(at, placed.end(), i, [](const auto& p, std::uint32_t index) { return p.index < index; });
    if (at == placed.end()) break;
    if (at->index != i) continue;
    DriveChoice choice{std::string(names[i]), {}};
    for (const auto& volume : at->volumes) {
      if (volumes.count(volume.volume)) choice.volumes.push_back(volume);
    }
    out.push_back(std::move(choice));
  }
  return out;
}

std::optional<std::string> hold_drives(DriveReserver& drives, const model::PodDemand& demand,
                                       std::span<const FilterPass::PlacedVolumes> placed,
                                       std::span<const std::string_view> names, std::vector<std::uint32_t>& passed,
                                       wire::FilterResult& r) {
  const auto choices = drive_choices(demand, placed, names, passed);
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
