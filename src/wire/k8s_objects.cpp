#include "extender/wire/k8s_objects.h"

#include <nlohmann/json.hpp>

#include "extender/common/quantity.h"
#include "json_fields.h"
#include "pod_constraints_decoder.h"
#include "volume_modes.h"

namespace extender::wire {
namespace {

using detail::field;
using detail::read_bool;
using detail::read_int;
using detail::read_string;
using detail::read_string_map;
using nlohmann::json;

Status decode_container(const json& c, model::Container& out, const std::string& path) {
  EXTENDER_TRY(detail::expect_object(&c, path));
  EXTENDER_TRY(read_string(field(c, "name"), out.name, path + ".name"));
  const json* resources = field(c, "resources");
  EXTENDER_TRY(detail::expect_object(resources, path + ".resources"));
  if (resources) {
    EXTENDER_TRY(read_string_map(field(*resources, "requests"), out.requests, path + ".resources.requests", true));
    EXTENDER_TRY(read_string_map(field(*resources, "limits"), out.limits, path + ".resources.limits", true));
  }
  std::string restart_policy;
  EXTENDER_TRY(read_string(field(c, "restartPolicy"), restart_policy, path + ".restartPolicy"));
  out.restart_always = restart_policy == "Always";
  return {};
}

Status decode_containers(const json* list, std::vector<model::Container>& out, const std::string& path) {
  EXTENDER_TRY(detail::expect_array(list, path));
  if (!list) return {};
  for (size_t i = 0; i < list->size(); ++i) {
    model::Container c;
    EXTENDER_TRY(decode_container((*list)[i], c, path + "[" + std::to_string(i) + "]"));
    out.push_back(std::move(c));
  }
  return {};
}

Status decode_volume(const json& v, model::PodVolume& out, const std::string& path) {
  EXTENDER_TRY(detail::expect_object(&v, path));
  EXTENDER_TRY(read_string(field(v, "name"), out.name, path + ".name"));
  if (const json* pvc = field(v, "persistentVolumeClaim")) {
    EXTENDER_TRY(detail::expect_object(pvc, path + ".persistentVolumeClaim"));
    out.kind = model::PodVolume::Kind::kClaim;
    EXTENDER_TRY(read_string(field(*pvc, "claimName"), out.claim_name, path + ".persistentVolumeClaim.claimName"));
    return {};
  }
  const json* eph = field(v, "ephemeral");
  EXTENDER_TRY(detail::expect_object(eph, path + ".ephemeral"));
  if (!eph) return {};
  out.kind = model::PodVolume::Kind::kEphemeral;
  const json* tmpl = field(*eph, "volumeClaimTemplate");
  EXTENDER_TRY(detail::expect_object(tmpl, path + ".ephemeral.volumeClaimTemplate"));
  const json* spec = tmpl ? field(*tmpl, "spec") : nullptr;
  EXTENDER_TRY(detail::expect_object(spec, path + ".ephemeral.volumeClaimTemplate.spec"));
  if (!spec) return {};
  if (const json* cls = field(*spec, "storageClassName")) {
    std::string name;
    EXTENDER_TRY(read_string(cls, name, path + ".ephemeral.volumeClaimTemplate.spec.storageClassName"));
    out.storage_class = name;
  }
  const json* resources = field(*spec, "resources");
  EXTENDER_TRY(detail::expect_object(resources, path + ".ephemeral.volumeClaimTemplate.spec.resources"));
  if (resources) {
    model::StringMap requests;
    EXTENDER_TRY(read_string_map(field(*resources, "requests"), requests,
                                 path + ".ephemeral.volumeClaimTemplate.spec.resources.requests", true));
    if (auto it = requests.find("storage"); it != requests.end()) out.storage_request = it->second;
  }
  return {};
}

}  // namespace

Result<model::Pod> decode_pod(const json& pod) {
  model::Pod out;
  EXTENDER_TRY(detail::expect_object(&pod, "Pod"));
  if (const json* meta = field(pod, "metadata")) {
    EXTENDER_TRY(detail::expect_object(meta, "Pod.metadata"));
    EXTENDER_TRY(read_string(field(*meta, "uid"), out.uid, "Pod.metadata.uid"));
    EXTENDER_TRY(read_string(field(*meta, "name"), out.name, "Pod.metadata.name"));
    EXTENDER_TRY(read_string(field(*meta, "namespace"), out.namespace_name, "Pod.metadata.namespace"));
    EXTENDER_TRY(read_string_map(field(*meta, "annotations"), out.annotations, "Pod.metadata.annotations"));
    out.terminating = field(*meta, "deletionTimestamp") != nullptr;
  }
  if (const json* spec = field(pod, "spec")) {
    EXTENDER_TRY(detail::expect_object(spec, "Pod.spec"));
    EXTENDER_TRY(read_string(field(*spec, "nodeName"), out.node_name, "Pod.spec.nodeName"));
    EXTENDER_TRY(read_string(field(*spec, "schedulerName"), out.scheduler_name, "Pod.spec.schedulerName"));
    if (out.scheduler_name.empty()) out.scheduler_name = "default-scheduler";
    EXTENDER_TRY(read_int(field(*spec, "priority"), out.priority, "Pod.spec.priority"));
    EXTENDER_TRY(decode_containers(field(*spec, "containers"), out.containers, "Pod.spec.containers"));
    EXTENDER_TRY(decode_containers(field(*spec, "initContainers"), out.init_containers, "Pod.spec.initContainers"));
    EXTENDER_TRY(read_string_map(field(*spec, "overhead"), out.overhead, "Pod.spec.overhead", true));
    EXTENDER_TRY(detail::decode_pod_constraints(*spec, out.constraints));
    if (const json* group = field(*spec, "schedulingGroup")) {
      EXTENDER_TRY(detail::expect_object(group, "Pod.spec.schedulingGroup"));
      EXTENDER_TRY(read_string(field(*group, "podGroupName"), out.pod_group, "Pod.spec.schedulingGroup.podGroupName"));
    }
    const json* volumes = field(*spec, "volumes");
    EXTENDER_TRY(detail::expect_array(volumes, "Pod.spec.volumes"));
    if (volumes) {
      for (size_t i = 0; i < volumes->size(); ++i) {
        model::PodVolume v;
        EXTENDER_TRY(decode_volume((*volumes)[i], v, "Pod.spec.volumes[" + std::to_string(i) + "]"));
        out.volumes.push_back(std::move(v));
      }
    }
  }
  if (const json* status = field(pod, "status")) {
    EXTENDER_TRY(detail::expect_object(status, "Pod.status"));
    EXTENDER_TRY(read_string(field(*status, "phase"), out.phase, "Pod.status.phase"));
    EXTENDER_TRY(read_string(field(*status, "nominatedNodeName"), out.nominated_node, "Pod.status.nominatedNodeName"));
  }
  return out;
}

Result<model::PodGroup> decode_pod_group(const json& group) {
  model::PodGroup out;
  EXTENDER_TRY(detail::expect_object(&group, "PodGroup"));
  if (const json* meta = field(group, "metadata")) {
    EXTENDER_TRY(detail::expect_object(meta, "PodGroup.metadata"));
    EXTENDER_TRY(read_string(field(*meta, "name"), out.name, "PodGroup.metadata.name"));
    EXTENDER_TRY(read_string(field(*meta, "namespace"), out.namespace_name, "PodGroup.metadata.namespace"));
  }
  const json* spec = field(group, "spec");
  EXTENDER_TRY(detail::expect_object(spec, "PodGroup.spec"));
  const json* policy = spec ? field(*spec, "schedulingPolicy") : nullptr;
  EXTENDER_TRY(detail::expect_object(policy, "PodGroup.spec.schedulingPolicy"));
  const json* gang = policy ? field(*policy, "gang") : nullptr;
  EXTENDER_TRY(detail::expect_object(gang, "PodGroup.spec.schedulingPolicy.gang"));
  if (gang)
    EXTENDER_TRY(read_int(field(*gang, "minCount"), out.min_count, "PodGroup.spec.schedulingPolicy.gang.minCount"));
  const json* status = field(group, "status");
  EXTENDER_TRY(detail::expect_object(status, "PodGroup.status"));
  const json* conditions = status ? field(*status, "conditions") : nullptr;
  EXTENDER_TRY(detail::expect_array(conditions, "PodGroup.status.conditions"));
  if (!conditions) return out;
  for (const json& c : *conditions) {
    EXTENDER_TRY(detail::expect_object(&c, "PodGroup.status.conditions[]"));
    std::string type;
    EXTENDER_TRY(read_string(field(c, "type"), type, "PodGroup.status.conditions[].type"));
    if (type != "PodGroupInitiallyScheduled") continue;
    EXTENDER_TRY(read_string(field(c, "status"), out.scheduled, "PodGroup.status.conditions[].status"));
    EXTENDER_TRY(read_string(field(c, "reason"), out.reason, "PodGroup.status.conditions[].reason"));
    EXTENDER_TRY(read_string(field(c, "message"), out.message, "PodGroup.status.conditions[].message"));
    EXTENDER_TRY(
        read_string(field(c, "lastTransitionTime"), out.since, "PodGroup.status.conditions[].lastTransitionTime"));
  }
  return out;
}

Result<model::Node> decode_node(const json& node) {
  model::Node out;
  EXTENDER_TRY(detail::expect_object(&node, "Node"));
  if (const json* meta = field(node, "metadata")) {
    EXTENDER_TRY(detail::expect_object(meta, "Node.metadata"));
    EXTENDER_TRY(read_string(field(*meta, "name"), out.name, "Node.metadata.name"));
    EXTENDER_TRY(read_string(field(*meta, "uid"), out.uid, "Node.metadata.uid"));
    EXTENDER_TRY(read_string_map(field(*meta, "labels"), out.labels, "Node.metadata.labels"));
    EXTENDER_TRY(read_string_map(field(*meta, "annotations"), out.annotations, "Node.metadata.annotations"));
  }
  if (const json* spec = field(node, "spec")) {
    EXTENDER_TRY(detail::expect_object(spec, "Node.spec"));
    EXTENDER_TRY(read_bool(field(*spec, "unschedulable"), out.unschedulable, "Node.spec.unschedulable"));
    const json* taints = field(*spec, "taints");
    EXTENDER_TRY(detail::expect_array(taints, "Node.spec.taints"));
    if (taints) {
      for (const auto& t : *taints) {
        model::Taint taint;
        EXTENDER_TRY(detail::expect_object(&t, "Node.spec.taints[]"));
        EXTENDER_TRY(read_string(field(t, "key"), taint.key, "Node.spec.taints[].key"));
        EXTENDER_TRY(read_string(field(t, "value"), taint.value, "Node.spec.taints[].value"));
        EXTENDER_TRY(read_string(field(t, "effect"), taint.effect, "Node.spec.taints[].effect"));
        out.taints.push_back(std::move(taint));
      }
    }
  }
  if (const json* status = field(node, "status")) {
    EXTENDER_TRY(detail::expect_object(status, "Node.status"));
    EXTENDER_TRY(read_string_map(field(*status, "capacity"), out.capacity, "Node.status.capacity", true));
    EXTENDER_TRY(read_string_map(field(*status, "allocatable"), out.allocatable, "Node.status.allocatable", true));
  }
  return out;
}

Result<Claim> decode_claim(const json& pvc) {
  Claim out;
  EXTENDER_TRY(detail::expect_object(&pvc, "PersistentVolumeClaim"));
  if (const json* meta = field(pvc, "metadata")) {
    EXTENDER_TRY(detail::expect_object(meta, "metadata"));
    EXTENDER_TRY(read_string(field(*meta, "uid"), out.uid, "metadata.uid"));
    EXTENDER_TRY(read_string(field(*meta, "name"), out.name, "metadata.name"));
    EXTENDER_TRY(read_string(field(*meta, "namespace"), out.namespace_name, "metadata.namespace"));
    model::StringMap annotations;
    EXTENDER_TRY(read_string_map(field(*meta, "annotations"), annotations, "metadata.annotations"));
    if (auto it = annotations.find("volume.kubernetes.io/selected-node"); it != annotations.end()) {
      out.selected_node = it->second;
    }
    if (auto it = annotations.find(kDeviceAnnotation); it != annotations.end()) out.device = it->second;
    model::StringMap labels;
    EXTENDER_TRY(read_string_map(field(*meta, "labels"), labels, "metadata.labels"));
    if (auto it = labels.find(model::kStorageGroupLabel); it != labels.end()) out.info.storage_group = it->second;
    out.terminating = field(*meta, "deletionTimestamp") != nullptr;
    const json* owners = field(*meta, "ownerReferences");
    EXTENDER_TRY(detail::expect_array(owners, "metadata.ownerReferences"));
    if (owners) {
      for (const auto& owner : *owners) {
        if (!owner.is_object()) continue;
        std::string kind, uid;
        bool controller = false;
        EXTENDER_TRY(read_string(field(owner, "kind"), kind, "metadata.ownerReferences[].kind"));
        EXTENDER_TRY(read_string(field(owner, "uid"), uid, "metadata.ownerReferences[].uid"));
        if (const json* c = field(owner, "controller"); c && c->is_boolean()) controller = c->get<bool>();
        if (kind == "Pod" && controller) out.owner_pod_uid = uid;
      }
    }
  }
  if (const json* spec = field(pvc, "spec")) {
    EXTENDER_TRY(detail::expect_object(spec, "spec"));
    EXTENDER_TRY(read_string(field(*spec, "storageClassName"), out.info.storage_class, "spec.storageClassName"));
    std::string volume_name;
    EXTENDER_TRY(read_string(field(*spec, "volumeName"), volume_name, "spec.volumeName"));
    out.info.bound = !volume_name.empty();
    out.info.volume = volume_name;
    EXTENDER_TRY(detail::read_volume_modes(*spec, out.info.access_modes, out.info.block, "spec"));
    if (const json* resources = field(*spec, "resources")) {
      model::StringMap requests;
      EXTENDER_TRY(detail::expect_object(resources, "spec.resources"));
      EXTENDER_TRY(read_string_map(field(*resources, "requests"), requests, "spec.resources.requests", true));
      if (auto it = requests.find("storage"); it != requests.end()) {
        auto bytes = parse_count(it->second, "spec.resources.requests.storage");
        if (!bytes) return bytes.error();
        out.info.bytes = *bytes;
      }
    }
  }
  return out;
}

}  // namespace extender::wire
