#include "extender/policy/score.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "extender/common/quantity.h"
#include "extender/policy/packing.h"

namespace extender::policy {
namespace {

// Scoring inputs are clamped so that exact cross-multiplication fits in 128 bits.
constexpr std::int64_t kMaxScoringValue = std::int64_t{1} << 30;

std::int64_t clamp_value(std::int64_t v) { return std::clamp<std::int64_t>(v, 0, kMaxScoringValue); }

// round(p / q) for p >= 0, q > 0, halves away from zero.
std::int64_t round_div(__int128 p, __int128 q) { return static_cast<std::int64_t>((2 * p + q) / (2 * q)); }

struct Ratio {
  __int128 num = 0;
  __int128 den = 1;  // > 0
};

bool less(const Ratio& a, const Ratio& b) { return a.num * b.den < b.num * a.den; }

// round(10 * (a - b) / (hi - lo)) where lo <= b <= a <= hi and lo < hi.
std::int64_t scaled_gap(const Ratio& a, const Ratio& b, const Ratio& lo, const Ratio& hi) {
  __int128 p = (a.num * b.den - b.num * a.den) * (hi.den * lo.den);
  __int128 q = (hi.num * lo.den - lo.num * hi.den) * (a.den * b.den);
  return round_div(10 * p, q);
}

std::vector<std::int64_t> min_max_normalise(const std::vector<Ratio>& raw, bool higher_is_better) {
  std::vector<std::int64_t> out(raw.size(), 10);
  if (raw.empty()) return out;
  auto [lo, hi] = std::minmax_element(raw.begin(), raw.end(), less);
  if (!less(*lo, *hi)) return out;
  for (size_t i = 0; i < raw.size(); ++i) {
    out[i] = higher_is_better ? scaled_gap(raw[i], *lo, *lo, *hi) : scaled_gap(*hi, raw[i], *lo, *hi);
  }
  return out;
}

}  // namespace

std::vector<std::int64_t> volume_balance_scores(std::span<const Candidate> candidates) {
  std::vector<Ratio> raw;
  raw.reserve(candidates.size());
  for (const auto& c : candidates) raw.push_back({clamp_value(c.usage->volumes), 1});
  return min_max_normalise(raw, /*higher_is_better=*/false);
}

std::vector<std::int64_t> capacity_scores(const model::PodDemand& pod, std::span<const Candidate> candidates,
                                          bool more_free) {
  std::map<std::string_view, std::int64_t, std::less<>> need;
  for (const auto& v : pod.volumes) need[v.pool] = saturating_add(need[v.pool], v.bytes);
  std::vector<Ratio> raw;
  raw.reserve(candidates.size());
  for (const auto& c : candidates) {
    __int128 free = 0;
    __int128 capacity = 0;
    for (const auto& [pool_name, bytes] : need) {
      const model::Pool* pool = c.node->find_pool(pool_name);
      if (!pool) continue;
      capacity += std::max<std::int64_t>(pool->capacity_bytes, 0);
      free += std::max<std::int64_t>(pool->capacity_bytes - c.usage->pool_used(pool_name) - bytes, 0);
    }
    // The fraction in 2^-20 steps: byte counts themselves would overflow the exact comparisons.
    raw.push_back({capacity > 0 ? (free << 20) / capacity : 0, 1});
  }
  return min_max_normalise(raw, more_free);
}

namespace {

// What the fragmentation policy ranks by: the increase of expected fragmentation blended with
// best-fit's measure (0 for all when it weighs nothing), then the increase exactly, then (ties)
// the node's free GPU memory after the placement in device units (less first), then its free CPU
// after (more first).
struct RankKey {
  long double blended = 0;
  Ratio delta;
  Ratio gpu_free;
  std::int64_t cpu_free = 0;
};

bool key_less(const RankKey& a, const RankKey& b) {
  if (a.blended != b.blended) return a.blended < b.blended;
  if (less(a.delta, b.delta)) return true;
  if (less(b.delta, a.delta)) return false;
  if (less(a.gpu_free, b.gpu_free)) return true;
  if (less(b.gpu_free, a.gpu_free)) return false;
  return a.cpu_free > b.cpu_free;
}

std::vector<std::int64_t> rank_scores(const std::vector<RankKey>& raw) {
  std::vector<RankKey> distinct = raw;
  std::sort(distinct.begin(), distinct.end(), key_less);
  distinct.erase(std::unique(distinct.begin(), distinct.end(),
                             [](const RankKey& a, const RankKey& b) { return !key_less(a, b) && !key_less(b, a); }),
                 distinct.end());
  std::vector<std::int64_t> out;
  out.reserve(raw.size());
  for (const auto& r : raw) {
    const auto rank = std::lower_bound(distinct.begin(), distinct.end(), r, key_less) - distinct.begin();
    out.push_back(std::max<std::int64_t>(10 - rank, 0));
  }
  return out;
}

RankKey fragmentation_key(const model::PodDemand& pod, const model::NodeSupply& node, const GpuNodeView& view,
                          const ShapeMix& mix, double fit_weight) {
  auto d = fragmentation_delta(pod, node, view, mix);
  // A candidate whose devices cannot take the pod ranks last.
  if (!d) return {HUGE_VALL, {INT64_MAX, 1}, {INT64_MAX, 1}, INT64_MAX};
  __int128 free = 0;
  for (std::int64_t f : view.free) free += f;
  const GpuShape shape = shape_of(pod);
  free -= pod.gpu_share_bytes > 0 ? pod.gpu_share_bytes : static_cast<__int128>(shape.whole) * view.capacity;
  const std::int64_t cpu_free = view.cpu_free == INT64_MAX ? INT64_MAX : view.cpu_free - pod.cpu_milli;
  long double blended = 0;
  if (fit_weight > 0) {
    blended =
        static_cast<long double>(d->num) / static_cast<long double>(d->den) + fit_weight * free_after(pod, node, view);
  }
  return {blended, {d->num, d->den}, {free, view.capacity}, cpu_free};
}

// The whole GPUs the pod asks of the node's devices; nullopt when it asks whole GPUs of another
// resource too (then the node's devices do not hold all of them).
std::optional<std::int64_t> whole_on_devices(const model::PodDemand& pod, const model::NodeSupply& node) {
  std::int64_t k = 0;
  for (const auto& [resource, need] : pod.gpus) {
    if (resource != node.gpu_devices.resource) return std::nullopt;
    k += clamp_value(need);
  }
  return k;
}

// (held + demand) / total in thousandths of a device, on a node with devices: what shares and
// whole GPUs hold of them, plus the pod's share or whole devices.
Ratio device_fill(const model::PodDemand& pod, std::int64_t whole, const Candidate& c) {
  const GpuNodeView view = gpu_view(*c.node, *c.usage);
  __int128 held = 0;
  for (std::int64_t f : view.free) held += view.capacity - f;
  const __int128 demand = pod.gpu_share_bytes > 0 ? pod.gpu_share_bytes : static_cast<__int128>(whole) * view.capacity;
  const __int128 milli = ((held + demand) * 1000 + view.capacity / 2) / view.capacity;
  return {milli, static_cast<__int128>(1000) * std::max<std::size_t>(view.free.size(), 1)};
}

// Starts loading what gpu_view() reads first of a candidate: a ranking walks some hundred nodes
// whose states lie apart in memory and are seldom cached, and overlapping the loads of the next
// few with the work on this one saves most of the wait. Changes no result.
void prefetch_view_fields(const Candidate& c) {
  __builtin_prefetch(&c.node->gpu_devices);
  __builtin_prefetch(&c.node->memory_bytes);
  __builtin_prefetch(&c.usage->gpus);
  __builtin_prefetch(&c.usage->gpu_devices);
  __builtin_prefetch(&c.usage->memory_bytes);
}
// The same for the first entries of the candidate's usage maps, once their headers are loaded.
void prefetch_view_entries(const Candidate& c) {
  if (!c.usage->gpus.empty()) __builtin_prefetch(&*c.usage->gpus.begin());
  if (!c.usage->gpu_devices.empty()) __builtin_prefetch(&*c.usage->gpu_devices.begin());
}

// What fragmentation_key reads of a candidate, for one pod and mix: candidates alike in it (empty
// nodes of one kind, say) share one key.
struct FragmentationInput {
  GpuNodeView view;
  std::string_view resource;   // node.gpu_devices.resource
  std::int64_t cpu_milli = 0;  // node.cpu_milli
  bool operator==(const FragmentationInput&) const = default;
};

// The requested CPU and the allocated GPUs of some nodes, each over what the nodes have.
struct HostFill {
  long double cpu_used = 0;
  long double cpu_total = 0;
  long double gpu_used = 0;  // devices: a device counts its used memory over its memory
  long double gpu_total = 0;
  void add(const model::NodeSupply& node, const GpuNodeView& view) {
    if (node.cpu_milli > 0 && view.cpu_free != INT64_MAX) {
      cpu_total += static_cast<long double>(node.cpu_milli);
      cpu_used += static_cast<long double>(node.cpu_milli - view.cpu_free);
    }
    for (std::int64_t f : view.free) {
      gpu_total += 1;
      gpu_used += static_cast<long double>(view.capacity - f) / static_cast<long double>(view.capacity);
    }
  }
  bool cpu_scarcer() const {
    if (cpu_total <= 0 || gpu_total <= 0) return false;
    return cpu_used / cpu_total > gpu_used / gpu_total;
  }
};

bool asks_gpus(const model::PodDemand& pod) { return pod.gpu_share_bytes > 0 || !pod.gpus.empty(); }

// The key ranked by the increase alone, in bins of `bin` GPUs: keys in one bin compare equal.
RankKey binned(const RankKey& k, double bin) {
  if (k.blended == HUGE_VALL) return k;
  const long double devices = static_cast<long double>(k.delta.num) / static_cast<long double>(k.delta.den);
  const auto at = static_cast<std::int64_t>(std::floor(devices / static_cast<long double>(bin)));
  return {0, {at, 1}, {0, 1}, 0};
}

}  // namespace

std::vector<std::int64_t> fragmentation_scores(const model::PodDemand& pod, std::span<const Candidate> candidates,
                                               const ShapeMix& mix, double fit_weight, double cpu_scarce_bin) {
  constexpr std::size_t kRemembered = 16;
  constexpr std::size_t kFieldsAhead = 8;
  constexpr std::size_t kEntriesAhead = 4;
  std::vector<std::pair<FragmentationInput, RankKey>> seen;
  std::vector<RankKey> keys;
  keys.reserve(candidates.size());
  for (std::size_t i = 0; i < std::min(kFieldsAhead, candidates.size()); ++i) prefetch_view_fields(candidates[i]);
  FragmentationInput in;
  HostFill fill;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (i + kFieldsAhead < candidates.size()) prefetch_view_fields(candidates[i + kFieldsAhead]);
    if (i + kEntriesAhead < candidates.size()) prefetch_view_entries(candidates[i + kEntriesAhead]);
    const Candidate& c = candidates[i];
    gpu_view(*c.node, *c.usage, in.view);
    in.resource = c.node->gpu_devices.resource;
    in.cpu_milli = c.node->cpu_milli;
    fill.add(*c.node, in.view);
    auto hit = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == in; });
    if (hit != seen.end()) {
      keys.push_back(hit->second);
      continue;
    }
    keys.push_back(fragmentation_key(pod, *c.node, in.view, mix, fit_weight));
    if (seen.size() < kRemembered) seen.emplace_back(in, keys.back());
  }
  if (cpu_scarce_bin > 0 && asks_gpus(pod) && fill.cpu_scarcer() && !multi_gpu_heavy(mix)) {
    for (auto& k : keys) k = binned(k, cpu_scarce_bin);
  }
  return rank_scores(keys);
}

bool multi_gpu_heavy(const ShapeMix& mix) {
  long double multi = 0;
  long double all = 0;
  for (const auto& [shape, weight] : mix) {
    all += static_cast<long double>(weight);
    if (shape.whole >= 2) multi += static_cast<long double>(weight);
  }
  return 2 * multi > all;
}

bool cpu_scarce(std::span<const Candidate> candidates) {
  HostFill fill;
  for (const auto& c : candidates) fill.add(*c.node, gpu_view(*c.node, *c.usage));
  return fill.cpu_scarcer();
}

std::vector<std::int64_t> fill_scores(const model::PodDemand& pod, std::span<const Candidate> candidates,
                                      bool fuller_first) {
  std::vector<Ratio> raw;
  raw.reserve(candidates.size());
  for (const auto& c : candidates) {
    if (pod.gpu_share_bytes > 0) {
      raw.push_back(c.node->gpu_devices.count > 0 ? device_fill(pod, 0, c) : Ratio{0, 1});
      continue;
    }
    if (auto whole = whole_on_devices(pod, *c.node); whole && c.node->gpu_devices.count > 0) {
      raw.push_back(device_fill(pod, *whole, c));
      continue;
    }
    std::int64_t after = 0;
    std::int64_t allocatable = 0;
    for (const auto& [resource, need] : pod.gpus) {
      after += clamp_value(c.usage->gpus_used(resource)) + clamp_value(need);
      auto it = c.node->gpus.find(resource);
      if (it != c.node->gpus.end()) allocatable += clamp_value(it->second);
    }
    raw.push_back(allocatable > 0 ? Ratio{after, allocatable} : Ratio{0, 1});
  }
  return min_max_normalise(raw, fuller_first);
}

std::vector<std::int64_t> gpu_packing_scores(const model::PodDemand& pod, std::span<const Candidate> candidates,
                                             PackingStrategy strategy, const ShapeMix& mix, double fit_weight,
                                             double cpu_scarce_bin) {
  return packing_policy(strategy).score(pod, candidates, mix, fit_weight, cpu_scarce_bin);
}

namespace {

bool in_published_pool(const model::PodDemand& pod, std::span<const Candidate> candidates) {
  for (const auto& c : candidates) {
    for (const auto& v : pod.volumes) {
      const model::Pool* pool = c.node->find_pool(v.pool);
      if (pool && !pool->source.empty() && !pool->drives) return true;
    }
  }
  return false;
}

bool has_volumes(const model::PodDemand& pod, std::span<const Candidate>, const ScoringRules&) {
  return !pod.volumes.empty();
}

bool has_published_volumes(const model::PodDemand& pod, std::span<const Candidate> candidates, const ScoringRules&) {
  return !pod.volumes.empty() && in_published_pool(pod, candidates);
}

bool packs(const model::PodDemand& pod, std::span<const Candidate>, const ScoringRules& rules) {
  return pod.needs_gpu() || packing_policy(rules.packing).ranks_every_pod;
}

std::vector<std::int64_t> volume_balance(const model::PodDemand&, std::span<const Candidate> candidates,
                                         const ScoringRules&, const ShapeMix&) {
  return volume_balance_scores(candidates);
}

std::vector<std::int64_t> capacity(const model::PodDemand& pod, std::span<const Candidate> candidates,
                                   const ScoringRules& rules, const ShapeMix&) {
  return capacity_scores(pod, candidates, rules.capacity_more_free);
}

std::vector<std::int64_t> gpu_packing(const model::PodDemand& pod, std::span<const Candidate> candidates,
                                      const ScoringRules& rules, const ShapeMix& mix) {
  return gpu_packing_scores(pod, candidates, rules.packing, mix, rules.fragmentation_fit_weight,
                            rules.fragmentation_cpu_scarce_bin);
}

constexpr Scorer kScorers[] = {
    {"volume_balance_weight", &ScoringRules::volume_balance_weight, &has_volumes, &volume_balance},
    {"capacity_weight", &ScoringRules::capacity_weight, &has_published_volumes, &capacity},
    {"gpu_packing_weight", &ScoringRules::gpu_packing_weight, &packs, &gpu_packing},
};

}  // namespace

std::span<const Scorer> scorers() { return kScorers; }

std::vector<std::int64_t> score_candidates(const model::PodDemand& pod, std::span<const Candidate> candidates,
                                           const ScoringRules& rules, const ShapeMix& mix) {
  struct Applied {
    std::int64_t weight;
    std::vector<std::int64_t> scores;
  };
  std::vector<Applied> applied;
  for (const Scorer& scorer : kScorers) {
    const std::int64_t weight = rules.*scorer.weight;
    if (weight > 0 && scorer.applies(pod, candidates, rules)) {
      applied.push_back({weight, scorer.score(pod, candidates, rules, mix)});
    }
  }
  if (applied.empty()) return {};
  __int128 total_weight = 0;
  for (const auto& a : applied) total_weight += a.weight;
  std::vector<std::int64_t> out(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    __int128 sum = 0;
    for (const auto& a : applied) sum += static_cast<__int128>(a.weight) * a.scores[i];
    out[i] = round_div(sum, total_weight);
  }
  return out;
}

}  // namespace extender::policy
