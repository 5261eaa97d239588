#pragma once
// A PodGroup (scheduling.k8s.io/v1beta1, KEP-4671), as far as the daemon cares: its gang's
// minimum, and kube-scheduler's verdict on its latest cycle (the PodGroupInitiallyScheduled
// condition). Plain data.
#include <cstdint>
#include <string>

namespace extender::model {

struct PodGroup {
  std::string namespace_name;
  std::string name;
  std::int64_t min_count = 0;  // spec.schedulingPolicy.gang.minCount; 0: not a gang (basic policy)
  // status.conditions[type=PodGroupInitiallyScheduled]: "True", "False" or "" (none yet).
  std::string scheduled;
  std::string reason;  // "Scheduled", "Unschedulable", "SchedulerError"
  std::string message;
  std::string since;  // its lastTransitionTime, as written

  std::string key() const { return namespace_name + "/" + name; }
  bool operator==(const PodGroup&) const = default;
};

}  // namespace extender::model
