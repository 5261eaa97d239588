#pragma once
// GPU device placement: which devices of a node a pod takes, and the packing policies' view of a
// node's GPUs. A task shape is k whole GPUs, a share of one GPU (memory, or a fraction of the
// device for prior shapes) or no GPU, with the CPU and memory the task asks of its node.
// Fragmentation of a node for a shape is the free GPU memory that shape cannot use there: all of
// it when the shape does not fit at all (too few GPUs, or too little free CPU or memory on the
// node, as in FGD, Beware of Fragmentation, ATC'23); for whole GPUs, the free memory of partly
// used devices; for a share, the devices with less free memory than the share; for no GPU,
// nothing. The expected fragmentation weighs shapes by a mix. `binpack` and `spread` take the
// best-fit device (least free memory that holds a share; lowest-index free devices for whole
// GPUs); `fragmentation` takes the device whose choice raises the node's expected fragmentation
// least (ties: best fit). Pure: no I/O, no locks, no JSON.
#include <compare>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "extender/common/result.h"
#include "extender/model/demand.h"
#include "extender/model/gpu_model_supply.h"
#include "extender/model/supply.h"
#include "extender/model/usage.h"

namespace extender::policy {

enum class PackingStrategy { kBinpack, kSpread, kFragmentation };
const char* packing_name(PackingStrategy s);  // "binpack", "spread", "fragmentation"
std::optional<PackingStrategy> parse_packing(std::string_view name);

// Ordered by its GPU part first, so that shapes of equal GPU part are adjacent in a sorted mix.
struct GpuShape {
  std::int64_t whole = 0;         // k whole GPUs
  std::int64_t share_bytes = 0;   // a share of one GPU, as memory
  std::int64_t share_milli = 0;   // a share of one GPU, as thousandths of the device (prior shapes)
  std::int64_t cpu_milli = 0;     // CPU the task asks of the node (0: none, or not counted)
  std::int64_t memory_bytes = 0;  // memory the task asks of the node
  // The GPU models (model::kGpuProductLabel values) the task may use, sorted and unique; empty:
  // any. A node of another model (or of none) holds nothing of it: all its free GPU memory is
  // fragmentation for the shape.
  std::vector<std::string> models = {};
  auto operator<=>(const GpuShape&) const = default;
};

// A shape from its GPUs: "2" is two whole GPUs, "0.5" half of one (thousandths, below 1).
Result<GpuShape> parse_shape(std::string_view gpus);
// The shape as GPUs ("2", "0.5"); shares given as memory read "<bytes>B".
std::string shape_name(const GpuShape& shape);

// The pod's shape: a share, or its whole GPUs summed over resources (0 for none), with its CPU
// and memory requests and the GPU models its constraints admit (gpu_models_allowed).
GpuShape shape_of(const model::PodDemand& pod);

using ShapeMix = std::vector<std::pair<GpuShape, std::int64_t>>;  // shape -> weight (> 0)

// The recent mix of shapes: the last `capacity` shapes added plus a prior of pseudo-counts. With
// `size_exponent` e > 0 a shape of k whole GPUs that may use a share u of the cluster's GPUs
// weighs (k / u)^e pods (shares and pods without GPUs count k = 1; u is 1 for a shape of any
// model, and at least 1/kMaxScarcity; each weight then in quarters, the prior's too), so that the
// shapes whose refusal loses the most GPUs and which fewer nodes can hold, large ones and ones
// bound to scarce models, count for more than their number; at 0 each pod counts once. The
// weights' total is kept below 2^24 (scaled down alike), which keeps fragmentation's exact
// ratios within 128 bits. A value type; not thread-safe (its owner serialises access).
inline constexpr double kMaxScarcity = 32;
class ShapeWindow {
 public:
  ShapeWindow(std::size_t capacity, ShapeMix prior, double size_exponent = 0);
  void add(const GpuShape& shape);  // an empty shape (no GPU, CPU or memory) is ignored
  // `supply`: the cluster's GPUs by model, for the shapes bound to models (empty: u = 1 for all).
  ShapeMix mix(const model::GpuModelSupply& supply = {}) const;

 private:
  std::int64_t unit_weight(const GpuShape& shape, const model::GpuModelSupply& supply) const;

  std::size_t capacity_;
  ShapeMix prior_;
  double size_exponent_;
  std::deque<GpuShape> recent_;
  std::map<GpuShape, std::int64_t> counts_;
};

// A node's devices as placement sees them: each device's free memory out of `capacity` (memory per
// device, or 1 when the node does not report memory: then only whole GPUs are placed), and the
// node's CPU and memory not requested by the allocations it holds (INT64_MAX when the node reports
// none; never below 0).
struct GpuNodeView {
  std::int64_t capacity = 1;
  std::string_view model;  // the node's gpu_model (points into the node, which outlives the view)
  bool memory_known = false;
  std::vector<std::int64_t> free;
  std::int64_t cpu_free = INT64_MAX;
  std::int64_t memory_free = INT64_MAX;
  bool operator==(const GpuNodeView&) const = default;
};
GpuNodeView gpu_view(const model::NodeSupply& node, const model::NodeUsage& usage);
// The same into `view` (its device list's capacity reused): for a loop over many nodes.
void gpu_view(const model::NodeSupply& node, const model::NodeUsage& usage, GpuNodeView& view);

// Fragmentation of the view for one shape, in bytes (device units when memory is unknown).
std::int64_t fragmentation(const GpuNodeView& view, const GpuShape& shape);

// The devices the pod takes on the node under `strategy`; nullopt when its GPU demand does not fit
// on the devices (or the pod's whole GPUs are not of the devices' resource: then empty holds).
std::optional<std::vector<model::GpuHold>> choose_devices(const model::PodDemand& pod, const model::NodeSupply& node,
                                                          const GpuNodeView& view, PackingStrategy strategy,
                                                          const ShapeMix& mix);

// The increase of expected fragmentation the best choice makes, as num / den (den > 0: the device
// capacity times the mix's total weight), comparable across nodes; nullopt when nothing fits. The
// pod's CPU and memory are taken from the node's free CPU and memory: a shape of the mix that fit
// before and no longer does turns all the node's free GPU memory into fragmentation. Linear in the
// mix's size per node.
struct FragmentationDelta {
  __int128 num = 0;
  __int128 den = 1;
};
// How a shape of the mix that asks no GPU counts a node's free GPU memory: as fragmentation only
// once the node can no longer hold the shape's CPU and memory (the daemon's rule), or always (the
// FGD paper's simulator: a task without GPUs uses none of them, so all of them are fragmentation
// for it, whether it fits or not).
enum class NoGpuShapes { kFragmentWhenHostFull, kAlwaysFragment };
std::optional<FragmentationDelta> fragmentation_delta(const model::PodDemand& pod, const model::NodeSupply& node,
                                                      const GpuNodeView& view, const ShapeMix& mix,
                                                      NoGpuShapes no_gpu = NoGpuShapes::kFragmentWhenHostFull);
// For a share (pod.gpu_share_bytes > 0): the increase of expected fragmentation placing it on each
// device makes, one entry per device of the view (nullopt where the share does not fit), as
// fragmentation_delta counts it. Empty for a pod asking no share, or when memory is unknown.
std::vector<std::optional<FragmentationDelta>> share_deltas(const model::PodDemand& pod, const GpuNodeView& view,
                                                            const ShapeMix& mix,
                                                            NoGpuShapes no_gpu = NoGpuShapes::kFragmentWhenHostFull);

// Best-fit's measure of what the node keeps free once it holds the pod (less is a tighter fit):
// its free CPU after over its CPU (0 when either is unknown), plus its devices' free memory after
// over all of their memory (0 without devices).
long double free_after(const model::PodDemand& pod, const model::NodeSupply& node, const GpuNodeView& view);

}  // namespace extender::policy
