#include "extender/policy/drive_plan.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <numeric>

#include "extender/policy/fit.h"

namespace extender::policy {
namespace {

constexpr std::array<std::string_view, 3> kDriveClasses{"HDD", "SSD", "NVME"};
constexpr std::array<std::string_view, 4> kGroupClasses{"HDDLVG", "SSDLVG", "NVMELVG", "SYSLVG"};

// One offer as the plan sees it: its free space, and whether a drive has become a group.
struct Room {
  std::int64_t free = 0;
  std::string group_class;  // a drive turned into a group (by an earlier ask, or before); else empty
  bool taken_whole = false;
};

std::optional<std::size_t> pick(const std::vector<Room>& rooms, std::span<const DriveOffer> offers,
                                std::string_view storage_class, std::int64_t bytes, bool whole_drive) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < offers.size(); ++i) {
    const Room& room = rooms[i];
    if (room.taken_whole || room.free < bytes) continue;
    const std::string_view cls = room.group_class.empty() ? offers[i].storage_class : room.group_class;
    if (cls != storage_class || (whole_drive && !room.group_class.empty())) continue;
    if (!best || room.free < rooms[*best].free) best = i;
  }
  return best;
}

std::optional<std::size_t> place_in_group(std::vector<Room>& rooms, std::span<const DriveOffer> offers,
                                          const DriveAsk& ask) {
  const std::int64_t bytes = extent_aligned(ask.bytes);
  auto at = pick(rooms, offers, ask.storage_class, bytes, false);
  if (!at) {
    at = pick(rooms, offers, *volume_group_media(ask.storage_class), bytes, true);
    if (at) rooms[*at].group_class = std::string(ask.storage_class);
  }
  if (at) rooms[*at].free -= bytes;
  return at;
}

std::optional<std::size_t> place_on_drive(std::vector<Room>& rooms, std::span<const DriveOffer> offers,
                                          const DriveAsk& ask) {
  std::optional<std::size_t> at;
  if (ask.storage_class == kAnyDriveClass) {
    for (std::string_view media : kDriveClasses) {
      if ((at = pick(rooms, offers, media, ask.bytes, true))) break;
    }
  } else {
    at = pick(rooms, offers, ask.storage_class, ask.bytes, true);
  }
  if (at) rooms[*at].taken_whole = true;
  return at;
}

std::string no_room(const DriveAsk& ask) {
  std::string reason = "no " + std::string(ask.storage_class) + " capacity of " + format_bytes(ask.bytes);
  if (ask.storage_class == kAnyDriveClass) {
    reason += " (a free HDD, SSD or NVME drive)";
  } else if (!drive_class_known(ask.storage_class)) {
    reason += " (not a class of drives or volume groups)";
  }
  return reason;
}

}  // namespace

std::optional<std::string_view> volume_group_media(std::string_view storage_class) {
  if (std::find(kGroupClasses.begin(), kGroupClasses.end(), storage_class) == kGroupClasses.end()) return std::nullopt;
  return storage_class.substr(0, storage_class.size() - 3);
}

bool drive_class_known(std::string_view storage_class) {
  return volume_group_media(storage_class) ||
         std::find(kDriveClasses.begin(), kDriveClasses.end(), storage_class) != kDriveClasses.end();
}

std::string storage_type_of(std::string_view parameter) {
  std::string type(parameter);
  std::transform(type.begin(), type.end(), type.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  return drive_class_known(type) ? type : std::string(kAnyDriveClass);
}

std::vector<std::string> any_class_pools(std::string_view pool) {
  const std::string_view token = ":ANY";
  const auto at = pool.find(token);
  const auto end = at == std::string_view::npos ? at : at + token.size();
  if (at == std::string_view::npos || (end < pool.size() && pool[end] != '/')) return {};
  std::vector<std::string> out;
  for (std::string_view media : kDriveClasses) {
    out.push_back(std::string(pool.substr(0, at + 1)) + std::string(media) + std::string(pool.substr(end)));
  }
  return out;
}

std::int64_t extent_aligned(std::int64_t bytes) {
  if (bytes <= 0) return 0;
  const std::int64_t extents = bytes / kVolumeGroupExtent + (bytes % kVolumeGroupExtent != 0 ? 1 : 0);
  if (extents > std::numeric_limits<std::int64_t>::max() / kVolumeGroupExtent) {
    return std::numeric_limits<std::int64_t>::max();
  }
  return extents * kVolumeGroupExtent;
}

DrivePlan plan_drives(std::span<const DriveAsk> asks, std::span<const DriveOffer> offers) {
  std::vector<std::size_t> order(asks.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Volume groups first, then drives of one class, then ANY (which may take any media).
  auto rank = [&](std::size_t i) {
    if (volume_group_media(asks[i].storage_class)) return 0;
    return asks[i].storage_class == kAnyDriveClass ? 2 : 1;
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return asks[a].bytes < asks[b].bytes;
  });
  std::vector<Room> rooms(offers.size());
  for (std::size_t i = 0; i < offers.size(); ++i) {
    rooms[i].free = offers[i].bytes;
    if (offers[i].grouped && !volume_group_media(offers[i].storage_class)) {
      rooms[i].group_class = std::string(offers[i].storage_class) + "LVG";
    }
  }
  DrivePlan plan;
  plan.taken.assign(asks.size(), std::nullopt);
  for (std::size_t i : order) {
    const DriveAsk& ask = asks[i];
    plan.taken[i] =
        volume_group_media(ask.storage_class) ? place_in_group(rooms, offers, ask) : place_on_drive(rooms, offers, ask);
    if (!plan.taken[i]) {
      plan.reason = no_room(ask);
      return plan;
    }
  }
  plan.fits = true;
  return plan;
}

}  // namespace extender::policy
