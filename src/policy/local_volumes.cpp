#include "extender/policy/local_volumes.h"

#include <algorithm>

#include "extender/policy/node_eligibility.h"

namespace extender::policy {
namespace {

bool fits(const LocalVolumeAsk& ask, const LocalVolumeOffer& offer) {
  return offer.free && offer.storage_class == ask.storage_class && offer.bytes >= ask.bytes &&
         (offer.access_modes & ask.access_modes) == ask.access_modes && offer.block == ask.block;
}

bool smaller(const LocalVolumeOffer& a, const LocalVolumeOffer& b) {
  return a.bytes != b.bytes ? a.bytes < b.bytes : a.name < b.name;
}

}  // namespace

bool local_volume_counted(const model::PersistentVolume& pv) {
  return pv.local && pv.node_affinity && !pv.terminating && (pv.phase == "Available" || pv.phase == "Bound");
}

bool local_volume_free(const model::PersistentVolume& pv) {
  return local_volume_counted(pv) && pv.phase == "Available" && pv.claim.empty();
}

bool local_volume_on_node(const model::PersistentVolume& pv, const model::NodeSupply& node) {
  if (!pv.node_affinity) return false;
  return std::any_of(pv.node_affinity->begin(), pv.node_affinity->end(),
                     [&](const model::NodeSelectorTerm& t) { return term_matches(t, node); });
}

std::vector<std::optional<std::size_t>> match_local_volumes(std::span<const LocalVolumeAsk> asks,
                                                            std::span<const LocalVolumeOffer> offers) {
  std::vector<std::optional<std::size_t>> out(asks.size());
  std::vector<bool> taken(offers.size(), false);
  std::vector<std::size_t> unbound;
  for (std::size_t i = 0; i < asks.size(); ++i) {
    if (asks[i].bound_volume.empty()) {
      unbound.push_back(i);
      continue;
    }
    for (std::size_t j = 0; j < offers.size(); ++j) {
      if (taken[j] || !offers[j].free || offers[j].name != asks[i].bound_volume) continue;
      out[i] = j;
      taken[j] = true;
      break;
    }
  }
  std::stable_sort(unbound.begin(), unbound.end(),
                   [&](std::size_t a, std::size_t b) { return asks[a].bytes < asks[b].bytes; });
  for (std::size_t i : unbound) {
    std::optional<std::size_t> best;
    for (std::size_t j = 0; j < offers.size(); ++j) {
      if (taken[j] || !fits(asks[i], offers[j])) continue;
      if (!best || smaller(offers[j], offers[*best])) best = j;
    }
    if (best) taken[*best] = true;
    out[i] = best;
  }
  return out;
}

}  // namespace extender::policy
