#pragma once
// FilterPass: one /filter's judgement of the nodes it names, over one snapshot. Names are looked
// up in the snapshot's index in batches. A pod asking whole GPUs alone is judged from each node's
// summary wherever that tells the pod's usage (the verdict of each distinct summary is reused, as
// nodes of one kind share it); any other pod, or node, by check_fit (or the DRA judge) on the
// node's usage. Failures are recorded with their reason formatted once per kind of failure. Made
// to, it keeps the volume placements the check chose on each node that fits (what csi-baremetal's
// reservation is written from), so they are not computed twice. One per request; not thread-safe.
// The demand, the DRA judge and the names must outlive it.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "extender/common/clock.h"
#include "extender/model/demand.h"
#include "extender/policy/dra_fit.h"
#include "extender/policy/fit.h"
#include "extender/state/cluster_state.h"
#include "extender/wire/results.h"
#include "node_fit.h"

namespace extender::engine {

class FilterPass {
 public:
  // The volumes' placements on a node that fits, names[index].
  struct PlacedVolumes {
    std::uint32_t index;
    std::vector<model::VolumePlacement> volumes;
  };

  FilterPass(const model::PodDemand& demand, const policy::DraFit* dra, state::Snapshot snapshot, TimePoint now,
             std::string_view pod_for_logs, bool keep_volume_placements = false);

  // Judges names[begin, end): appends the index of each node that fits to `fitting` and records
  // the others (unknown names too) in r.failed / r.failed_unresolvable, a known node by the
  // snapshot's copy of its name (snapshot() must outlive r).
  void judge(std::span<const std::string_view> names, std::size_t begin, std::size_t end,
             std::vector<std::uint32_t>& fitting, wire::FilterResult& r);

  const state::Snapshot& snapshot() const { return snapshot_; }
  // Each fitting node's volume placements, in the order judge() passed them; empty unless made to
  // keep them.
  std::span<const PlacedVolumes> placed_volumes() const { return placed_; }
  // Whether every name judge() can pass needs no JSON escaping (every node's name is of the DNS
  // alphabet; a passing name is a known node's).
  bool passing_names_plain() const { return snapshot_.names_dns_only(); }
  static std::string unknown_node_reason();

 private:
  // The verdict for one node the summary judges: kind of failure and its reason's index there.
  struct Remembered {
    const std::string* resource;
    std::int64_t allocatable, free, memory_bytes;
    bool has_memory;
    policy::Verdict verdict;
    std::uint32_t reason;  // in the FailedNodes the verdict names (unused when the pod fits)
  };
  // Reasons formatted already, by map: nodes of a few kinds fail alike, interleaved.
  using Formatted = std::vector<std::pair<policy::FitReason, std::uint32_t>>;
  static constexpr std::size_t kRemembered = 8;

  // Whether the node's summary tells the pod's verdict (a pod asking whole GPUs alone, the node's
  // usage its placed one, its GPUs not DRA's for this pod).
  bool by_summary(const state::NodeIndex::Found& found) const;
  policy::Fit fit_of(const state::NodeIndex::Found& found, bool by_summary);
  const Remembered* remembered(const state::NodeSummary& summary) const;
  // What the index tells of a found node's name: its place, and (names of the DNS alphabet) that
  // it needs no escaping.
  wire::FailedNodes::NameFacts facts(const state::NodeIndex::Found& found) const;
  // Records a failure of `name` and returns its reason's index in `into`.
  std::uint32_t record(wire::FailedNodes& into, Formatted& formatted, std::string_view name,
                       wire::FailedNodes::NameFacts facts, policy::FitReason&& why);
  void log(std::string_view name, const wire::FailedNodes& into, bool unresolvable) const;

  const model::PodDemand& demand_;
  const policy::DraFit* dra_;
  const state::Snapshot snapshot_;
  const TimePoint now_;
  const std::string_view pod_;
  const bool whole_gpus_only_;
  const std::uint64_t uid_bits_;
  const bool keep_placements_;
  std::vector<PlacedVolumes> placed_;
  model::NodeUsage scratch_;
  Formatted failed_reasons_, unresolvable_reasons_;
  std::vector<Remembered> remembered_;
  std::array<state::NodeIndex::Found, 256> found_;
};

}  // namespace extender::engine
