#pragma once
// Decoders for the resource.k8s.io/v1 objects (ResourceSlice, ResourceClaim, DeviceClass) and the
// DRA fields of a Pod, from nlohmann::json as watch events carry them. Same rules as
// k8s_objects.h: keys case-insensitive, `null` equals absent, unknown fields ignored, a field of
// the wrong type an error naming its path. Hostile input is bounded (the limits below, a little
// above the API server's own) and fails with an error, never a crash. Pure; thread-safe.
#include <cstddef>

#include <nlohmann/json_fwd.hpp>

#include "extender/common/result.h"
#include "extender/model/dra.h"

namespace extender::wire {

struct DraLimits {
  std::size_t devices_per_slice = 512;
  std::size_t attributes_per_device = 64;  // attributes and capacities, counted together
  std::size_t requests_per_claim = 64;
  std::size_t subrequests = 16;
  std::size_t selectors = 64;
  std::size_t results = 1024;
  std::size_t reserved_for = 512;
  std::size_t pod_claims = 256;
  std::size_t name_bytes = 512;    // names, qualified attribute names, identifiers
  std::size_t value_bytes = 1024;  // string and version attribute values
  std::size_t expression_bytes = 16384;
  std::int64_t max_count = 1 << 20;
};

Result<model::ResourceSlice> decode_resource_slice(const nlohmann::json& slice, const DraLimits& limits = {});
Result<model::ResourceClaim> decode_resource_claim(const nlohmann::json& claim, const DraLimits& limits = {});
Result<model::DeviceClass> decode_device_class(const nlohmann::json& cls, const DraLimits& limits = {});
// Reads only the DRA fields of a Pod object (spec.resourceClaims, status.resourceClaimStatuses,
// status.extendedResourceClaimStatus).
Result<model::PodDra> decode_pod_dra(const nlohmann::json& pod, const DraLimits& limits = {});

}  // namespace extender::wire
