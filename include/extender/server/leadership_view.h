#pragma once
// LeadershipView: what /readyz, /version, /debug/state and /metrics say of leader election in
// Kubernetes mode (absent in standalone mode and with ha.enabled false). A value type.
#include <cstdint>
#include <string>

namespace extender::server {

struct LeadershipView {
  bool leading = false;
  std::string identity;           // this replica
  std::string holder;             // the lease's holder as last read (empty: released or unknown)
  std::string since;              // RFC 3339 wall time this replica last started or stopped leading
  std::uint64_t transitions = 0;  // times this replica started or stopped leading
  std::string lease;              // "namespace/name"
  std::string last_error;         // of the last failed attempt on the lease; empty after a success
};

}  // namespace extender::server
