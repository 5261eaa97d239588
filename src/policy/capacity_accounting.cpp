#include "extender/policy/capacity_accounting.h"

#include <algorithm>

#include "extender/common/quantity.h"
#include "extender/policy/node_eligibility.h"

namespace extender::policy {

bool reflected(const CapacityClaim& claim, const PublishedCapacity& published, TimePoint now,
               const CapacityRule& rule) {
  if (!claim.volume_seen) return false;
  if (published.changed && *published.changed > *claim.volume_seen) return true;
  return now - *claim.volume_seen >= rule.settle;
}

CapacityAccount account(const PublishedCapacity& published, const std::vector<CapacityClaim>& claims,
                        TimePoint now, const CapacityRule& rule) {
  CapacityAccount out;
  out.published = published.bytes;
  for (const auto& c : claims) {
    const std::int64_t bytes = std::max<std::int64_t>(c.bytes, 0);
    if (reflected(c, published, now, rule)) {
      out.reflected = saturating_add(out.reflected, bytes);
      continue;
    }
    out.subtracted = saturating_add(out.subtracted, bytes);
    if (c.volume_seen) {
      const auto settles = *c.volume_seen + rule.settle;
      if (!out.next_change || settles < *out.next_change) out.next_change = settles;
    }
  }
  out.free = published.bytes - out.subtracted;
  return out;
}

bool topology_selects(const std::optional<std::vector<model::NodeSelectorRequirement>>& topology,
                      const model::StringMap& labels) {
  if (!topology) return false;
  return std::all_of(topology->begin(), topology->end(),
                     [&](const auto& r) { return label_requirement_holds(r, labels); });
}

}  // namespace extender::policy
