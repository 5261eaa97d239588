#pragma once
// Fit: can a pod be placed on a node, given what the node offers and what is already in use?
// Pure: no I/O, no locks, no JSON. Reasons are short and stable, because the scheduler aggregates
// identical messages into its FailedScheduling events.
#include <string>

#include "extender/model/demand.h"
#include "extender/model/supply.h"
#include "extender/model/usage.h"

namespace extender::policy {

enum class Verdict {
  kFits,
  kInsufficient,   // usage is in the way: evicting pods may help (FailedNodes)
  kUnresolvable,   // nothing evictable helps (FailedAndUnresolvableNodes)
};

struct Fit {
  Verdict verdict = Verdict::kFits;
  std::string reason;             // empty when it fits
  model::Allocation allocation;   // what the pod would hold on the node, when it fits
};

// Checks, in this order: values the node reports unreadably, GPU count per resource, the memory
// floor per GPU, then storage pools (devices best fit). The first unresolvable reason wins over the
// first insufficient one. `usage` must already exclude the pod itself.
Fit check_fit(const model::PodDemand& pod, const model::NodeSupply& node, const model::NodeUsage& usage);

// Bytes for people, in binary units: "512 MiB", "40 GiB", "79.65 GiB".
std::string format_bytes(std::int64_t bytes);

}  // namespace extender::policy
