#pragma once
// Dynamic Resource Allocation objects (resource.k8s.io/v1) as the daemon reads them: ResourceSlice
// devices (attributes and capacity, names fully qualified "<domain>/<name>", an unqualified name
// taking the slice driver's domain), ResourceClaims (requests, allocation results, consumers),
// DeviceClasses (CEL selectors as text, extended resource name) and the DRA fields of a Pod.
// Decoded by `wire/dra_objects.h`. Plain value types; thread-safe to share once built.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "extender/common/quantity.h"

namespace extender::model {

inline constexpr const char* kNvidiaGpuDriver = "gpu.nvidia.com";

struct DraAttribute {
  enum class Kind { kInt, kBool, kString, kVersion };
  Kind kind = Kind::kString;
  std::int64_t int_value = 0;
  bool bool_value = false;
  std::string text;  // kString and kVersion
  bool operator==(const DraAttribute&) const = default;
};

struct DraDevice {
  std::string name;
  std::map<std::string, DraAttribute, std::less<>> attributes;  // qualified name -> value
  std::map<std::string, Quantity, std::less<>> capacity;        // qualified name -> value
  bool operator==(const DraDevice&) const = default;
};

struct ResourceSlice {
  std::string name;  // metadata.name
  std::string driver;
  std::string node_name;  // empty: not node-local (node selector or all nodes)
  std::string pool;
  std::int64_t pool_generation = 0;
  std::int64_t pool_slice_count = 1;  // resourceSliceCount
  std::vector<DraDevice> devices;
  bool operator==(const ResourceSlice&) const = default;
};

// One way to satisfy a request (spec.devices.requests[].exactly, or one of its firstAvailable).
struct DeviceRequestSpec {
  std::string name;          // the request's name (or the subrequest's)
  std::string device_class;  // deviceClassName
  bool all = false;          // allocationMode All (else ExactCount)
  std::int64_t count = 1;    // ExactCount
  bool admin_access = false;
  std::vector<std::string> selectors;  // CEL expressions
  bool operator==(const DeviceRequestSpec&) const = default;
};

struct DeviceRequest {
  std::string name;
  std::optional<DeviceRequestSpec> exactly;
  std::vector<DeviceRequestSpec> first_available;  // alternatives, in order of preference
  bool operator==(const DeviceRequest&) const = default;
};

struct DeviceResult {
  std::string request;
  std::string driver;
  std::string pool;
  std::string device;
  bool admin_access = false;
  bool operator==(const DeviceResult&) const = default;
};

struct ClaimConsumer {
  std::string resource;  // "pods"
  std::string name;
  std::string uid;
  bool operator==(const ClaimConsumer&) const = default;
};

struct ResourceClaim {
  std::string uid;
  std::string namespace_name;
  std::string name;
  bool terminating = false;
  std::vector<DeviceRequest> requests;
  bool allocated = false;  // status.allocation present
  std::vector<DeviceResult> results;
  std::vector<ClaimConsumer> reserved_for;
  bool operator==(const ResourceClaim&) const = default;
};

struct DeviceClass {
  std::string name;
  std::vector<std::string> selectors;  // CEL expressions
  std::string extended_resource_name;  // spec.extendedResourceName; empty when not set
  bool operator==(const DeviceClass&) const = default;
};

// A DeviceClass without extendedResourceName still backs "deviceclass.resource.kubernetes.io/<name>".
inline constexpr const char* kImplicitExtendedResourcePrefix = "deviceclass.resource.kubernetes.io/";

// The DRA fields of a Pod: spec.resourceClaims, status.resourceClaimStatuses and
// status.extendedResourceClaimStatus (the claim kube-scheduler made for DRA-backed extended resources).
struct PodClaimRef {
  std::string name;
  std::string claim_name;     // resourceClaimName (spec), or the generated name (status)
  std::string template_name;  // resourceClaimTemplateName (spec only)
  bool operator==(const PodClaimRef&) const = default;
};

struct ExtendedResourceMapping {
  std::string container;
  std::string resource;
  std::string request;
  bool operator==(const ExtendedResourceMapping&) const = default;
};

struct PodDra {
  std::vector<PodClaimRef> claims;          // spec.resourceClaims
  std::vector<PodClaimRef> claim_statuses;  // status.resourceClaimStatuses
  std::string extended_claim;               // status.extendedResourceClaimStatus.resourceClaimName
  std::vector<ExtendedResourceMapping> extended_mappings;
  bool operator==(const PodDra&) const = default;
};

}  // namespace extender::model
