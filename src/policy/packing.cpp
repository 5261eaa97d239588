#include "extender/policy/packing.h"

namespace extender::policy {
namespace {

std::vector<std::int64_t> binpack_scores(const model::PodDemand& pod, std::span<const Candidate> candidates,
                                         const ShapeMix&, double, double) {
  return fill_scores(pod, candidates, /*fuller_first=*/true);
}

std::vector<std::int64_t> spread_scores(const model::PodDemand& pod, std::span<const Candidate> candidates,
                                        const ShapeMix&, double, double) {
  return fill_scores(pod, candidates, /*fuller_first=*/false);
}

constexpr PackingPolicy kPolicies[] = {
    {PackingStrategy::kBinpack, "binpack", false, false, ShareDevice::kBestFit, &binpack_scores},
    {PackingStrategy::kSpread, "spread", false, false, ShareDevice::kBestFit, &spread_scores},
    {PackingStrategy::kFragmentation, "fragmentation", true, true, ShareDevice::kLeastFragmentation,
     &fragmentation_scores},
};

}  // namespace

std::span<const PackingPolicy> packing_policies() { return kPolicies; }

const PackingPolicy& packing_policy(PackingStrategy strategy) {
  for (const auto& p : kPolicies) {
    if (p.strategy == strategy) return p;
  }
  return kPolicies[0];
}

std::string packing_names(std::string_view last) {
  std::string out;
  for (std::size_t i = 0; i < std::size(kPolicies); ++i) {
    if (i > 0) out += i + 1 == std::size(kPolicies) ? last : std::string_view(", ");
    out += kPolicies[i].name;
  }
  return out;
}

const char* packing_name(PackingStrategy s) { return packing_policy(s).name; }

std::optional<PackingStrategy> parse_packing(std::string_view name) {
  for (const auto& p : kPolicies) {
    if (name == p.name) return p.strategy;
  }
  return std::nullopt;
}

}  // namespace extender::policy
