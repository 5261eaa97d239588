#pragma once
// Pod: the fields of a Kubernetes Pod that scheduling decisions read, decoded by `wire` (request
// bodies) or `kube` (watch streams). Quantities stay as text here; `demand.h` interprets them.
// Plain value types; thread-safe to share once built.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "extender/model/pod_constraints.h"
#include "extender/model/string_map.h"

namespace extender::model {

struct Container {
  std::string name;
  StringMap requests;  // resource name -> quantity text
  StringMap limits;
  bool restart_always = false;  // init container with restartPolicy: Always (a sidecar)
};

struct PodVolume {
  enum class Kind { kOther, kClaim, kEphemeral };
  std::string name;
  Kind kind = Kind::kOther;
  std::string claim_name;                      // kClaim: spec.volumes[].persistentVolumeClaim.claimName
  std::optional<std::string> storage_class;    // kEphemeral: the claim template's storageClassName
  std::optional<std::string> storage_request;  // kEphemeral: the template's resources.requests.storage
};

struct Pod {
  std::string uid;
  std::string name;
  std::string namespace_name;
  StringMap annotations;
  std::string node_name;                             // spec.nodeName; empty while pending
  std::string scheduler_name = "default-scheduler";  // spec.schedulerName (absent: default-scheduler)
  std::string phase;                                 // status.phase
  std::string nominated_node;                        // status.nominatedNodeName: where an earlier preemption made room
  std::string pod_group;     // spec.schedulingGroup.podGroupName: its PodGroup, in its namespace
  bool terminating = false;  // metadata.deletionTimestamp set
  std::int64_t priority = 0;
  std::vector<Container> init_containers;
  std::vector<Container> containers;
  StringMap overhead;
  std::vector<PodVolume> volumes;
  PodConstraints constraints;  // nodeSelector, required node affinity, tolerations

  std::string display_name() const { return namespace_name + "/" + name; }
};

}  // namespace extender::model
