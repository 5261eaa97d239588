#pragma once
// Decoders for Kubernetes objects held as nlohmann::json (small documents: pods in request bodies,
// watch events, victims). Keys match case-insensitively, `null` equals absent, unknown fields are
// ignored; a field of the wrong type is an error naming its path. Pure; thread-safe.
#include <nlohmann/json_fwd.hpp>

#include "extender/common/result.h"
#include "extender/model/demand.h"
#include "extender/model/node.h"
#include "extender/model/pod.h"
#include "extender/model/pod_group.h"

namespace extender::wire {

Result<model::Pod> decode_pod(const nlohmann::json& pod);
Result<model::Node> decode_node(const nlohmann::json& node);
// A PodGroup of scheduling.k8s.io/v1beta1: its gang's minCount and its PodGroupInitiallyScheduled condition.
Result<model::PodGroup> decode_pod_group(const nlohmann::json& group);

// A PersistentVolumeClaim: namespace/name, class, requested size, bound state, selected node.
struct Claim {
  std::string uid;
  std::string namespace_name;
  std::string name;
  std::string selected_node;  // annotation volume.kubernetes.io/selected-node
  std::string device;         // annotation scheduler-extender.io/device (written at bind)
  std::string owner_pod_uid;  // the controlling Pod owner (a generic ephemeral volume's claim)
  bool terminating = false;
  model::ClaimInfo info;
};
Result<Claim> decode_claim(const nlohmann::json& pvc);

// The claim annotation that records which device of a pool holds the claim's volume.
inline constexpr const char* kDeviceAnnotation = "scheduler-extender.io/device";

}  // namespace extender::wire
