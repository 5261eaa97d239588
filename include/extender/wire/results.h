#pragma once
// Encoders for the answers, byte for byte as Go's encoding/json writes the extender/v1 structs:
// compact, fields in declaration order, map keys sorted, `<>&` escaped. Pure; thread-safe.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace extender::wire {

// Node names and objects are views into the request they answer, which must outlive the result.
struct FilterResult {
  std::optional<std::vector<std::string_view>> node_objects;      // raw node bytes (Nodes form)
  std::optional<std::vector<std::string_view>> node_names;        // NodeNames form
  std::map<std::string_view, std::string> failed;                 // FailedNodes
  std::map<std::string_view, std::string> failed_unresolvable;    // FailedAndUnresolvableNodes
  std::string error;
};
std::string encode_filter_result(const FilterResult& r);

struct HostScore {
  std::string_view host;  // a view into the request
  std::int64_t score = 0;
};
// A bare JSON array, as HostPriorityList is.
std::string encode_host_priority_list(const std::vector<HostScore>& scores);

std::string encode_binding_result(std::string_view error);

struct MetaVictims {
  std::vector<std::string> uids;
  std::int64_t num_pdb_violations = 0;
};
std::string encode_preemption_result(const std::map<std::string, MetaVictims>& victims_by_node);

// {"error":"..."} for answers to malformed requests (people with curl read these).
std::string encode_request_error(std::string_view message);

}  // namespace extender::wire
