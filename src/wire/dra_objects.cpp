#include "extender/wire/dra_objects.h"

#include <nlohmann/json.hpp>

#include "json_fields.h"

namespace extender::wire {
namespace {

using detail::at;
using detail::expect_array;
using detail::expect_object;
using detail::field;
using detail::read_bool;
using detail::read_int;
using detail::read_string;
using nlohmann::json;

Status read_bounded(const json* v, std::string& out, const std::string& path, std::size_t max) {
  EXTENDER_TRY(read_string(v, out, path));
  if (out.size() > max) return Error{path + ": longer than " + std::to_string(max) + " bytes"};
  return {};
}

Status require(const std::string& value, const std::string& path) {
  if (value.empty()) return Error{path + ": missing"};
  return {};
}

// An array (or absent) of at most `max` items.
Status bounded_array(const json* v, const std::string& path, std::size_t max) {
  EXTENDER_TRY(expect_array(v, path));
  if (v && v->size() > max) return Error{path + ": more than " + std::to_string(max) + " items"};
  return {};
}

std::string qualify(const std::string& name, const std::string& driver) {
  return name.find('/') == std::string::npos ? driver + "/" + name : name;
}

Status decode_attribute(const json& v, model::DraAttribute& out, const std::string& path, const DraLimits& limits) {
  EXTENDER_TRY(expect_object(&v, path));
  int kinds = 0;
  if (const json* i = field(v, "int")) {
    ++kinds;
    if (!i->is_number_integer() || (i->is_number_unsigned() && i->get<std::uint64_t>() > INT64_MAX)) {
      return Error{path + ".int: expected a 64-bit integer"};
    }
    out.kind = model::DraAttribute::Kind::kInt;
    out.int_value = i->get<std::int64_t>();
  }
  if (const json* b = field(v, "bool")) {
    ++kinds;
    out.kind = model::DraAttribute::Kind::kBool;
    EXTENDER_TRY(read_bool(b, out.bool_value, path + ".bool"));
  }
  if (const json* s = field(v, "string")) {
    ++kinds;
    out.kind = model::DraAttribute::Kind::kString;
    EXTENDER_TRY(read_bounded(s, out.text, path + ".string", limits.value_bytes));
  }
  if (const json* s = field(v, "version")) {
    ++kinds;
    out.kind = model::DraAttribute::Kind::kVersion;
    EXTENDER_TRY(read_bounded(s, out.text, path + ".version", limits.value_bytes));
  }
  if (kinds != 1) return Error{path + ": expected exactly one of int, bool, string, version"};
  return {};
}

Status decode_device(const json& d, const std::string& driver, model::DraDevice& out, const std::string& path,
                     const DraLimits& limits) {
  EXTENDER_TRY(expect_object(&d, path));
  EXTENDER_TRY(read_bounded(field(d, "name"), out.name, path + ".name", limits.name_bytes));
  EXTENDER_TRY(require(out.name, path + ".name"));
  const json* attributes = field(d, "attributes");
  const json* capacity = field(d, "capacity");
  EXTENDER_TRY(expect_object(attributes, path + ".attributes"));
  EXTENDER_TRY(expect_object(capacity, path + ".capacity"));
  const std::size_t entries = (attributes ? attributes->size() : 0) + (capacity ? capacity->size() : 0);
  if (entries > limits.attributes_per_device) {
    return Error{path + ": more than " + std::to_string(limits.attributes_per_device) + " attributes and capacities"};
  }
  if (attributes) {
    for (auto it = attributes->begin(); it != attributes->end(); ++it) {
      const std::string item = path + ".attributes." + it.key();
      if (it.key().empty() || it.key().size() > limits.name_bytes) return Error{item + ": bad attribute name"};
      if (it.value().is_null()) continue;
      model::DraAttribute a;
      EXTENDER_TRY(decode_attribute(it.value(), a, item, limits));
      out.attributes[qualify(it.key(), driver)] = std::move(a);
    }
  }
  if (capacity) {
    for (auto it = capacity->begin(); it != capacity->end(); ++it) {
      const std::string item = path + ".capacity." + it.key();
      if (it.key().empty() || it.key().size() > limits.name_bytes) return Error{item + ": bad capacity name"};
      if (it.value().is_null()) continue;
      EXTENDER_TRY(expect_object(&it.value(), item));
      std::string text;
      const json* value = field(it.value(), "value");
      if (value && value->is_number()) {
        text = value->dump();
      } else {
        EXTENDER_TRY(read_bounded(value, text, item + ".value", limits.value_bytes));
      }
      EXTENDER_TRY(require(text, item + ".value"));
      auto q = Quantity::parse(text);
      if (!q) return Error{item + ".value: " + q.message()};
      out.capacity[qualify(it.key(), driver)] = *q;
    }
  }
  return {};
}

Status decode_selectors(const json* list, std::vector<std::string>& out, const std::string& path,
                        const DraLimits& limits) {
  EXTENDER_TRY(bounded_array(list, path, limits.selectors));
  if (!list) return {};
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& s = (*list)[i];
    EXTENDER_TRY(expect_object(&s, at(path, i)));
    const json* cel = field(s, "cel");
    EXTENDER_TRY(expect_object(cel, at(path, i) + ".cel"));
    if (!cel) return Error{at(path, i) + ": a selector other than cel"};
    std::string expression;
    EXTENDER_TRY(
        read_bounded(field(*cel, "expression"), expression, at(path, i) + ".cel.expression", limits.expression_bytes));
    EXTENDER_TRY(require(expression, at(path, i) + ".cel.expression"));
    out.push_back(std::move(expression));
  }
  return {};
}

Status decode_request_spec(const json& r, model::DeviceRequestSpec& out, const std::string& path,
                           const DraLimits& limits) {
  EXTENDER_TRY(expect_object(&r, path));
  EXTENDER_TRY(read_bounded(field(r, "name"), out.name, path + ".name", limits.name_bytes));
  EXTENDER_TRY(
      read_bounded(field(r, "deviceClassName"), out.device_class, path + ".deviceClassName", limits.name_bytes));
  EXTENDER_TRY(require(out.device_class, path + ".deviceClassName"));
  std::string mode;
  EXTENDER_TRY(read_bounded(field(r, "allocationMode"), mode, path + ".allocationMode", limits.name_bytes));
  if (mode == "All") {
    out.all = true;
  } else if (!mode.empty() && mode != "ExactCount") {
    return Error{path + ".allocationMode: unknown mode \"" + mode + "\""};
  }
  if (const json* count = field(r, "count")) {
    std::int64_t n = 0;
    EXTENDER_TRY(read_int(count, n, path + ".count"));
    if (n < 1 || n > limits.max_count) {
      return Error{path + ".count: " + std::to_string(n) + " is outside 1.." + std::to_string(limits.max_count)};
    }
    out.count = n;
  }
  EXTENDER_TRY(read_bool(field(r, "adminAccess"), out.admin_access, path + ".adminAccess"));
  return decode_selectors(field(r, "selectors"), out.selectors, path + ".selectors", limits);
}

Status decode_request(const json& r, model::DeviceRequest& out, const std::string& path, const DraLimits& limits) {
  EXTENDER_TRY(expect_object(&r, path));
  EXTENDER_TRY(read_bounded(field(r, "name"), out.name, path + ".name", limits.name_bytes));
  EXTENDER_TRY(require(out.name, path + ".name"));
  const json* exactly = field(r, "exactly");
  const json* first = field(r, "firstAvailable");
  if ((exactly != nullptr) == (first != nullptr)) {
    return Error{path + ": expected exactly one of exactly, firstAvailable"};
  }
  if (exactly) {
    model::DeviceRequestSpec spec;
    EXTENDER_TRY(decode_request_spec(*exactly, spec, path + ".exactly", limits));
    spec.name = out.name;
    out.exactly = std::move(spec);
    return {};
  }
  EXTENDER_TRY(bounded_array(first, path + ".firstAvailable", limits.subrequests));
  if (first->empty()) return Error{path + ".firstAvailable: empty"};
  for (std::size_t i = 0; i < first->size(); ++i) {
    model::DeviceRequestSpec spec;
    EXTENDER_TRY(decode_request_spec((*first)[i], spec, at(path + ".firstAvailable", i), limits));
    out.first_available.push_back(std::move(spec));
  }
  return {};
}

struct Meta {
  std::string uid, name, namespace_name;
  bool terminating = false;
};

Status decode_meta(const json& object, Meta& out, const DraLimits& limits) {
  const json* meta = field(object, "metadata");
  EXTENDER_TRY(expect_object(meta, "metadata"));
  if (!meta) return {};
  EXTENDER_TRY(read_bounded(field(*meta, "uid"), out.uid, "metadata.uid", limits.name_bytes));
  EXTENDER_TRY(read_bounded(field(*meta, "name"), out.name, "metadata.name", limits.name_bytes));
  EXTENDER_TRY(read_bounded(field(*meta, "namespace"), out.namespace_name, "metadata.namespace", limits.name_bytes));
  out.terminating = field(*meta, "deletionTimestamp") != nullptr;
  return {};
}

Status decode_results(const json& allocation, model::ResourceClaim& out, const DraLimits& limits) {
  const json* devices = field(allocation, "devices");
  EXTENDER_TRY(expect_object(devices, "status.allocation.devices"));
  if (!devices) return {};
  const json* results = field(*devices, "results");
  const std::string path = "status.allocation.devices.results";
  EXTENDER_TRY(bounded_array(results, path, limits.results));
  if (!results) return {};
  for (std::size_t i = 0; i < results->size(); ++i) {
    const json& r = (*results)[i];
    const std::string p = at(path, i);
    EXTENDER_TRY(expect_object(&r, p));
    model::DeviceResult result;
    EXTENDER_TRY(read_bounded(field(r, "request"), result.request, p + ".request", limits.name_bytes));
    EXTENDER_TRY(read_bounded(field(r, "driver"), result.driver, p + ".driver", limits.name_bytes));
    EXTENDER_TRY(read_bounded(field(r, "pool"), result.pool, p + ".pool", limits.name_bytes));
    EXTENDER_TRY(read_bounded(field(r, "device"), result.device, p + ".device", limits.name_bytes));
    EXTENDER_TRY(require(result.driver, p + ".driver"));
    EXTENDER_TRY(require(result.pool, p + ".pool"));
    EXTENDER_TRY(require(result.device, p + ".device"));
    EXTENDER_TRY(read_bool(field(r, "adminAccess"), result.admin_access, p + ".adminAccess"));
    out.results.push_back(std::move(result));
  }
  return {};
}

Status decode_claim_refs(const json* list, std::vector<model::PodClaimRef>& out, const std::string& path,
                         const DraLimits& limits) {
  EXTENDER_TRY(bounded_array(list, path, limits.pod_claims));
  if (!list) return {};
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& c = (*list)[i];
    const std::string p = at(path, i);
    EXTENDER_TRY(expect_object(&c, p));
    model::PodClaimRef ref;
    EXTENDER_TRY(read_bounded(field(c, "name"), ref.name, p + ".name", limits.name_bytes));
    EXTENDER_TRY(
        read_bounded(field(c, "resourceClaimName"), ref.claim_name, p + ".resourceClaimName", limits.name_bytes));
    EXTENDER_TRY(read_bounded(field(c, "resourceClaimTemplateName"), ref.template_name,
                              p + ".resourceClaimTemplateName", limits.name_bytes));
    out.push_back(std::move(ref));
  }
  return {};
}

}  // namespace

Result<model::ResourceSlice> decode_resource_slice(const json& slice, const DraLimits& limits) {
  model::ResourceSlice out;
  EXTENDER_TRY(expect_object(&slice, "ResourceSlice"));
  Meta meta;
  EXTENDER_TRY(decode_meta(slice, meta, limits));
  out.name = meta.name;
  const json* spec = field(slice, "spec");
  EXTENDER_TRY(expect_object(spec, "spec"));
  if (!spec) return Error{"spec: missing"};
  EXTENDER_TRY(read_bounded(field(*spec, "driver"), out.driver, "spec.driver", limits.name_bytes));
  EXTENDER_TRY(require(out.driver, "spec.driver"));
  EXTENDER_TRY(read_bounded(field(*spec, "nodeName"), out.node_name, "spec.nodeName", limits.name_bytes));
  const json* pool = field(*spec, "pool");
  EXTENDER_TRY(expect_object(pool, "spec.pool"));
  if (!pool) return Error{"spec.pool: missing"};
  EXTENDER_TRY(read_bounded(field(*pool, "name"), out.pool, "spec.pool.name", limits.name_bytes));
  EXTENDER_TRY(require(out.pool, "spec.pool.name"));
  EXTENDER_TRY(read_int(field(*pool, "generation"), out.pool_generation, "spec.pool.generation"));
  EXTENDER_TRY(read_int(field(*pool, "resourceSliceCount"), out.pool_slice_count, "spec.pool.resourceSliceCount"));
  if (out.pool_generation < 0) return Error{"spec.pool.generation: negative"};
  if (out.pool_slice_count < 1 || out.pool_slice_count > limits.max_count) {
    return Error{"spec.pool.resourceSliceCount: " + std::to_string(out.pool_slice_count) + " is outside 1.." +
                 std::to_string(limits.max_count)};
  }
  const json* devices = field(*spec, "devices");
  EXTENDER_TRY(bounded_array(devices, "spec.devices", limits.devices_per_slice));
  if (devices) {
    for (std::size_t i = 0; i < devices->size(); ++i) {
      model::DraDevice d;
      EXTENDER_TRY(decode_device((*devices)[i], out.driver, d, at("spec.devices", i), limits));
      for (const auto& seen : out.devices) {
        if (seen.name == d.name) return Error{at("spec.devices", i) + ".name: \"" + d.name + "\" listed twice"};
      }
      out.devices.push_back(std::move(d));
    }
  }
  return out;
}

Result<model::ResourceClaim> decode_resource_claim(const json& claim, const DraLimits& limits) {
  model::ResourceClaim out;
  EXTENDER_TRY(expect_object(&claim, "ResourceClaim"));
  Meta meta;
  EXTENDER_TRY(decode_meta(claim, meta, limits));
  out.uid = meta.uid;
  out.name = meta.name;
  out.namespace_name = meta.namespace_name;
  out.terminating = meta.terminating;
  if (const json* spec = field(claim, "spec")) {
    EXTENDER_TRY(expect_object(spec, "spec"));
    const json* devices = field(*spec, "devices");
    EXTENDER_TRY(expect_object(devices, "spec.devices"));
    const json* requests = devices ? field(*devices, "requests") : nullptr;
    EXTENDER_TRY(bounded_array(requests, "spec.devices.requests", limits.requests_per_claim));
    if (requests) {
      for (std::size_t i = 0; i < requests->size(); ++i) {
        model::DeviceRequest r;
        EXTENDER_TRY(decode_request((*requests)[i], r, at("spec.devices.requests", i), limits));
        out.requests.push_back(std::move(r));
      }
    }
  }
  if (const json* status = field(claim, "status")) {
    EXTENDER_TRY(expect_object(status, "status"));
    if (const json* allocation = field(*status, "allocation")) {
      EXTENDER_TRY(expect_object(allocation, "status.allocation"));
      out.allocated = true;
      EXTENDER_TRY(decode_results(*allocation, out, limits));
    }
    const json* reserved = field(*status, "reservedFor");
    EXTENDER_TRY(bounded_array(reserved, "status.reservedFor", limits.reserved_for));
    if (reserved) {
      for (std::size_t i = 0; i < reserved->size(); ++i) {
        const json& c = (*reserved)[i];
        const std::string p = at("status.reservedFor", i);
        EXTENDER_TRY(expect_object(&c, p));
        model::ClaimConsumer consumer;
        EXTENDER_TRY(read_bounded(field(c, "resource"), consumer.resource, p + ".resource", limits.name_bytes));
        EXTENDER_TRY(read_bounded(field(c, "name"), consumer.name, p + ".name", limits.name_bytes));
        EXTENDER_TRY(read_bounded(field(c, "uid"), consumer.uid, p + ".uid", limits.name_bytes));
        out.reserved_for.push_back(std::move(consumer));
      }
    }
  }
  return out;
}

Result<model::DeviceClass> decode_device_class(const json& cls, const DraLimits& limits) {
  model::DeviceClass out;
  EXTENDER_TRY(expect_object(&cls, "DeviceClass"));
  Meta meta;
  EXTENDER_TRY(decode_meta(cls, meta, limits));
  out.name = meta.name;
  if (const json* spec = field(cls, "spec")) {
    EXTENDER_TRY(expect_object(spec, "spec"));
    EXTENDER_TRY(decode_selectors(field(*spec, "selectors"), out.selectors, "spec.selectors", limits));
    EXTENDER_TRY(read_bounded(field(*spec, "extendedResourceName"), out.extended_resource_name,
                              "spec.extendedResourceName", limits.name_bytes));
  }
  return out;
}

Result<model::PodDra> decode_pod_dra(const json& pod, const DraLimits& limits) {
  model::PodDra out;
  EXTENDER_TRY(expect_object(&pod, "Pod"));
  if (const json* spec = field(pod, "spec")) {
    EXTENDER_TRY(expect_object(spec, "Pod.spec"));
    EXTENDER_TRY(decode_claim_refs(field(*spec, "resourceClaims"), out.claims, "Pod.spec.resourceClaims", limits));
  }
  const json* status = field(pod, "status");
  EXTENDER_TRY(expect_object(status, "Pod.status"));
  if (!status) return out;
  EXTENDER_TRY(decode_claim_refs(field(*status, "resourceClaimStatuses"), out.claim_statuses,
                                 "Pod.status.resourceClaimStatuses", limits));
  const json* ext = field(*status, "extendedResourceClaimStatus");
  const std::string path = "Pod.status.extendedResourceClaimStatus";
  EXTENDER_TRY(expect_object(ext, path));
  if (!ext) return out;
  EXTENDER_TRY(read_bounded(field(*ext, "resourceClaimName"), out.extended_claim, path + ".resourceClaimName",
                            limits.name_bytes));
  const json* mappings = field(*ext, "requestMappings");
  EXTENDER_TRY(bounded_array(mappings, path + ".requestMappings", limits.pod_claims));
  if (!mappings) return out;
  for (std::size_t i = 0; i < mappings->size(); ++i) {
    const json& m = (*mappings)[i];
    const std::string p = at(path + ".requestMappings", i);
    EXTENDER_TRY(expect_object(&m, p));
    model::ExtendedResourceMapping mapping;
    EXTENDER_TRY(read_bounded(field(m, "containerName"), mapping.container, p + ".containerName", limits.name_bytes));
    EXTENDER_TRY(read_bounded(field(m, "resourceName"), mapping.resource, p + ".resourceName", limits.name_bytes));
    EXTENDER_TRY(read_bounded(field(m, "requestName"), mapping.request, p + ".requestName", limits.name_bytes));
    out.extended_mappings.push_back(std::move(mapping));
  }
  return out;
}

}  // namespace extender::wire
