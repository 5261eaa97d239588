#include "extender/wire/baremetal_objects.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "json_fields.h"

namespace extender::wire {
namespace {

using detail::at;
using detail::expect_array;
using detail::expect_object;
using detail::field;
using detail::read_int;
using detail::read_name;
using detail::read_string;
using detail::read_strings;
using nlohmann::json;

Status read_spec(const json& object, const json*& spec) {
  spec = field(object, "spec");
  return expect_object(spec, "spec");
}

Status read_request(const json& item, const std::string& path, CapacityRequest& out) {
  EXTENDER_TRY(expect_object(&item, path));
  const json* request = field(item, "CapacityRequest");
  const std::string request_path = path + ".CapacityRequest";
  EXTENDER_TRY(expect_object(request, request_path));
  if (request) {
    EXTENDER_TRY(read_string(field(*request, "Name"), out.name, request_path + ".Name"));
    EXTENDER_TRY(read_string(field(*request, "StorageClass"), out.storage_class, request_path + ".StorageClass"));
    EXTENDER_TRY(read_int(field(*request, "Size"), out.bytes, request_path + ".Size"));
    EXTENDER_TRY(read_string(field(*request, "StorageGroup"), out.storage_group, request_path + ".StorageGroup"));
  }
  return read_strings(field(item, "Reservations"), out.reservations, path + ".Reservations");
}

}  // namespace

Result<AvailableCapacity> decode_available_capacity(const json& ac) {
  AvailableCapacity out;
  EXTENDER_TRY(read_name(ac, "AvailableCapacity", out.name, nullptr));
  if (const json* meta = field(ac, "metadata")) {
    EXTENDER_TRY(detail::read_string_map(field(*meta, "labels"), out.labels, "metadata.labels"));
  }
  const json* spec = nullptr;
  EXTENDER_TRY(read_spec(ac, spec));
  if (!spec) return out;
  EXTENDER_TRY(read_string(field(*spec, "Location"), out.location, "spec.Location"));
  EXTENDER_TRY(read_string(field(*spec, "NodeId"), out.node_id, "spec.NodeId"));
  EXTENDER_TRY(read_string(field(*spec, "storageClass"), out.storage_class, "spec.storageClass"));
  EXTENDER_TRY(read_int(field(*spec, "Size"), out.bytes, "spec.Size"));
  out.bytes = std::max<std::int64_t>(out.bytes, 0);
  return out;
}

Result<CapacityReservation> decode_capacity_reservation(const json& acr) {
  CapacityReservation out;
  EXTENDER_TRY(read_name(acr, "AvailableCapacityReservation", out.name, nullptr));
  if (const json* meta = field(acr, "metadata")) {
    EXTENDER_TRY(read_string(field(*meta, "resourceVersion"), out.resource_version, "metadata.resourceVersion"));
  }
  const json* spec = nullptr;
  EXTENDER_TRY(read_spec(acr, spec));
  if (!spec) return out;
  EXTENDER_TRY(read_string(field(*spec, "Namespace"), out.pod_namespace, "spec.Namespace"));
  EXTENDER_TRY(read_string(field(*spec, "Status"), out.status, "spec.Status"));
  const json* nodes = field(*spec, "NodeRequests");
  EXTENDER_TRY(expect_object(nodes, "spec.NodeRequests"));
  if (nodes) {
    EXTENDER_TRY(read_strings(field(*nodes, "Requested"), out.requested_nodes, "spec.NodeRequests.Requested"));
    EXTENDER_TRY(read_strings(field(*nodes, "Reserved"), out.reserved_nodes, "spec.NodeRequests.Reserved"));
  }
  const json* requests = field(*spec, "ReservationRequests");
  EXTENDER_TRY(expect_array(requests, "spec.ReservationRequests"));
  if (!requests) return out;
  for (std::size_t i = 0; i < requests->size(); ++i) {
    EXTENDER_TRY(read_request((*requests)[i], at("spec.ReservationRequests", i), out.requests.emplace_back()));
  }
  return out;
}

json encode_capacity_reservation(const CapacityReservation& acr) {
  json requests = json::array();
  for (const CapacityRequest& r : acr.requests) {
    json request = {{"Name", r.name}, {"StorageClass", r.storage_class}, {"Size", r.bytes}};
    if (!r.storage_group.empty()) request["StorageGroup"] = r.storage_group;
    requests.push_back({{"CapacityRequest", std::move(request)}, {"Reservations", r.reservations}});
  }
  json metadata = {{"name", acr.name}};
  if (!acr.resource_version.empty()) metadata["resourceVersion"] = acr.resource_version;
  return {{"apiVersion", "csi-baremetal.dell.com/v1"},
          {"kind", "AvailableCapacityReservation"},
          {"metadata", std::move(metadata)},
          {"spec",
           {{"Namespace", acr.pod_namespace},
            {"Status", acr.status},
            {"NodeRequests", {{"Requested", acr.requested_nodes}, {"Reserved", acr.reserved_nodes}}},
            {"ReservationRequests", std::move(requests)}}}};
}

Result<BaremetalVolume> decode_baremetal_volume(const json& volume) {
  BaremetalVolume out;
  EXTENDER_TRY(read_name(volume, "Volume", out.name, nullptr));
  const json* spec = nullptr;
  EXTENDER_TRY(read_spec(volume, spec));
  if (!spec) return out;
  EXTENDER_TRY(read_string(field(*spec, "NodeId"), out.node_id, "spec.NodeId"));
  EXTENDER_TRY(read_string(field(*spec, "Location"), out.location, "spec.Location"));
  EXTENDER_TRY(read_string(field(*spec, "StorageClass"), out.storage_class, "spec.StorageClass"));
  EXTENDER_TRY(read_int(field(*spec, "Size"), out.bytes, "spec.Size"));
  EXTENDER_TRY(read_string(field(*spec, "CSIStatus"), out.csi_status, "spec.CSIStatus"));
  return out;
}

}  // namespace extender::wire
