#include "extender/policy/gpu_placement.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "extender/common/quantity.h"
#include "extender/policy/gpu_model_constraint.h"
#include "extender/policy/packing.h"

namespace extender::policy {
namespace {

constexpr double kQuarters = 4;  // a size-weighted mix counts in quarter pods
constexpr __int128 kMaxMixWeight = std::int64_t{1} << 24;

std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
  const __int128 p = static_cast<__int128>(a) * b;
  return p > INT64_MAX ? INT64_MAX : static_cast<std::int64_t>(p);
}

std::int64_t share_need(const GpuNodeView& view, const GpuShape& shape) {
  if (shape.share_bytes > 0) return shape.share_bytes;
  const __int128 bytes = (static_cast<__int128>(shape.share_milli) * view.capacity + 999) / 1000;
  return static_cast<std::int64_t>(std::min<__int128>(bytes, INT64_MAX));
}

bool is_share(const GpuShape& s) { return s.share_bytes > 0 || s.share_milli > 0; }

struct Stats {
  std::int64_t full = 0;
  __int128 sum_free = 0;
  __int128 sum_partial = 0;
};

Stats stats_of(const GpuNodeView& view) {
  Stats s;
  for (std::int64_t f : view.free) {
    s.sum_free += f;
    if (f == view.capacity) {
      ++s.full;
    } else {
      s.sum_partial += f;
    }
  }
  return s;
}

__int128 whole_fragmentation(const Stats& s, std::int64_t k) { return s.full >= k ? s.sum_partial : s.sum_free; }

// What one device of free memory `f` leaves unusable for a share of `need` bytes.
std::int64_t share_fragment(const GpuNodeView& view, std::int64_t f, std::int64_t need) {
  if (!view.memory_known || need > view.capacity) return f;
  return f < need ? f : 0;
}

bool host_fits(std::int64_t cpu_free, std::int64_t memory_free, const GpuShape& shape) {
  return shape.cpu_milli <= cpu_free && shape.memory_bytes <= memory_free;
}

double scarcity(const GpuShape& shape, const model::GpuModelSupply& supply) {
  if (shape.models.empty() || supply.total <= 0) return 1;
  const std::int64_t usable = supply.of(shape.models);
  if (usable <= 0) return 1;
  return std::min(static_cast<double>(supply.total) / static_cast<double>(usable), kMaxScarcity);
}

bool model_admits(std::string_view model, const GpuShape& shape) {
  if (shape.models.empty()) return true;
  return std::binary_search(shape.models.begin(), shape.models.end(), model,
                            [](std::string_view a, std::string_view b) { return a < b; });
}

std::int64_t less_of(std::int64_t free, std::int64_t used) {
  if (free == INT64_MAX) return free;
  return std::max<std::int64_t>(free - std::max<std::int64_t>(used, 0), 0);
}

bool same_gpu_part(const GpuShape& a, const GpuShape& b) {
  return a.whole == b.whole && a.share_bytes == b.share_bytes && a.share_milli == b.share_milli;
}

// The shapes of a mix grouped by their GPU part, with the weight of the group's shapes whose CPU
// and memory fit the node (and whose models admit it) before and after the placement, and the
// group's GPU fragmentation before.
struct ShapeGroup {
  GpuShape gpu;
  __int128 weight = 0;
  __int128 fit_before = 0;
  __int128 fit_after = 0;
  __int128 frag_before = 0;
};

std::vector<ShapeGroup> group_mix(const GpuNodeView& view, const Stats& before, const ShapeMix& mix,
                                  std::int64_t cpu_used, std::int64_t memory_used) {
  const std::int64_t cpu_after = less_of(view.cpu_free, cpu_used);
  const std::int64_t memory_after = less_of(view.memory_free, memory_used);
  std::vector<ShapeGroup> groups;
  for (const auto& [shape, weight] : mix) {
    auto g = groups.rbegin();
    while (g != groups.rend() && !same_gpu_part(g->gpu, shape)) ++g;
    if (g == groups.rend()) {
      groups.push_back({GpuShape{shape.whole, shape.share_bytes, shape.share_milli, 0, 0, {}}});
      g = groups.rbegin();
    }
    g->weight += weight;
    if (!model_admits(view.model, shape)) continue;
    if (host_fits(view.cpu_free, view.memory_free, shape)) g->fit_before += weight;
    if (host_fits(cpu_after, memory_after, shape)) g->fit_after += weight;
  }
  for (auto& g : groups) {
    if (is_share(g.gpu)) {
      const std::int64_t need = share_need(view, g.gpu);
      for (std::int64_t f : view.free) g.frag_before += share_fragment(view, f, need);
    } else if (g.gpu.whole > 0) {
      g.frag_before = whole_fragmentation(before, g.gpu.whole);
    }
  }
  return groups;
}

bool asks_no_gpu(const GpuShape& s) { return s.whole <= 0 && !is_share(s); }

// The change of expected fragmentation (bytes x weight) when device frees go from `before` to
// `after` on the devices in `changed` (old free, new free). A shape that fits the node's CPU and
// memory after the placement sees the GPU change; one that fit only before loses all free GPU
// memory; one that fit neither sees the free GPU memory shrink. Under kAlwaysFragment a shape
// asking no GPU sees the free GPU memory shrink, whatever it fits.
__int128 delta_of(const GpuNodeView& view, const Stats& before, const Stats& after,
                  const std::vector<std::pair<std::int64_t, std::int64_t>>& changed,
                  const std::vector<ShapeGroup>& groups, NoGpuShapes no_gpu) {
  __int128 total = 0;
  for (const auto& g : groups) {
    if (no_gpu == NoGpuShapes::kAlwaysFragment && asks_no_gpu(g.gpu)) {
      total += g.weight * (after.sum_free - before.sum_free);
      continue;
    }
    __int128 frag_after = g.frag_before;
    if (is_share(g.gpu)) {
      const std::int64_t need = share_need(view, g.gpu);
      for (const auto& [old_free, new_free] : changed) {
        frag_after += share_fragment(view, new_free, need) - share_fragment(view, old_free, need);
      }
    } else if (g.gpu.whole > 0) {
      frag_after = whole_fragmentation(after, g.gpu.whole);
    }
    total += g.fit_after * (frag_after - g.frag_before) +
             (g.fit_before - g.fit_after) * (after.sum_free - g.frag_before) +
             (g.weight - g.fit_before) * (after.sum_free - before.sum_free);
  }
  return total;
}

__int128 total_weight(const ShapeMix& mix) {
  __int128 w = 0;
  for (const auto& [shape, weight] : mix) w += weight;
  return w > 0 ? w : 1;
}

bool delta_less(const FragmentationDelta& a, const FragmentationDelta& b) { return a.num * b.den < b.num * a.den; }

struct ShareChoice {
  std::size_t index = 0;
  FragmentationDelta delta;
};

// The device stats once a share of `need` bytes takes `need` of a device of free memory `f`.
Stats after_share(const GpuNodeView& view, const Stats& before, std::int64_t f, std::int64_t need) {
  Stats after = before;
  if (f == view.capacity) {
    --after.full;
    after.sum_partial += f - need;
  } else {
    after.sum_partial -= need;
  }
  after.sum_free -= need;
  return after;
}

// The device for a share of `need` bytes asking `cpu_used` and `memory_used` of the node: best fit,
// or under `by_fragmentation` least increase first.
std::optional<ShareChoice> choose_share(const GpuNodeView& view, std::int64_t need, std::int64_t cpu_used,
                                        std::int64_t memory_used, bool by_fragmentation, const ShapeMix& mix,
                                        NoGpuShapes no_gpu = NoGpuShapes::kFragmentWhenHostFull) {
  if (!view.memory_known || need > view.capacity) return std::nullopt;
  const Stats before = stats_of(view);
  const __int128 den = static_cast<__int128>(view.capacity) * total_weight(mix);
  std::vector<ShapeGroup> groups;
  if (by_fragmentation) groups = group_mix(view, before, mix, cpu_used, memory_used);
  std::optional<ShareChoice> best;
  for (std::size_t i = 0; i < view.free.size(); ++i) {
    const std::int64_t f = view.free[i];
    if (f < need) continue;
    ShareChoice c{i, {0, den}};
    if (by_fragmentation) {
      c.delta.num = delta_of(view, before, after_share(view, before, f, need), {{f, f - need}}, groups, no_gpu);
    }
    if (!best) {
      best = c;
      continue;
    }
    const bool frag_better = by_fragmentation && delta_less(c.delta, best->delta);
    const bool frag_equal =
        !by_fragmentation || (!delta_less(c.delta, best->delta) && !delta_less(best->delta, c.delta));
    if (frag_better || (frag_equal && f < view.free[best->index])) best = c;
  }
  return best;
}

std::int64_t whole_count(const model::PodDemand& pod, const model::NodeSupply& node) {
  auto it = pod.gpus.find(node.gpu_devices.resource);
  return it == pod.gpus.end() ? 0 : it->second;
}

}  // namespace

Result<GpuShape> parse_shape(std::string_view gpus) {
  auto q = Quantity::parse(gpus);
  if (!q || q->is_negative()) return Error{"expected a number of GPUs such as 1, 8 or 0.5"};
  const std::int64_t milli = q->milli_ceil();
  GpuShape s;
  if (milli <= 0) return Error{"expected more than 0 GPUs"};
  if (milli < 1000) {
    s.share_milli = milli;
  } else if (milli % 1000 == 0 && milli <= 1'000'000) {
    s.whole = milli / 1000;
  } else {
    return Error{"expected whole GPUs, or a share below 1"};
  }
  return s;
}

std::string shape_name(const GpuShape& s) {
  if (s.whole > 0) return std::to_string(s.whole);
  if (s.share_milli > 0) {
    std::string frac = std::to_string(1000 + s.share_milli).substr(1);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    return "0." + frac;
  }
  if (s.share_bytes > 0) return std::to_string(s.share_bytes) + "B";
  return "0";
}

GpuShape shape_of(const model::PodDemand& pod) {
  GpuShape s;
  s.cpu_milli = pod.cpu_milli;
  s.memory_bytes = pod.memory_bytes;
  if (pod.gpu_share_bytes > 0) {
    s.share_bytes = pod.gpu_share_bytes;
    s.models = gpu_models_allowed(pod.constraints);
    return s;
  }
  for (const auto& [resource, n] : pod.gpus) s.whole += n;
  s.models = gpu_models_allowed(pod.constraints);
  return s;
}

ShapeWindow::ShapeWindow(std::size_t capacity, ShapeMix prior, double size_exponent)
    : capacity_(capacity), prior_(std::move(prior)), size_exponent_(size_exponent) {}

void ShapeWindow::add(const GpuShape& shape) {
  if (shape == GpuShape{} || capacity_ == 0) return;
  recent_.push_back(shape);
  ++counts_[shape];
  if (recent_.size() > capacity_) {
    auto it = counts_.find(recent_.front());
    if (--it->second == 0) counts_.erase(it);
    recent_.pop_front();
  }
}

std::int64_t ShapeWindow::unit_weight(const GpuShape& shape, const model::GpuModelSupply& supply) const {
  if (size_exponent_ <= 0) return 1;
  const double gpus = static_cast<double>(std::max<std::int64_t>(shape.whole, 1));
  return std::max<std::int64_t>(std::llround(kQuarters * std::pow(gpus * scarcity(shape, supply), size_exponent_)), 1);
}

ShapeMix ShapeWindow::mix(const model::GpuModelSupply& supply) const {
  std::map<GpuShape, std::int64_t> merged;
  __int128 total = 0;
  for (const auto& [shape, n] : counts_) {
    const std::int64_t w = saturating_mul(n, unit_weight(shape, supply));
    merged[shape] += w;
    total += w;
  }
  const std::int64_t prior_unit = size_exponent_ > 0 ? kQuarters : 1;
  for (const auto& [shape, weight] : prior_) {
    if (weight <= 0) continue;
    merged[shape] += saturating_mul(weight, prior_unit);
    total += saturating_mul(weight, prior_unit);
  }
  if (total > kMaxMixWeight) {
    for (auto& [shape, w] : merged) {
      w = std::max<std::int64_t>(static_cast<std::int64_t>(static_cast<__int128>(w) * kMaxMixWeight / total), 1);
    }
  }
  return {merged.begin(), merged.end()};
}

GpuNodeView gpu_view(const model::NodeSupply& node, const model::NodeUsage& usage) {
  GpuNodeView v;
  gpu_view(node, usage, v);
  return v;
}

void gpu_view(const model::NodeSupply& node, const model::NodeUsage& usage, GpuNodeView& v) {
  const auto& d = node.gpu_devices;
  v.model = node.gpu_model;
  v.memory_known = d.memory_bytes > 0;
  v.capacity = v.memory_known ? d.memory_bytes : 1;
  const std::int64_t unplaced = std::max<std::int64_t>(usage.gpus_used(d.resource) - usage.whole_gpu_holds(), 0);
  model::device_free_bytes(d, usage.gpu_devices, unplaced, v.free);
  v.cpu_free = node.cpu_milli > 0 ? less_of(node.cpu_milli, usage.cpu_milli) : INT64_MAX;
  v.memory_free = node.memory_bytes > 0 ? less_of(node.memory_bytes, usage.memory_bytes) : INT64_MAX;
}

std::int64_t fragmentation(const GpuNodeView& view, const GpuShape& shape) {
  if (!host_fits(view.cpu_free, view.memory_free, shape) || !model_admits(view.model, shape)) {
    return static_cast<std::int64_t>(std::min<__int128>(stats_of(view).sum_free, INT64_MAX));
  }
  if (is_share(shape)) {
    const std::int64_t need = share_need(view, shape);
    std::int64_t sum = 0;
    for (std::int64_t f : view.free) sum += share_fragment(view, f, need);
    return sum;
  }
  if (shape.whole <= 0) return 0;
  return static_cast<std::int64_t>(whole_fragmentation(stats_of(view), shape.whole));
}

std::optional<std::vector<model::GpuHold>> choose_devices(const model::PodDemand& pod, const model::NodeSupply& node,
                                                          const GpuNodeView& view, PackingStrategy strategy,
                                                          const ShapeMix& mix) {
  if (pod.gpu_share_bytes > 0) {
    const bool by_fragmentation = packing_policy(strategy).share_device == ShareDevice::kLeastFragmentation;
    auto c = choose_share(view, pod.gpu_share_bytes, pod.cpu_milli, pod.memory_bytes, by_fragmentation, mix);
    if (!c) return std::nullopt;
    return std::vector<model::GpuHold>{{static_cast<std::int64_t>(c->index), pod.gpu_share_bytes, false}};
  }
  const std::int64_t k = whole_count(pod, node);
  std::vector<model::GpuHold> holds;
  for (std::size_t i = 0; i < view.free.size() && static_cast<std::int64_t>(holds.size()) < k; ++i) {
    if (view.free[i] == view.capacity) holds.push_back({static_cast<std::int64_t>(i), 0, true});
  }
  if (static_cast<std::int64_t>(holds.size()) < k) return std::nullopt;
  return holds;
}

std::optional<FragmentationDelta> fragmentation_delta(const model::PodDemand& pod, const model::NodeSupply& node,
                                                      const GpuNodeView& view, const ShapeMix& mix,
                                                      NoGpuShapes no_gpu) {
  if (pod.gpu_share_bytes > 0) {
    auto c = choose_share(view, pod.gpu_share_bytes, pod.cpu_milli, pod.memory_bytes, true, mix, no_gpu);
    if (!c) return std::nullopt;
    return c->delta;
  }
  const std::int64_t k = whole_count(pod, node);
  const Stats before = stats_of(view);
  if (before.full < k) return std::nullopt;
  Stats after = before;
  after.full -= k;
  after.sum_free -= static_cast<__int128>(k) * view.capacity;
  std::vector<std::pair<std::int64_t, std::int64_t>> changed(static_cast<std::size_t>(k), {view.capacity, 0});
  const auto groups = group_mix(view, before, mix, pod.cpu_milli, pod.memory_bytes);
  return FragmentationDelta{delta_of(view, before, after, changed, groups, no_gpu),
                            static_cast<__int128>(view.capacity) * total_weight(mix)};
}

std::vector<std::optional<FragmentationDelta>> share_deltas(const model::PodDemand& pod, const GpuNodeView& view,
                                                            const ShapeMix& mix, NoGpuShapes no_gpu) {
  const std::int64_t need = pod.gpu_share_bytes;
  if (need <= 0 || !view.memory_known || need > view.capacity) return {};
  const Stats before = stats_of(view);
  const __int128 den = static_cast<__int128>(view.capacity) * total_weight(mix);
  const auto groups = group_mix(view, before, mix, pod.cpu_milli, pod.memory_bytes);
  std::vector<std::optional<FragmentationDelta>> out(view.free.size());
  for (std::size_t i = 0; i < view.free.size(); ++i) {
    const std::int64_t f = view.free[i];
    if (f < need) continue;
    out[i] = FragmentationDelta{
        delta_of(view, before, after_share(view, before, f, need), {{f, f - need}}, groups, no_gpu), den};
  }
  return out;
}

long double free_after(const model::PodDemand& pod, const model::NodeSupply& node, const GpuNodeView& view) {
  long double left = 0;
  if (view.cpu_free != INT64_MAX && node.cpu_milli > 0) {
    left += static_cast<long double>(view.cpu_free - pod.cpu_milli) / static_cast<long double>(node.cpu_milli);
  }
  if (!view.free.empty()) {
    __int128 free = 0;
    for (std::int64_t f : view.free) free += f;
    free -= pod.gpu_share_bytes > 0 ? pod.gpu_share_bytes : static_cast<__int128>(shape_of(pod).whole) * view.capacity;
    left += static_cast<long double>(free) /
            (static_cast<long double>(view.capacity) * static_cast<long double>(view.free.size()));
  }
  return left;
}

}  // namespace extender::policy
