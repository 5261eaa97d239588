#include "extender/model/demand.h"

#include <optional>

#include <algorithm>

#include "extender/common/quantity.h"

namespace extender::model {
namespace {

void claim_details(const ClaimInfo& info, VolumeDemand& v) {
  v.access_modes = info.access_modes;
  v.block = info.block;
  v.bound_volume = info.volume;
}

using Parse = Result<std::int64_t> (*)(std::string_view text, std::string_view what);

Result<std::int64_t> parse_milli(std::string_view text, std::string_view what) {
  auto q = Quantity::parse(text);
  if (!q || q->is_negative()) {
    return Error{std::string(what) + ": \"" + std::string(text.substr(0, 32)) + "\" is not a quantity"};
  }
  return q->milli_ceil();
}

Result<std::int64_t> container_request(const Container& c, std::string_view resource, Parse parse) {
  const StringMap* source = &c.requests;
  auto it = c.requests.find(resource);
  if (it == c.requests.end()) {
    it = c.limits.find(resource);
    if (it == c.limits.end()) return std::int64_t{0};
    source = &c.limits;
  }
  std::string what =
      "container " + c.name + (source == &c.requests ? " requests " : " limits ") + std::string(resource);
  return parse(it->second, what);
}

Result<std::int64_t> request_of(const Pod& pod, std::string_view resource, Parse parse) {
  std::int64_t total = 0;
  for (const auto& c : pod.containers) {
    auto r = container_request(c, resource, parse);
    if (!r) return r.error();
    total = saturating_add(total, *r);
  }
  std::int64_t sidecars = 0;
  std::int64_t init_peak = 0;
  for (const auto& c : pod.init_containers) {
    auto r = container_request(c, resource, parse);
    if (!r) return r.error();
    if (c.restart_always) {
      sidecars = saturating_add(sidecars, *r);
      total = saturating_add(total, *r);
      init_peak = std::max(init_peak, sidecars);
    } else {
      init_peak = std::max(init_peak, saturating_add(*r, sidecars));
    }
  }
  total = std::max(total, init_peak);
  if (auto it = pod.overhead.find(resource); it != pod.overhead.end()) {
    auto r = parse(it->second, "overhead " + std::string(resource));
    if (!r) return r.error();
    total = saturating_add(total, *r);
  }
  return total;
}

}  // namespace

Result<std::int64_t> effective_request(const Pod& pod, std::string_view resource) {
  return request_of(pod, resource, parse_count);
}

Result<std::int64_t> effective_request_milli(const Pod& pod, std::string_view resource) {
  return request_of(pod, resource, parse_milli);
}

namespace {

// The whole GPUs, or the GPU share, the pod asks, and its GPU memory floor.
Status add_gpus(const Pod& pod, const DemandRules& rules, PodDemand& d) {
  for (const auto& resource : rules.gpu_resources) {
    auto n = effective_request(pod, resource);
    if (!n) return n.error();
    if (*n > 0) d.gpus[resource] = *n;
  }
  if (!rules.share.memory_resource.empty()) {
    auto units = effective_request(pod, rules.share.memory_resource);
    if (!units) return units.error();
    if (*units > 0) {
      if (!d.gpus.empty()) {
        return Error{"pod asks for whole GPUs and for " + rules.share.memory_resource +
                     " (a share of one GPU); ask one or the other"};
      }
      if (*units > INT64_MAX / rules.share.unit_bytes) {
        return Error{rules.share.memory_resource + ": request overflows"};
      }
      d.gpu_share_bytes = *units * rules.share.unit_bytes;
      d.gpu_share_resource = rules.share.memory_resource;
    }
  }
  if (d.needs_gpu() && !rules.gpu_memory_annotation.empty()) {
    if (auto it = pod.annotations.find(rules.gpu_memory_annotation); it != pod.annotations.end()) {
      auto bytes = parse_count(it->second, "annotation " + rules.gpu_memory_annotation);
      if (!bytes) return bytes.error();
      if (*bytes > 0) d.gpu_memory_floor_bytes = *bytes;
    }
  }
  return {};
}

// The storage type of a csi-baremetal class, else empty.
std::string drive_class_of(const DemandRules& rules, std::string_view cls) {
  auto it = rules.drive_class_by_class.find(cls);
  return it == rules.drive_class_by_class.end() ? std::string() : it->second;
}

// A csi-baremetal claim whose volume exists: the drive's AvailableCapacity no longer offers it.
bool provisioned_on_drive(const DemandRules& rules, std::string_view cls, const ClaimInfo& info) {
  return !info.volume.empty() && rules.drive_class_by_class.count(cls) > 0;
}

// A generic ephemeral volume, counted in its class's pool until its claim is bound to a volume.
Status add_ephemeral(const Pod& pod, const PodVolume& v, const DemandRules& rules, const ClaimLookup& claims,
                     PodDemand& d) {
  // The claim Kubernetes creates for it is named <pod>-<volume>; once it is placed, it is counted.
  const std::string claim_name = pod.name + "-" + v.name;
  std::optional<ClaimInfo> info = claims ? claims(pod.namespace_name, claim_name) : std::nullopt;
  if (info && info->bound && info->node.empty()) return {};  // bound to a volume: not counted here
  std::string cls = v.storage_class.value_or(rules.default_class);
  auto pool = rules.pool_by_class.find(cls);
  if (pool == rules.pool_by_class.end()) return {};
  if (info && provisioned_on_drive(rules, cls, *info)) return {};
  std::int64_t bytes = 0;
  if (v.storage_request) {
    auto b = parse_count(*v.storage_request, "volume " + v.name + " storage request");
    if (!b) return b.error();
    bytes = *b;
  }
  if (info && info->bound) bytes = info->bytes;
  d.volumes.push_back({v.name,
                       cls,
                       pool->second,
                       bytes,
                       false,
                       pod.namespace_name + "/" + claim_name,
                       true,
                       info && info->bound ? info->node : std::string(),
                       0,
                       false,
                       {},
                       drive_class_of(rules, cls)});
  if (info) claim_details(*info, d.volumes.back());
  return {};
}

// A PersistentVolumeClaim's volume; without a claim lookup (standalone), assumed of the default size.
Status add_claim(const Pod& pod, const PodVolume& v, const DemandRules& rules, const ClaimLookup& claims,
                 PodDemand& d) {
  const std::string claim_id = pod.namespace_name + "/" + v.claim_name;
  if (!claims) {
    d.volumes.push_back(
        {v.name, "", rules.default_pool, rules.default_claim_bytes, true, claim_id, false, "", 0, false, {}, {}});
    return {};
  }
  auto info = claims(pod.namespace_name, v.claim_name);
  if (!info) return Error{"persistentvolumeclaim " + claim_id + " is not known yet"};
  std::string cls = info->storage_class.empty() ? rules.default_class : info->storage_class;
  auto pool = rules.pool_by_class.find(cls);
  if (pool == rules.pool_by_class.end()) return {};
  if (info->bound && info->node.empty()) return {};  // bound to a volume: not counted here
  if (provisioned_on_drive(rules, cls, *info)) return {};
  std::string drive_class = drive_class_of(rules, cls);
  std::string pool_name = pool->second;
  if (!drive_class.empty() && !info->storage_group.empty()) pool_name += "/" + info->storage_group;
  d.volumes.push_back({v.name,
                       cls,
                       std::move(pool_name),
                       info->bytes,
                       false,
                       claim_id,
                       false,
                       info->bound ? info->node : "",
                       0,
                       false,
                       {},
                       std::move(drive_class)});
  claim_details(*info, d.volumes.back());
  return {};
}

}  // namespace

Result<PodDemand> compute_demand(const Pod& pod, const DemandRules& rules, const ClaimLookup& claims) {
  PodDemand d;
  d.uid = pod.uid;
  d.name = pod.name;
  d.namespace_name = pod.namespace_name;
  EXTENDER_TRY(add_gpus(pod, rules, d));
  for (const auto& v : pod.volumes) {
    if (v.kind == PodVolume::Kind::kEphemeral) {
      EXTENDER_TRY(add_ephemeral(pod, v, rules, claims, d));
    } else if (v.kind == PodVolume::Kind::kClaim) {
      EXTENDER_TRY(add_claim(pod, v, rules, claims, d));
    }
  }
  if (auto cpu = effective_request_milli(pod, "cpu")) d.cpu_milli = *cpu;
  if (auto memory = effective_request(pod, "memory")) d.memory_bytes = *memory;
  if (!d.needs_nothing()) d.constraints = pod.constraints;
  return d;
}

}  // namespace extender::model
