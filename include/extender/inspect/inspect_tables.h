#pragma once
// The tables `scheduler-extender inspect` prints, from the admin port's JSON: every node's GPUs
// (/debug/state), one node's devices, holders and pools (/debug/nodes/<name>), every pool
// (/debug/state) and why a pod waits (/debug/pods/<namespace>/<name>). Columns aligned with
// spaces, one header line; names are printed with control bytes replaced. Pure: text in, text
// out; a clear error for JSON that is not what the endpoint answers. Thread-safe.
#include <string>
#include <string_view>

#include "extender/common/result.h"

namespace extender::inspect {

Result<std::string> nodes_table(std::string_view state_json);
Result<std::string> node_table(std::string_view node_json);
Result<std::string> pools_table(std::string_view state_json);
Result<std::string> pod_table(std::string_view pending_json);

}  // namespace extender::inspect
