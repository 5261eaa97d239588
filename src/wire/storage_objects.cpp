#include "extender/wire/storage_objects.h"

#include <nlohmann/json.hpp>

#include "extender/common/quantity.h"
#include "json_fields.h"
#include "pod_constraints_decoder.h"
#include "volume_modes.h"

namespace extender::wire {
namespace {

using detail::field;
using detail::read_name;
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

model::AccessMode access_mode(std::string_view name) {
  if (name == "ReadWriteOnce") return model::kReadWriteOnce;
  if (name == "ReadOnlyMany") return model::kReadOnlyMany;
  if (name == "ReadWriteMany") return model::kReadWriteMany;
  if (name == "ReadWriteOncePod") return model::kReadWriteOncePod;
  return model::AccessMode{0};
}

Status read_claim_ref(const json* ref, std::string& claim) {
  EXTENDER_TRY(detail::expect_object(ref, "spec.claimRef"));
  if (!ref) return {};
  std::string ns, name;
  EXTENDER_TRY(read_string(field(*ref, "namespace"), ns, "spec.claimRef.namespace"));
  EXTENDER_TRY(read_string(field(*ref, "name"), name, "spec.claimRef.name"));
  if (!name.empty()) claim = ns + "/" + name;
  return {};
}

}  // namespace

namespace detail {

Status read_volume_modes(const json& spec, std::uint8_t& access_modes, bool& block, std::string_view kind) {
  const std::string path = std::string(kind) + ".accessModes";
  const json* modes = field(spec, "accessModes");
  EXTENDER_TRY(expect_array(modes, path));
  if (modes) {
    for (const auto& m : *modes) {
      if (!m.is_string()) return Error{path + ": expected strings"};
      access_modes |= access_mode(m.get_ref<const std::string&>());
    }
  }
  std::string volume_mode;
  EXTENDER_TRY(read_string(field(spec, "volumeMode"), volume_mode, std::string(kind) + ".volumeMode"));
  block = volume_mode == "Block";
  return {};
}

}  // namespace detail

Result<model::PersistentVolume> decode_persistent_volume(const json& pv) {
  model::PersistentVolume out;
  EXTENDER_TRY(read_name(pv, "PersistentVolume", out.name, nullptr));
  if (const json* meta = field(pv, "metadata")) out.terminating = field(*meta, "deletionTimestamp") != nullptr;
  const json* spec = field(pv, "spec");
  EXTENDER_TRY(detail::expect_object(spec, "spec"));
  if (spec) {
    EXTENDER_TRY(read_string(field(*spec, "storageClassName"), out.storage_class, "spec.storageClassName"));
    const json* capacity = field(*spec, "capacity");
    EXTENDER_TRY(detail::expect_object(capacity, "spec.capacity"));
    std::optional<std::int64_t> bytes;
    if (capacity) EXTENDER_TRY(read_quantity(field(*capacity, "storage"), bytes, "spec.capacity.storage"));
    out.bytes = bytes.value_or(0);
    EXTENDER_TRY(detail::read_volume_modes(*spec, out.access_modes, out.block, "spec"));
    for (const char* kind : {"local", "hostPath"}) {
      const json* source = field(*spec, kind);
      EXTENDER_TRY(detail::expect_object(source, std::string("spec.") + kind));
      out.local = out.local || source != nullptr;
    }
    const json* affinity = field(*spec, "nodeAffinity");
    EXTENDER_TRY(detail::expect_object(affinity, "spec.nodeAffinity"));
    if (affinity) {
      EXTENDER_TRY(
          detail::read_node_selector(field(*affinity, "required"), out.node_affinity, "spec.nodeAffinity.required"));
    }
    EXTENDER_TRY(read_claim_ref(field(*spec, "claimRef"), out.claim));
  }
  const json* status = field(pv, "status");
  EXTENDER_TRY(detail::expect_object(status, "status"));
  if (status) EXTENDER_TRY(read_string(field(*status, "phase"), out.phase, "status.phase"));
  return out;
}

Result<CsiDriver> decode_csi_driver(const json& driver) {
  CsiDriver out;
  EXTENDER_TRY(read_name(driver, "CSIDriver", out.name, nullptr));
  const json* spec = field(driver, "spec");
  EXTENDER_TRY(detail::expect_object(spec, "spec"));
  if (spec) {
    EXTENDER_TRY(detail::read_bool(field(*spec, "storageCapacity"), out.storage_capacity, "spec.storageCapacity"));
  }
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
    for (const char* key :
         {"storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"}) {
      if (auto it = annotations.find(key); it != annotations.end() && it->second == "true") out.is_default = true;
    }
  }
  EXTENDER_TRY(read_string(field(sc, "provisioner"), out.provisioner, "provisioner"));
  EXTENDER_TRY(read_string_map(field(sc, "parameters"), out.parameters, "parameters"));
  EXTENDER_TRY(read_string(field(sc, "volumeBindingMode"), out.binding_mode, "volumeBindingMode"));
  return out;
}

}  // namespace extender::wire
