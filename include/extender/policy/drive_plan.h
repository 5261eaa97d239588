#pragma once
// Drive plans, with csi-baremetal's storage model: on one node, which AvailableCapacity (a free
// drive, or the free space of a logical volume group) each of a pod's volume requests takes.
// - A request of a drive class (HDD, SSD, NVME) takes a whole drive of that class: the smallest
//   free one that holds it; no drive serves two requests.
// - A request of a volume-group class (HDDLVG, SSDLVG, NVMELVG, SYSLVG) takes its size rounded up
//   to whole 4 MiB extents from a group of that class, the fullest one that still holds it (so
//   whole drives stay free); without one, from the smallest free drive of the group's media,
//   which becomes a group whose remaining space the next requests may use. SYSLVG has no drive.
// - A request of class ANY (csi-baremetal's default StorageClass) takes a whole drive too, the
//   first that holds it in csi-baremetal's order: HDD drives (smallest first), then SSD, then
//   NVME; never a volume group, nor a drive carved as one.
// - Volume-group requests are planned first, then drive requests of one class, then ANY requests
//   (so that one never takes a drive a request of that class needed); smaller before larger in each.
// Pure: no I/O, no locks, no JSON; thread-safe.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace extender::policy {

inline constexpr std::int64_t kVolumeGroupExtent = std::int64_t{4} << 20;
// The storage type of csi-baremetal's default StorageClass: a whole drive of any media.
inline constexpr std::string_view kAnyDriveClass = "ANY";

// The class's media when it is a volume-group class ("SSDLVG" -> "SSD"; "SYSLVG" -> "SYS"),
// else nullopt.
std::optional<std::string_view> volume_group_media(std::string_view storage_class);
// Whether it is one of the classes drive plans know (drives and volume groups).
bool drive_class_known(std::string_view storage_class);
// The storage type as csi-baremetal reads a StorageClass's storageType: upper-cased, and ANY
// when it is not one of its types (nor ANY).
std::string storage_type_of(std::string_view parameter);
// The pools an ANY request's pool stands for, in csi-baremetal's order: its name with each drive
// media in place of "ANY" ("csi-baremetal:ANY/g" -> "csi-baremetal:HDD/g", "csi-baremetal:SSD/g",
// "csi-baremetal:NVME/g"); empty when the name has no ":ANY" segment.
std::vector<std::string> any_class_pools(std::string_view pool);
// The size a volume-group volume takes: whole extents (saturating).
std::int64_t extent_aligned(std::int64_t bytes);

struct DriveOffer {
  std::string_view name;           // the AvailableCapacity's name
  std::string_view storage_class;  // HDD, SSD, NVME, HDDLVG, ...
  std::int64_t bytes = 0;          // free space (a drive: its size; a group: what is left)
  // A drive of a drive class that volumes already carve as a volume group (the drive's AC before
  // csi-baremetal turns it into a group's): it serves group requests of its media only.
  bool grouped = false;
};

struct DriveAsk {
  std::string_view storage_class;
  std::int64_t bytes = 0;
};

struct DrivePlan {
  // Per ask (in the asks' order): the index of the offer it takes; all set when the plan fits.
  std::vector<std::optional<std::size_t>> taken;
  bool fits = false;
  std::string reason;  // when it does not fit: the first ask that found no room, and why
};

DrivePlan plan_drives(std::span<const DriveAsk> asks, std::span<const DriveOffer> offers);

}  // namespace extender::policy
