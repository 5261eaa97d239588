#pragma once
// The small request bodies: ExtenderBindingArgs and ExtenderPreemptionArgs, decoded with
// nlohmann/json. Keys match case-insensitively, `null` equals absent, unknown fields are ignored;
// of keys naming the same field the last non-null one wins, as in Go (Pod objects themselves are
// read as ExtenderArgs reads them).
// Every error means the request itself is malformed (HTTP 400). Pure; thread-safe.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "extender/common/result.h"
#include "extender/model/pod.h"

namespace extender::wire {

struct BindingArgs {
  std::string pod_name;
  std::string pod_namespace;
  std::string pod_uid;
  std::string node;
};
Result<BindingArgs> decode_binding_args(std::string_view body);

struct Victims {
  std::vector<std::string> uids;  // in the scheduler's order
  std::vector<model::Pod> pods;   // full victim pods (NodeNameToVictims form only)
  std::int64_t num_pdb_violations = 0;
};

struct PreemptionArgs {
  model::Pod pod;
  std::map<std::string, Victims> victims_by_node;  // from whichever form was sent
};
Result<PreemptionArgs> decode_preemption_args(std::string_view body);

}  // namespace extender::wire
