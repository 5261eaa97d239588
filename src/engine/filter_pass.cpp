#include "filter_pass.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace extender::engine {
namespace {

// What filter asks of each node: the verdict and the reason, no allocation.
constexpr policy::GpuPlacement kVerdictOnly{policy::PackingStrategy::kBinpack, nullptr, true};

}  // namespace

std::string FilterPass::unknown_node_reason() { return "node is not known to scheduler-extender"; }

FilterPass::FilterPass(const model::PodDemand& demand, const policy::DraFit* dra, state::Snapshot snapshot,
                       TimePoint now, std::string_view pod_for_logs, bool keep_volume_placements)
    : demand_(demand),
      dra_(dra),
      snapshot_(std::move(snapshot)),
      now_(now),
      pod_(pod_for_logs),
      whole_gpus_only_(policy::asks_whole_gpus_only(demand)),
      uid_bits_(state::NodeIndex::claim_bits(demand.uid)),
      keep_placements_(keep_volume_placements) {}

const FilterPass::Remembered* FilterPass::remembered(const state::NodeSummary& s) const {
  for (const Remembered& m : remembered_) {
    if (m.resource == s.resource && m.allocatable == s.allocatable && m.free == s.free &&
        m.has_memory == s.has_memory && m.memory_bytes == s.memory_bytes) {
      return &m;
    }
  }
  return nullptr;
}

bool FilterPass::by_summary(const state::NodeIndex::Found& found) const {
  return whole_gpus_only_ && found.summary->gpus_summarized && found.summary->sees_placed_only(uid_bits_) &&
         (!dra_ || !dra_->serves(found.node->supply));
}

policy::Fit FilterPass::fit_of(const state::NodeIndex::Found& found, bool by_summary) {
  if (by_summary) {
    const auto gpu = found.summary->gpu();
    return policy::check_whole_gpus(demand_,
                                    gpu ? std::span(&*gpu, 1) : std::span<const model::GpuResourceAvailability>());
  }
  const state::NodeState& node = *found.node;
  return fit_on(dra_, demand_, node.supply, node.usage_for(demand_, now_, scratch_), kVerdictOnly);
}

wire::FailedNodes::NameFacts FilterPass::facts(const state::NodeIndex::Found& found) const {
  return {found.order, snapshot_.names_dns_only()};
}

std::uint32_t FilterPass::record(wire::FailedNodes& into, Formatted& formatted, std::string_view name,
                                 wire::FailedNodes::NameFacts facts, policy::FitReason&& why) {
  auto seen = std::find_if(formatted.begin(), formatted.end(), [&](const auto& f) { return f.first == why; });
  if (seen != formatted.end()) {
    into.add_again(name, seen->second, facts);
    return seen->second;
  }
  const std::uint32_t index = into.add(name, policy::format_reason(why), facts);
  if (formatted.size() < kRemembered) formatted.emplace_back(std::move(why), index);
  return index;
}

void FilterPass::log(std::string_view name, const wire::FailedNodes& into, bool unresolvable) const {
  if (!spdlog::should_log(spdlog::level::debug)) return;
  spdlog::debug("filter {}: node {}: {}{}", pod_, name, *into.find(name), unresolvable ? " (unresolvable)" : "");
}

void FilterPass::judge(std::span<const std::string_view> names, std::size_t begin, std::size_t end,
                       std::vector<std::uint32_t>& fitting, wire::FilterResult& r) {
  for (std::size_t base = begin; base < end; base += found_.size()) {
    const std::size_t n = std::min(found_.size(), end - base);
    snapshot_.lookup(names.subspan(base, n), std::span(found_).first(n));
    for (std::size_t k = 0; k < n; ++k) {
      const std::string_view name = names[base + k];
      const state::NodeIndex::Found& found = found_[k];
      if (!found.node) {
        r.failed.add(name, unknown_node_reason());
        log(name, r.failed, false);
        continue;
      }
      const bool summarized = by_summary(found);
      if (summarized) {
        if (const Remembered* m = remembered(*found.summary)) {
          if (m->verdict == policy::Verdict::kFits) {
            fitting.push_back(static_cast<std::uint32_t>(base + k));
          } else {
            const bool unresolvable = m->verdict == policy::Verdict::kUnresolvable;
            wire::FailedNodes& into = unresolvable ? r.failed_unresolvable : r.failed;
            into.add_again(found.name, m->reason, facts(found));
            log(found.name, into, unresolvable);
          }
          continue;
        }
      }
      policy::Fit fit = fit_of(found, summarized);
      std::uint32_t reason = 0;
      switch (fit.verdict) {
        case policy::Verdict::kFits:
          fitting.push_back(static_cast<std::uint32_t>(base + k));
          if (keep_placements_) placed_.push_back({fitting.back(), std::move(fit.allocation.volumes)});
          break;
        case policy::Verdict::kInsufficient:
          reason = record(r.failed, failed_reasons_, found.name, facts(found), std::move(fit.reason));
          log(found.name, r.failed, false);
          break;
        case policy::Verdict::kUnresolvable:
          reason =
              record(r.failed_unresolvable, unresolvable_reasons_, found.name, facts(found), std::move(fit.reason));
          log(found.name, r.failed_unresolvable, true);
          break;
      }
      if (summarized && remembered_.size() < kRemembered) {
        const state::NodeSummary& s = *found.summary;
        remembered_.push_back({s.resource, s.allocatable, s.free, s.memory_bytes, s.has_memory, fit.verdict, reason});
      }
    }
  }
}

}  // namespace extender::engine
