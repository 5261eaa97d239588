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

namespace {

// Whether a claim without a volume is counted: no larger than the pool could provision as one
// volume, and selected less than `selected_hold` ago.
bool counted_unbound(const CapacityClaim& claim, std::int64_t largest, TimePoint now, const CapacityRule& rule) {
  return claim.bytes <= largest && now - claim.selected < rule.selected_hold;
}

void note_change(CapacityAccount& out, TimePoint at) {
  if (!out.next_change || at < *out.next_change) out.next_change = at;
}

}  // namespace

CapacityAccount account(const PublishedCapacity& published, const std::vector<CapacityClaim>& claims, TimePoint now,
                        const CapacityRule& rule) {
  CapacityAccount out;
  out.published = published.bytes;
  for (const auto& c : claims) {
    if (reflected(c, published, now, rule))
      out.reflected = saturating_add(out.reflected, std::max<std::int64_t>(c.bytes, 0));
  }
  const std::int64_t largest =
      published.max_volume_bytes > 0 ? published.max_volume_bytes : saturating_add(published.bytes, out.reflected);
  for (std::size_t i = 0; i < claims.size(); ++i) {
    const CapacityClaim& c = claims[i];
    const std::int64_t bytes = std::max<std::int64_t>(c.bytes, 0);
    if (reflected(c, published, now, rule)) continue;
    if (!c.volume_seen && !counted_unbound(c, largest, now, rule)) {
      out.ignored = saturating_add(out.ignored, bytes);
      out.ignored_claims.push_back(i);
      continue;
    }
    out.subtracted = saturating_add(out.subtracted, bytes);
    note_change(out, c.volume_seen ? *c.volume_seen + rule.settle : c.selected + rule.selected_hold);
  }
  out.free = published.bytes - out.subtracted;
  return out;
}

CapacityAccount account_hand_written(std::int64_t largest, const std::vector<CapacityClaim>& claims, TimePoint now,
                                     const CapacityRule& rule) {
  CapacityAccount out;
  for (std::size_t i = 0; i < claims.size(); ++i) {
    const CapacityClaim& c = claims[i];
    const std::int64_t bytes = std::max<std::int64_t>(c.bytes, 0);
    if (!c.volume_seen && !counted_unbound(c, largest, now, rule)) {
      out.ignored = saturating_add(out.ignored, bytes);
      out.ignored_claims.push_back(i);
      continue;
    }
    out.subtracted = saturating_add(out.subtracted, bytes);
    if (!c.volume_seen) note_change(out, c.selected + rule.selected_hold);
  }
  return out;
}

bool topology_selects(const std::optional<std::vector<model::NodeSelectorRequirement>>& topology,
                      const model::StringMap& labels) {
  if (!topology) return false;
  return std::all_of(topology->begin(), topology->end(),
                     [&](const auto& r) { return label_requirement_holds(r, labels); });
}

}  // namespace extender::policy
