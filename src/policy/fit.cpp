#include "extender/policy/fit.h"

#include "extender/policy/drive_plan.h"

#include "extender/common/quantity.h"
#include "extender/model/gpu_availability.h"
#include "extender/policy/local_volumes.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <span>

namespace extender::policy {
namespace {

using model::NodeSupply;
using model::NodeUsage;
using model::PodDemand;
using model::Pool;
using model::VolumeDemand;
using model::VolumePlacement;

using Kind = FitReason::Kind;

struct Findings {
  std::optional<FitReason> unresolvable;
  std::optional<FitReason> insufficient;

  void fail(Verdict v, FitReason reason) {
    auto& slot = v == Verdict::kUnresolvable ? unresolvable : insufficient;
    if (!slot) slot = std::move(reason);
  }
};

// A resource's GPU figures on the node being checked (model::GpuResourceAvailability), or none.
using GpuFigures = std::function<std::optional<model::GpuResourceAvailability>(std::string_view resource)>;

void check_gpus(const PodDemand& pod, const GpuFigures& figures, Findings& f) {
  for (const auto& [resource, need] : pod.gpus) {
    const auto r = figures(resource);
    if (r && r->problem) {
      f.fail(Verdict::kUnresolvable, {Kind::kInvalidValue, resource, 0, 0, 0, std::string(*r->problem)});
      continue;
    }
    const std::int64_t allocatable = r ? r->allocatable : 0;
    if (allocatable < need) {
      f.fail(Verdict::kUnresolvable, {Kind::kGpusNotAllocatable, resource, need, allocatable, 0, {}});
      continue;
    }
    if (r->free < need) {
      f.fail(Verdict::kInsufficient,
             {Kind::kGpusNotFree, resource, need, std::max<std::int64_t>(r->free, 0), allocatable, {}});
    }
  }
}

void check_gpu_share(const PodDemand& pod, const NodeSupply& node, const NodeUsage& usage, Findings& f) {
  if (pod.gpu_share_bytes <= 0) return;
  const std::string& resource = pod.gpu_share_resource;
  const std::int64_t need = pod.gpu_share_bytes;
  const auto& d = node.gpu_devices;
  if (auto p = node.problems.find(resource); p != node.problems.end()) {
    f.fail(Verdict::kUnresolvable, {Kind::kInvalidValue, resource, 0, 0, 0, p->second});
    return;
  }
  if (d.count <= 0) {
    f.fail(Verdict::kUnresolvable, {Kind::kShareNoGpu, resource, need, 0, 0, {}});
    return;
  }
  if (d.memory_bytes <= 0) {
    f.fail(Verdict::kUnresolvable, {Kind::kShareNoGpuMemory, resource, need, 0, 0, {}});
    return;
  }
  if (d.memory_bytes < pod.gpu_share_bytes) {
    f.fail(Verdict::kUnresolvable, {Kind::kShareGpuTooSmall, resource, need, 0, d.memory_bytes, {}});
    return;
  }
  const GpuNodeView view = gpu_view(node, usage);
  const std::int64_t largest = view.free.empty() ? 0 : *std::max_element(view.free.begin(), view.free.end());
  if (largest < pod.gpu_share_bytes) {
    f.fail(Verdict::kInsufficient, {Kind::kShareNoRoom, resource, need, largest, d.memory_bytes, {}});
  }
  if (pod.gpu_memory_floor_bytes && d.memory_bytes < *pod.gpu_memory_floor_bytes) {
    f.fail(Verdict::kUnresolvable,
           {Kind::kMemoryFloorTooSmall, resource, *pod.gpu_memory_floor_bytes, d.memory_bytes, 0, {}});
  }
}

void check_gpu_memory(const PodDemand& pod, const GpuFigures& figures, Findings& f) {
  if (!pod.gpu_memory_floor_bytes) return;
  std::int64_t floor = *pod.gpu_memory_floor_bytes;
  for (const auto& [resource, need] : pod.gpus) {
    const auto r = figures(resource);
    if (!r || !r->memory_bytes) {
      f.fail(Verdict::kUnresolvable, {Kind::kMemoryFloorUnknown, resource, floor, 0, 0, {}});
    } else if (*r->memory_bytes < floor) {
      f.fail(Verdict::kUnresolvable, {Kind::kMemoryFloorTooSmall, resource, floor, *r->memory_bytes, 0, {}});
    }
  }
}

Fit verdict_of(Findings& f) {
  if (f.unresolvable) return {Verdict::kUnresolvable, std::move(*f.unresolvable), {}};
  if (f.insufficient) return {Verdict::kInsufficient, std::move(*f.insufficient), {}};
  return {};
}

FitReason pool_shortage(const Pool& pool, std::int64_t need, std::int64_t free) {
  return {Kind::kPoolShort, pool.name, need, std::max<std::int64_t>(free, 0), pool.capacity_bytes, {}};
}

// Places the volumes bound for a pool of local PersistentVolumes, each on one whole volume.
bool place_on_local_volumes(const PodDemand& pod, const Pool& pool, const std::vector<const VolumeDemand*>& volumes,
                            const NodeUsage& usage, std::vector<VolumePlacement>& out, Findings& f) {
  std::vector<LocalVolumeOffer> offers;
  offers.reserve(pool.devices.size());
  std::int64_t free_count = 0;
  for (const auto& d : pool.devices) {
    offers.push_back(
        {d.name, {}, d.capacity_bytes, d.access_modes, d.block, usage.device_used(pool.name, d.name) <= 0});
    free_count += offers.back().free;
  }
  std::vector<LocalVolumeAsk> asks;
  asks.reserve(volumes.size());
  for (const auto* v : volumes) asks.push_back({{}, v->bytes, v->access_modes, v->block, v->bound_volume});
  const auto chosen = match_local_volumes(asks, offers);
  for (std::size_t k = 0; k < volumes.size(); ++k) {
    if (chosen[k]) continue;
    f.fail(Verdict::kUnresolvable, {Kind::kNoLocalVolume, pool.name, volumes[k]->bytes, free_count,
                                    static_cast<std::int64_t>(pool.devices.size()), volumes[k]->volume});
    return false;
  }
  for (std::size_t k = 0; k < volumes.size(); ++k) {
    const VolumeDemand& v = *volumes[k];
    const model::Device& d = pool.devices[*chosen[k]];
    out.push_back({v.volume, pool.name, d.name, d.capacity_bytes, v.claim, v.ephemeral ? pod.uid : std::string()});
  }
  return true;
}

// Places the volumes bound for pools of csi-baremetal drives and volume groups as one drive plan
// (one pool, or the media pools an ANY request draws from, in their order); `subject` names them
// in a finding. A drive some placement already carves holds a volume group; one taken whole has
// no room left.
bool place_on_drives(const PodDemand& pod, std::span<const Pool* const> pools, const std::string& subject,
                     const std::vector<const VolumeDemand*>& volumes, const NodeUsage& usage,
                     std::vector<VolumePlacement>& out, Findings& f) {
  std::vector<DriveOffer> offers;
  std::vector<std::pair<const Pool*, const model::Device*>> offered;
  for (const Pool* pool : pools) {
    const model::PoolDeviceUse on_devices(usage, pool->name);
    for (const auto& d : pool->devices) {
      const std::int64_t used = on_devices.used(d.name);
      offers.push_back({d.name, d.drive_class, std::max<std::int64_t>(d.capacity_bytes - used, 0), used > 0});
      offered.emplace_back(pool, &d);
    }
  }
  std::vector<DriveAsk> asks;
  asks.reserve(volumes.size());
  for (const auto* v : volumes) asks.push_back({v->drive_class, v->bytes});
  const DrivePlan plan = plan_drives(asks, offers);
  if (!plan.fits) {
    const bool freeable =
        std::any_of(pools.begin(), pools.end(), [&](const Pool* p) { return usage.pool_freeable_bytes(p->name) > 0; });
    f.fail(freeable ? Verdict::kInsufficient : Verdict::kUnresolvable, {Kind::kNoDrive, subject, 0, 0, 0, plan.reason});
    return false;
  }
  for (std::size_t k = 0; k < volumes.size(); ++k) {
    const VolumeDemand& v = *volumes[k];
    const auto [pool, d] = offered[*plan.taken[k]];
    const bool whole = !volume_group_media(v.drive_class);
    out.push_back({v.volume, pool->name, d->name, whole ? d->capacity_bytes : extent_aligned(v.bytes), v.claim,
                   v.ephemeral ? pod.uid : std::string()});
  }
  return true;
}

// The volumes of an ANY pool (any_class_pools), planned with those of the media pools it draws
// from; the media pools so planned are added to `joined`.
void place_any_class(const PodDemand& pod, const NodeSupply& node, const std::string& any_pool,
                     const std::map<std::string, std::vector<const VolumeDemand*>, std::less<>>& by_pool,
                     const NodeUsage& usage, std::vector<VolumePlacement>& out, Findings& f,
                     std::set<std::string>& joined) {
  std::vector<const Pool*> pools;
  std::vector<const VolumeDemand*> volumes = by_pool.find(any_pool)->second;
  std::int64_t need = 0;
  for (const std::string& media_pool : any_class_pools(any_pool)) {
    if (const Pool* p = node.find_pool(media_pool); p && p->drives) pools.push_back(p);
    if (auto it = by_pool.find(media_pool); it != by_pool.end()) {
      volumes.insert(volumes.end(), it->second.begin(), it->second.end());
      joined.insert(media_pool);
    }
  }
  if (pools.empty()) {
    for (const auto* v : volumes) need = saturating_add(need, v->bytes);
    f.fail(Verdict::kUnresolvable, {Kind::kNoSuchPool, any_pool, need, 0, 0, {}});
    return;
  }
  place_on_drives(pod, pools, any_pool, volumes, usage, out, f);
}

// Places the volumes bound for one pool; returns false (with a finding) when they do not fit. A
// shortage that evicting other pods' generic ephemeral volumes would cover is kInsufficient
// (preemption may help); any other is kUnresolvable (evicting a pod frees no persistent volume).
bool place_in_pool(const PodDemand& pod, const Pool& pool, std::vector<const VolumeDemand*> volumes,
                   const NodeUsage& usage, std::vector<VolumePlacement>& out, Findings& f) {
  if (pool.whole_devices) return place_on_local_volumes(pod, pool, volumes, usage, out, f);
  if (pool.drives) {
    const Pool* one[] = {&pool};
    return place_on_drives(pod, one, pool.name, volumes, usage, out, f);
  }
  std::int64_t need = 0;
  for (const auto* v : volumes) {
    if (pool.max_volume_bytes > 0 && v->bytes > pool.max_volume_bytes) {
      f.fail(Verdict::kUnresolvable, {Kind::kVolumeTooLarge, pool.name, v->bytes, pool.max_volume_bytes, 0, v->volume});
      return false;
    }
    need = saturating_add(need, v->bytes);
  }
  std::stable_sort(volumes.begin(), volumes.end(), [](const auto* a, const auto* b) { return a->bytes > b->bytes; });
  std::vector<std::int64_t> sizes;
  for (const auto* v : volumes) sizes.push_back(v->bytes);
  std::vector<std::int64_t> free(pool.devices.size());
  std::vector<std::int64_t> reclaimable(pool.devices.size());
  for (size_t i = 0; i < pool.devices.size(); ++i) {
    free[i] = pool.devices[i].capacity_bytes - usage.device_used(pool.name, pool.devices[i].name);
    reclaimable[i] = saturating_add(free[i], usage.device_freeable_bytes(pool.name, pool.devices[i].name));
  }
  const std::int64_t pool_free = pool.capacity_bytes - usage.pool_used(pool.name);
  // Whether evicting other pods (their generic ephemeral volumes) would make room.
  auto freeable = [&] {
    if (need > saturating_add(pool_free, usage.pool_freeable_bytes(pool.name))) return false;
    if (pool.devices.empty()) return true;
    const auto if_evicted = model::best_fit_devices(reclaimable, sizes);
    return std::find(if_evicted.begin(), if_evicted.end(), std::nullopt) == if_evicted.end();
  };
  if (need > pool_free) {
    f.fail(freeable() ? Verdict::kInsufficient : Verdict::kUnresolvable, pool_shortage(pool, need, pool_free));
    return false;
  }
  auto placement = [&](const VolumeDemand& v, std::string device) {
    return VolumePlacement{v.volume, pool.name, std::move(device),
                           v.bytes,  v.claim,   v.ephemeral ? pod.uid : std::string()};
  };
  if (pool.devices.empty()) {
    for (const auto* v : volumes) out.push_back(placement(*v, ""));
    return true;
  }
  const std::int64_t largest = *std::max_element(free.begin(), free.end());
  const auto chosen = model::best_fit_devices(free, sizes);
  for (std::size_t k = 0; k < volumes.size(); ++k) {
    if (!chosen[k]) {
      f.fail(freeable() ? Verdict::kInsufficient : Verdict::kUnresolvable,
             {Kind::kVolumeNoDevice, pool.name, volumes[k]->bytes, std::max<std::int64_t>(largest, 0), 0,
              volumes[k]->volume});
      return false;
    }
    out.push_back(placement(*volumes[k], pool.devices[*chosen[k]].name));
  }
  return true;
}

void check_volumes(const PodDemand& pod, const NodeSupply& node, const NodeUsage& usage, Findings& f,
                   std::vector<VolumePlacement>& placements) {
  if (pod.volumes.empty()) return;
  for (const auto& v : pod.volumes) {
    if (!v.held_on.empty() && v.held_on != node.name) {
      f.fail(Verdict::kUnresolvable, {Kind::kVolumeHeldElsewhere, v.volume, 0, 0, 0, v.held_on});
      return;
    }
  }
  if (auto p = node.problems.find(model::kStorageSubject); p != node.problems.end()) {
    f.fail(Verdict::kUnresolvable, {Kind::kInvalidValue, "storage", 0, 0, 0, p->second});
    return;
  }
  std::map<std::string, std::vector<const VolumeDemand*>, std::less<>> by_pool;
  for (const auto& v : pod.volumes) by_pool[v.pool].push_back(&v);
  std::set<std::string> joined;
  for (const auto& [pool_name, volumes] : by_pool) {
    if (!any_class_pools(pool_name).empty()) {
      place_any_class(pod, node, pool_name, by_pool, usage, placements, f, joined);
    }
  }
  for (const auto& [pool_name, volumes] : by_pool) {
    if (joined.count(pool_name) || !any_class_pools(pool_name).empty()) continue;
    const Pool* pool = node.find_pool(pool_name);
    if (!pool) {
      std::int64_t need = 0;
      for (const auto* v : volumes) need = saturating_add(need, v->bytes);
      f.fail(Verdict::kUnresolvable, {Kind::kNoSuchPool, pool_name, need, 0, 0, {}});
      continue;
    }
    place_in_pool(pod, *pool, volumes, usage, placements, f);
  }
}

}  // namespace

std::string format_bytes(std::int64_t bytes) {
  constexpr std::int64_t kMiB = std::int64_t{1} << 20;
  constexpr std::int64_t kGiB = std::int64_t{1} << 30;
  char buf[64];
  if (bytes < kGiB) {
    if (bytes % kMiB == 0) {
      std::snprintf(buf, sizeof buf, "%" PRId64 " MiB", bytes / kMiB);
    } else {
      std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / kMiB);
    }
  } else if (bytes % kGiB == 0) {
    std::snprintf(buf, sizeof buf, "%" PRId64 " GiB", bytes / kGiB);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / kGiB);
  }
  return buf;
}

std::string format_reason(const FitReason& r) {
  const std::string& s = r.subject;
  auto share_need = [&] { return s + ": pod needs " + format_bytes(r.need) + " of one GPU, "; };
  switch (r.kind) {
    case Kind::kNone: return {};
    case Kind::kInvalidValue: return s + ": node reports an invalid value (" + r.detail + ")";
    case Kind::kGpusNotAllocatable:
      return s + ": pod needs " + std::to_string(r.need) + ", node has " +
             (r.have <= 0 ? std::string("none") : std::to_string(r.have) + " allocatable");
    case Kind::kGpusNotFree:
      return s + ": pod needs " + std::to_string(r.need) + ", node has " + std::to_string(r.have) + " free of " +
             std::to_string(r.total);
    case Kind::kShareNoGpu: return share_need() + "node has no GPU";
    case Kind::kShareNoGpuMemory: return share_need() + "node reports no GPU memory";
    case Kind::kShareGpuTooSmall: return share_need() + "node's GPUs have " + format_bytes(r.total);
    case Kind::kShareNoRoom:
      return share_need() + "largest free GPU has " + format_bytes(r.have) + " of " + format_bytes(r.total);
    case Kind::kMemoryFloorUnknown:
      return s + ": pod needs " + format_bytes(r.need) + " per GPU, node reports no GPU memory";
    case Kind::kMemoryFloorTooSmall:
      return s + ": pod needs " + format_bytes(r.need) + " per GPU, node's GPUs have " + format_bytes(r.have);
    case Kind::kPoolShort:
      return "pool " + s + ": pod needs " + format_bytes(r.need) + ", node has " + format_bytes(r.have) + " free of " +
             format_bytes(r.total);
    case Kind::kVolumeNoDevice:
      return "pool " + s + ": volume " + r.detail + " needs " + format_bytes(r.need) +
             " on one device, largest free device has " + format_bytes(r.have);
    case Kind::kVolumeHeldElsewhere: return "volume " + s + ": its claim is held on node " + r.detail;
    case Kind::kNoSuchPool: return "pool " + s + ": pod needs " + format_bytes(r.need) + ", node has no such pool";
    case Kind::kVolumeTooLarge:
      return "pool " + s + ": volume " + r.detail + " needs " + format_bytes(r.need) +
             ", the node's largest volume is " + format_bytes(r.have);
    case Kind::kNoLocalVolume:
      return "pool " + s + ": volume " + r.detail + " needs a free local PersistentVolume of " + format_bytes(r.need) +
             " with its access modes, node has " + std::to_string(r.have) + " free of " + std::to_string(r.total);
    case Kind::kDraTooFewDevices: return r.detail;
    case Kind::kNoDrive: return "pool " + s + ": " + r.detail;
  }
  return {};
}

bool asks_whole_gpus_only(const PodDemand& pod) {
  return !pod.gpus.empty() && pod.gpu_share_bytes <= 0 && pod.volumes.empty();
}

Fit check_whole_gpus(const PodDemand& pod, std::span<const model::GpuResourceAvailability> gpus) {
  const GpuFigures figures = [&](std::string_view resource) -> std::optional<model::GpuResourceAvailability> {
    if (const auto* r = model::find_gpu_resource(gpus, resource)) return *r;
    return std::nullopt;
  };
  Findings f;
  check_gpus(pod, figures, f);
  check_gpu_memory(pod, figures, f);
  return verdict_of(f);
}

Fit check_fit(const PodDemand& pod, const NodeSupply& node, const NodeUsage& usage, const GpuPlacement& gpu) {
  Findings f;
  Fit fit;
  const GpuFigures figures = [&](std::string_view resource) {
    return model::gpu_resource_availability(node, usage, resource);
  };
  check_gpus(pod, figures, f);
  check_gpu_share(pod, node, usage, f);
  check_gpu_memory(pod, figures, f);
  check_volumes(pod, node, usage, f, fit.allocation.volumes);
  if (f.unresolvable || f.insufficient) return verdict_of(f);
  if (gpu.verdict_only) return fit;
  fit.allocation.gpus = pod.gpus;
  fit.allocation.cpu_milli = pod.cpu_milli;
  fit.allocation.memory_bytes = pod.memory_bytes;
  fit.allocation.pods = 1;
  if (pod.needs_gpu() && node.gpu_devices.count > 0) {
    static const ShapeMix kNoMix;
    auto holds = choose_devices(pod, node, gpu_view(node, usage), gpu.strategy, gpu.mix ? *gpu.mix : kNoMix);
    if (holds) fit.allocation.gpu_devices = std::move(*holds);
  }
  return fit;
}

}  // namespace extender::policy
