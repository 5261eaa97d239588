#include "extender/wire/storage_objects.h"

#include <nlohmann/json.hpp>

#include "extender/common/quantity.h"
#include "json_fields.h"
#include "pod_constraints_decoder.h"

namespace extender::wire {
namespace {

using detail::field;
using detail::read_string;
using detail::read_string_map;
using nlohmann::json;

Status read_quantity(const json* v, std::optional<std::int64_t>& out, std::string_view path) {
  if (!v || v->is_null()) return {};
  std::string text;
  if (v->is_number_integer()) {
    text = std::to_string(v->get<std::int64_t>());
  } else {
    EXTENDER_TRY(read_string(v, text, path));
  }
  auto bytes = parse_count(text, std::string(path));
  if (!bytes) return bytes.error();
  out = *bytes;
  return {};
}

Status read_topology(const json* v, std::optional<std::vector<model::NodeSelectorRequirement>>& out) {
  if (!v || v->is_null()) return {};
  EXTENDER_TRY(detail::expect_object(v, "nodeTopology"));
  auto& reqs = out.emplace();
  model::StringMap labels;
  EXTENDER_TRY(read_string_map(field(*v, "matchLabels"), labels, "nodeTopology.matchLabels"));
  for (const auto& [key, value] : labels) reqs.push_back({key, "In", {value}});
  return detail::read_requirements(field(*v, "matchExpressions"), reqs, "nodeTopology.matchExpressions");
}

Status read_name(const json& object, std::string_view kind, std::string& name, std::string* ns) {
  EXTENDER_TRY(detail::expect_object(&object, kind));
  const json* meta = field(object, "metadata");
  EXTENDER_TRY(detail::expect_object(meta, "metadata"));
  if (!meta) return {};
  EXTENDER_TRY(read_string(field(*meta, "name"), name, "metadata.name"));
  if (ns) EXTENDER_TRY(read_string(field(*meta, "namespace"), *ns, "metadata.namespace"));
  return {};
}

}  // namespace

Result<CsiDriver> decode_csi_driver(const json& driver) {
  CsiDriver out;
  EXTENDER_TRY(read_name(driver, "CSIDriver", out.name, nullptr));
  const json* spec = field(driver, "spec");
  EXTENDER_TRY(detail::expect_object(spec, "spec"));
  if (spec) EXTENDER_TRY(detail::read_bool(field(*spec, "storageCapacity"), out.storage_capacity, "spec.storageCapacity"));
  return out;
}

Result<StorageCapacity> decode_storage_capacity(const json& capacity) {
  StorageCapacity out;
  std::string name, ns;
  EXTENDER_TRY(read_name(capacity, "CSIStorageCapacity", name, &ns));
  out.key = ns + "/" + name;
  EXTENDER_TRY(read_string(field(capacity, "storageClassName"), out.storage_class, "storageClassName"));
  EXTENDER_TRY(read_topology(field(capacity, "nodeTopology"), out.topology));
  EXTENDER_TRY(read_quantity(field(capacity, "capacity"), out.capacity_bytes, "capacity"));
  EXTENDER_TRY(read_quantity(field(capacity, "maximumVolumeSize"), out.max_volume_bytes, "maximumVolumeSize"));
  return out;
}

Result<StorageClass> decode_storage_class(const json& sc) {
  StorageClass out;
  EXTENDER_TRY(read_name(sc, "StorageClass", out.name, nullptr));
  if (const json* meta = field(sc, "metadata")) {
    model::StringMap annotations;
    EXTENDER_TRY(read_string_map(field(*meta, "annotations"), annotations, "metadata.annotations"));
    for (const char* key : {"storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"}) {
      if (auto it = annotations.find(key); it != annotations.end() && it->second == "true") out.is_default = true;
    }
  }
  EXTENDER_TRY(read_string(field(sc, "provisioner"), out.provisioner, "provisioner"));
  EXTENDER_TRY(read_string_map(field(sc, "parameters"), out.parameters, "parameters"));
  EXTENDER_TRY(read_string(field(sc, "volumeBindingMode"), out.binding_mode, "volumeBindingMode"));
  return out;
}

}  // namespace extender::wire
