#include "extender/sim/simulator.h"

#include <algorithm>

#include "extender/engine/engine_builder.h"
#include "extender/policy/dra_fit.h"
#include "extender/policy/gpu_placement.h"
#include "extender/policy/packing.h"
#include "extender/sim/reference_scores.h"
#include "extender/sim/sim_dra.h"
#include "extender/sources/local_binder.h"
#include "extender/state/cluster_state.h"
#include "extender/state/demand_cache.h"

namespace extender::sim {
namespace {

std::string shape_key(const WorkloadRow& r) {
  if (r.num_gpu == 0) return "none";
  if (r.num_gpu == 1 && r.gpu_milli > 0 && r.gpu_milli < 1000) {
    return policy::shape_name({0, 0, r.gpu_milli});
  }
  return std::to_string(r.num_gpu);
}

// The first `n` rows (0: all of them).
std::vector<WorkloadRow> listed(const std::vector<WorkloadRow>& rows, std::size_t n) {
  if (n == 0 || n >= rows.size()) return rows;
  return {rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(n)};
}

double gpu_demand(const WorkloadRow& r) { return static_cast<double>(gpu_milli_requested(r)) / 1000; }

// What a pod that found no node asked. Pods never leave, so free CPU, memory and GPUs only shrink:
// a later pod asking at least as much of each (GPUs of the same kind, or any GPUs when the refused
// pod asked none) finds no node either.
struct Refusal {
  bool share = false;
  std::int64_t gpus = 0;  // whole GPUs, or a share's thousandths
  std::int64_t cpu_milli = 0;
  std::int64_t memory_mib = 0;
  std::vector<std::string> gpu_models;  // sorted; empty: any node

  static Refusal of(const WorkloadRow& r) {
    const bool share = is_share(r);
    return {share, share ? r.gpu_milli : r.num_gpu, r.cpu_milli, r.memory_mib, r.gpu_models};
  }
  // The later pod may run on no node the refused one could not: any, or only models it allowed.
  bool models_covered(const Refusal& later) const {
    if (gpu_models.empty()) return true;
    return !later.gpu_models.empty() &&
           std::includes(gpu_models.begin(), gpu_models.end(), later.gpu_models.begin(), later.gpu_models.end());
  }
  bool covers(const Refusal& later) const {
    const bool gpus_covered = (share == later.share && gpus <= later.gpus) || (!share && gpus == 0);
    return gpus_covered && cpu_milli <= later.cpu_milli && memory_mib <= later.memory_mib && models_covered(later);
  }
};

// What one row asks, as each scheduling cycle reads it.
struct Arrival {
  const WorkloadRow& row;
  model::Pod pod;
  std::int64_t mem_bytes = 0;
  bool managed = false;       // asks GPUs: the daemon filters, prioritizes and binds it
  std::int64_t dra_gpus = 0;  // the whole GPUs a DRA node would allocate to it
};

// A node's free memory per GPU device as the daemon's placements leave it (0: held whole): the
// nodes whose devices cannot hold a GPU pod, which the daemon's filter would refuse, are not sent
// to it.
struct Devices {
  std::int64_t capacity = 0;
  std::vector<std::int64_t> free;  // empty: the node reports no devices or no memory
};

// One simulate() run: the engine on its own state, kube-scheduler as SchedulerModel models it,
// and the figures of PolicyResult as the rows arrive.
class Simulation {
 public:
  Simulation(const std::vector<model::NodeSupply>& nodes, const std::vector<sources::DraGpus>& dra,
             const engine::ExtenderOptions& cfg, const std::vector<WorkloadRow>& rows, std::uint64_t seed,
             const SimulationOptions& options)
      : nodes_(nodes),
        dra_(dra),
        cfg_(cfg),
        options_(options),
        whole_resource_(cfg.demand.gpu_resources.front()),
        memory_(common_device_memory(nodes)),
        demands_(rows.size() + 16, std::chrono::hours(24 * 365)),
        binder_(cluster_),
        dra_source_(dra, whole_resource_),
        ext_(engine::EngineBuilder(cfg, cluster_, demands_, binder_).dra(dra.empty() ? nullptr : &dra_source_).build()),
        scheduler_(nodes, seed, options.scheduler),
        is_dra_(nodes.size(), false),
        device_free_(nodes.size()),
        typical_(options.reference == Reference::kFgd ? typical_pods_mix(listed(rows, options.typical_rows))
                                                      : policy::ShapeMix{}) {
    cluster_.upsert_nodes(nodes);
  }

  // Counts the GPU capacity and gives the scheduler model its DRA nodes; an error when the
  // inventory has no GPUs or a DRA node is not one of its nodes, is listed twice or also has
  // device-plugin GPUs.
  Status prepare();
  // Schedules the index-th row as kube-scheduler would (cycles until a node takes it or every
  // node was searched) and counts it.
  Status arrive(std::size_t index, const WorkloadRow& row);
  PolicyResult finish();

 private:
  // What prioritize reads of a DRA node's GPUs (policy/dra_fit.h), for the pod's demand.
  std::unique_ptr<const policy::DraFit> dra_fit(const model::PodDemand& demand) const {
    if (dra_.empty()) return nullptr;
    return std::make_unique<const policy::DraFit>(demand, dra_source_.dra_snapshot(), dra_source_.dra_classes());
  }
  bool devices_may_hold(std::size_t node, const WorkloadRow& r, std::int64_t share_bytes) const;
  std::vector<std::string> names_of(const std::vector<std::size_t>& at) const;
  double fragmented() const;
  Result<std::vector<std::size_t>> filtered(const Arrival& a, wire::ExtenderArgs& args,
                                            const std::vector<std::size_t>& candidates);
  Result<std::vector<std::int64_t>> scores(const Arrival& a, wire::ExtenderArgs& args,
                                           const std::vector<std::size_t>& candidates);
  Result<std::optional<std::int64_t>> fgd_device(const Arrival& a, std::size_t node) const;
  void move_share(const std::string& uid, std::int64_t device);
  Result<std::optional<std::size_t>> cycle(const Arrival& a);
  Result<bool> refused_again(const Arrival& a);
  void count_refusal(const WorkloadRow& row);
  Status count_placement(const Arrival& a, std::size_t node);

  const std::vector<model::NodeSupply>& nodes_;
  const std::vector<sources::DraGpus>& dra_;
  const engine::ExtenderOptions cfg_;
  const SimulationOptions& options_;
  const std::string whole_resource_;
  const std::int64_t memory_;
  state::ClusterState cluster_;
  state::DemandCache demands_;
  sources::LocalBinder binder_;
  SimDra dra_source_;
  engine::Extender ext_;
  SchedulerModel scheduler_;
  std::int64_t capacity_gpus_ = 0;
  std::map<std::string, std::int64_t, std::less<>> device_memory_;
  std::vector<bool> is_dra_;
  std::vector<Devices> device_free_;  // by position in `nodes_` (the scheduler model's)
  const policy::ShapeMix typical_;    // fgd's mix: the workload's typical pods (typical_pods_mix)
  std::optional<model::PodDemand> one_gpu_;
  PolicyResult out_;
  double arrived_ = 0, allocated_ = 0;
  bool reached_ = false, refused_once_ = false;
  std::vector<Refusal> refusals_;
};

Status Simulation::prepare() {
  capacity_gpus_ = dra_source_.capacity();
  std::map<std::string, std::size_t, std::less<>> position;
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    capacity_gpus_ += nodes_[k].gpu_devices.count;
    device_memory_[nodes_[k].name] = nodes_[k].gpu_devices.memory_bytes;
    position.emplace(nodes_[k].name, k);
  }
  if (capacity_gpus_ == 0) return Error{"the inventory has no GPUs"};
  for (const auto& d : dra_) {
    auto at = position.find(d.node);
    if (at == position.end()) return Error{"DRA node " + d.node + " is not one of the inventory's nodes"};
    if (is_dra_[at->second]) return Error{"DRA node " + d.node + " is listed twice"};
    const auto& gpus = nodes_[at->second].gpus;
    if (auto g = gpus.find(whole_resource_); g != gpus.end() && g->second > 0) {
      return Error{"node " + d.node + " gives " + whole_resource_ + " from a device plugin and from DRA"};
    }
    is_dra_[at->second] = true;
    scheduler_.set_dra_gpus(at->second, d.gpus);
  }
  auto one_gpu = model::compute_demand(workload_pod({"", 1, 1000, 0, 0, {}}, 0, whole_resource_, "", 0), cfg_.demand);
  if (!one_gpu) return Error{one_gpu.message()};
  one_gpu_ = std::move(*one_gpu);
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    const auto& d = nodes_[k].gpu_devices;
    if (d.count > 0 && d.memory_bytes > 0) {
      device_free_[k] = {d.memory_bytes, std::vector<std::int64_t>(static_cast<std::size_t>(d.count), d.memory_bytes)};
    }
  }
  return {};
}

bool Simulation::devices_may_hold(std::size_t node, const WorkloadRow& r, std::int64_t share_bytes) const {
  const Devices& d = device_free_[node];
  if (d.free.empty()) return true;
  if (is_share(r)) return *std::max_element(d.free.begin(), d.free.end()) >= share_bytes;
  return std::count(d.free.begin(), d.free.end(), d.capacity) >= r.num_gpu;
}

std::vector<std::string> Simulation::names_of(const std::vector<std::size_t>& at) const {
  std::vector<std::string> names;
  names.reserve(at.size());
  for (std::size_t k : at) names.push_back(scheduler_.name(k));
  return names;
}

double Simulation::fragmented() const {
  const auto snap = cluster_.snapshot();
  const policy::ShapeMix mix = ext_.shape_mix(snap);
  std::int64_t weight = 0;
  for (const auto& [s, w] : mix) weight += w;
  double sum = 0;
  const auto dra_view = dra_fit(*one_gpu_);
  for (const auto& [name, node] : snap.nodes()) {
    const model::NodeUsage usage = node->usage_excluding("", {});
    const auto served = dra_view ? dra_view->scoring_view(node->supply, usage) : std::nullopt;
    const auto view = served ? policy::gpu_view(served->supply, served->usage) : policy::gpu_view(node->supply, usage);
    for (const auto& [shape, w] : mix) {
      sum += static_cast<double>(w) * policy::fragmentation(view, shape) / view.capacity;
    }
  }
  return weight > 0 ? sum / weight / capacity_gpus_ : 0.0;
}

// The candidates the daemon's filter passes, of those whose devices may hold the pod (the first
// candidate when none may).
Result<std::vector<std::size_t>> Simulation::filtered(const Arrival& a, wire::ExtenderArgs& args,
                                                      const std::vector<std::size_t>& candidates) {
  const std::int64_t share_bytes = (a.row.gpu_milli * memory_ + 999) / 1000;
  std::vector<std::size_t> may_hold;
  for (std::size_t k : candidates) {
    if (devices_may_hold(k, a.row, share_bytes)) may_hold.push_back(k);
  }
  if (may_hold.empty()) may_hold.push_back(candidates.front());
  args.set_node_names(names_of(may_hold));
  auto answer = ext_.filter(args);
  if (!answer.result.error.empty()) return Error{"filter: " + answer.result.error};
  std::vector<std::size_t> passed;
  // The filter keeps the order of the names it was given.
  std::size_t next = 0;
  if (answer.result.node_names) {
    for (std::string_view name : *answer.result.node_names) {
      std::size_t at = next;
      while (at < may_hold.size() && scheduler_.name(may_hold[at]) != name) ++at;
      if (at == may_hold.size()) return Error{"filter answered a node it was not given: " + std::string(name)};
      passed.push_back(may_hold[at]);
      next = at + 1;
    }
  }
  return passed;
}

// The extender's scores of the candidates (empty: it gives none).
Result<std::vector<std::int64_t>> Simulation::scores(const Arrival& a, wire::ExtenderArgs& args,
                                                     const std::vector<std::size_t>& candidates) {
  std::vector<std::int64_t> scores;
  if (candidates.empty() || (!a.managed && options_.deployment != Deployment::kEveryPod)) return scores;
  std::vector<std::string> names = names_of(candidates);
  if (options_.reference == Reference::kBestFit) {
    auto demand = model::compute_demand(a.pod, cfg_.demand);
    if (!demand) return Error{demand.message()};
    return best_fit_scores(cluster_.snapshot(), names, *demand, dra_fit(*demand).get());
  }
  args.set_node_names(names);
  const auto scope = a.managed ? engine::PodScope::kManaged : engine::PodScope::kUnmanaged;
  // The daemon's prioritize still runs (its mix, which bind's device choice reads, sees the pod).
  auto scored = ext_.prioritize(args, {}, scope);
  if (options_.reference == Reference::kFgd) {
    auto demand = model::compute_demand(a.pod, cfg_.demand);
    if (!demand) return Error{demand.message()};
    return fgd_scores(cluster_.snapshot(), names, *demand, typical_, dra_fit(*demand).get());
  }
  if (!scored.scores.empty()) scores.assign(candidates.size(), 0);
  for (std::size_t k = 0; k < scored.scores.size() && k < candidates.size(); ++k) scores[k] = scored.scores[k].score;
  return scores;
}

// Under fgd, the device the FGD paper's simulator gives a share on `node` (fgd_share_device), as
// the node is before the pod binds; nullopt for any other pod or reference.
Result<std::optional<std::int64_t>> Simulation::fgd_device(const Arrival& a, std::size_t node) const {
  if (options_.reference != Reference::kFgd || !a.managed || !is_share(a.row)) return std::optional<std::int64_t>{};
  auto demand = model::compute_demand(a.pod, cfg_.demand);
  if (!demand) return Error{demand.message()};
  return fgd_share_device(cluster_.snapshot(), scheduler_.name(node), *demand, typical_, dra_fit(*demand).get());
}

// Moves the share uid's claim holds to `device` of its node (the daemon's bind chose its own).
void Simulation::move_share(const std::string& uid, std::int64_t device) {
  auto claim = cluster_.claim_of(uid);
  if (!claim) return;
  for (auto& h : claim->allocation.gpu_devices) {
    if (!h.whole) h.index = device;
  }
  cluster_.place(uid, std::move(*claim));
}

// One scheduling cycle: the node that took the pod, nullopt when none did.
Result<std::optional<std::size_t>> Simulation::cycle(const Arrival& a) {
  wire::ExtenderArgs args;
  args.pod = a.pod;
  std::vector<std::size_t> candidates =
      scheduler_.feasible_at(a.row.cpu_milli, a.mem_bytes, a.dra_gpus, a.pod.constraints);
  if (a.managed && !candidates.empty()) {
    auto passed = filtered(a, args, candidates);
    if (!passed) return passed.error();
    candidates = std::move(*passed);
  }
  auto scored = scores(a, args, candidates);
  if (!scored) return scored.error();
  auto pick = scheduler_.choose_at(candidates, *scored, a.row.cpu_milli, a.mem_bytes);
  if (!pick) return std::optional<std::size_t>{};
  const std::size_t node = candidates[*pick];
  if (a.managed) {
    auto device = fgd_device(a, node);
    if (!device) return device.error();
    auto bound = ext_.bind({a.pod.name, a.pod.namespace_name, a.pod.uid, scheduler_.name(node)});
    if (!bound.error.empty()) return std::optional<std::size_t>{};
    if (*device) move_share(a.pod.uid, **device);
  } else {
    state::Claim claim;
    claim.owner = a.pod.display_name();
    claim.node = scheduler_.name(node);
    claim.allocation.cpu_milli = a.row.cpu_milli;
    claim.allocation.memory_bytes = a.mem_bytes;
    cluster_.place(a.pod.uid, std::move(claim));
  }
  return std::optional<std::size_t>{node};
}

// A pod a refusal covers is refused again: its search still moves the scheduler's start as the
// full cycles would, and the daemon's filter still sees the pod once (as it would on the first
// cycle that finds nodes fitting CPU and memory), which counts its shape in the mix.
Result<bool> Simulation::refused_again(const Arrival& a) {
  const Refusal asked = Refusal::of(a.row);
  if (std::none_of(refusals_.begin(), refusals_.end(), [&](const Refusal& r) { return r.covers(asked); })) return false;
  bool filtered = false;
  for (std::size_t searched = 0; searched < scheduler_.node_count();) {
    const std::vector<std::size_t> candidates =
        scheduler_.feasible_at(a.row.cpu_milli, a.mem_bytes, a.dra_gpus, a.pod.constraints);
    if (a.managed && !filtered && !candidates.empty()) {
      wire::ExtenderArgs args;
      args.pod = a.pod;
      args.set_node_names({scheduler_.name(candidates.front())});
      auto answer = ext_.filter(args);
      if (!answer.result.error.empty()) return Error{"filter: " + answer.result.error};
      filtered = true;
    }
    searched += std::max<std::size_t>(scheduler_.last_searched(), 1);
  }
  return true;
}

Status Simulation::arrive(std::size_t index, const WorkloadRow& row) {
  arrived_ += gpu_demand(row);
  const Arrival a{row, workload_pod(row, index, whole_resource_, cfg_.demand.share.memory_resource, memory_),
                  row.memory_mib << 20, row.num_gpu > 0, is_share(row) ? 0 : row.num_gpu};
  std::optional<std::size_t> node;
  auto again = refused_again(a);
  if (!again) return again.error();
  for (std::size_t searched = 0; !*again && !node && searched < scheduler_.node_count();) {
    auto tried = cycle(a);
    if (!tried) return tried.error();
    node = *tried;
    searched += std::max<std::size_t>(scheduler_.last_searched(), 1);
  }
  if (!node && !*again) refusals_.push_back(Refusal::of(row));
  if (!node) {
    count_refusal(row);
  } else {
    EXTENDER_TRY(count_placement(a, *node));
  }
  if (!reached_ && arrived_ >= capacity_gpus_) {
    reached_ = true;
    out_.allocated_at_100 = allocated_ / capacity_gpus_;
    out_.fragmented_at_100 = fragmented();
  }
  return {};
}

void Simulation::count_refusal(const WorkloadRow& row) {
  ++out_.refused[shape_key(row)];
  if (!refused_once_) out_.first_refusal_at = arrived_ / capacity_gpus_;
  refused_once_ = true;
}

// Takes the pod's devices from the node's free ones (and on a DRA node allocates them), counts
// it on the scheduler model's node and records the placement.
Status Simulation::count_placement(const Arrival& a, std::size_t node) {
  std::vector<model::GpuHold> devices;
  if (auto claim = a.managed ? cluster_.claim_of(a.pod.uid) : std::nullopt) {
    devices = claim->allocation.gpu_devices;
  }
  std::vector<std::int64_t>& free = device_free_[node].free;
  for (const auto& h : devices) {
    if (h.index < 0 || static_cast<std::size_t>(h.index) >= free.size()) continue;
    const auto k = static_cast<std::size_t>(h.index);
    free[k] = h.whole ? 0 : free[k] - h.bytes;
  }
  const std::string& chosen = scheduler_.name(node);
  if (is_dra_[node] && a.dra_gpus > 0) {
    auto taken = dra_source_.allocate(chosen, a.dra_gpus);
    if (!taken) return Error{"DRA allocator: " + taken.message()};
    for (std::int64_t index : *taken) devices.push_back({index, 0, true});
  }
  scheduler_.place_at(node, a.row.cpu_milli, a.mem_bytes, is_dra_[node] ? a.dra_gpus : 0);
  if (is_share(a.row)) {
    allocated_ += static_cast<double>((a.row.gpu_milli * memory_ + 999) / 1000) / device_memory_[chosen];
  } else {
    allocated_ += a.row.num_gpu;
  }
  out_.placements.push_back({a.row.name, chosen, std::move(devices)});
  return {};
}

PolicyResult Simulation::finish() {
  out_.allocated_at_end = allocated_ / capacity_gpus_;
  if (!reached_) {
    out_.allocated_at_100 = out_.allocated_at_end;
    out_.fragmented_at_100 = fragmented();
  }
  if (!refused_once_) out_.first_refusal_at = arrived_ / capacity_gpus_;
  return std::move(out_);
}

}  // namespace

std::int64_t common_device_memory(const std::vector<model::NodeSupply>& nodes) {
  std::map<std::int64_t, std::int64_t> by_memory;
  for (const auto& n : nodes) {
    if (n.gpu_devices.memory_bytes > 0) by_memory[n.gpu_devices.memory_bytes] += n.gpu_devices.count;
  }
  std::int64_t best = 0, count = 0;
  for (const auto& [m, c] : by_memory) {
    if (c > count) best = m, count = c;
  }
  return best;
}

model::Pod workload_pod(const WorkloadRow& row, std::size_t index, const std::string& whole_resource,
                        const std::string& share_resource, std::int64_t device_memory) {
  model::Pod pod;
  pod.uid = "sim-" + std::to_string(index);
  pod.name = row.name;
  pod.namespace_name = "sim";
  model::Container c;
  c.name = "main";
  if (is_share(row)) {
    c.requests[share_resource] = std::to_string((row.gpu_milli * device_memory + 999) / 1000);
  } else if (row.num_gpu > 0) {
    c.requests[whole_resource] = std::to_string(row.num_gpu);
  }
  if (!row.gpu_models.empty()) {
    model::NodeSelectorTerm term;
    term.match_expressions.push_back({kGpuModelLabel, "In", row.gpu_models});
    pod.constraints.required_node_affinity = std::vector<model::NodeSelectorTerm>{std::move(term)};
  }
  c.requests["cpu"] = std::to_string(row.cpu_milli) + "m";
  c.requests["memory"] = std::to_string(row.memory_mib) + "Mi";
  pod.containers.push_back(std::move(c));
  return pod;
}

std::optional<Reference> parse_reference(std::string_view name) {
  if (name == "best-fit") return Reference::kBestFit;
  if (name == "fgd") return Reference::kFgd;
  return std::nullopt;
}

const char* deployment_name(Deployment d) { return d == Deployment::kGpuPods ? "gpu-pods" : "every-pod"; }

std::optional<Deployment> parse_deployment(std::string_view name) {
  for (auto d : {Deployment::kGpuPods, Deployment::kEveryPod}) {
    if (name == deployment_name(d)) return d;
  }
  return std::nullopt;
}

Result<PolicyResult> simulate(const std::vector<model::NodeSupply>& nodes, const std::vector<WorkloadRow>& rows,
                              const engine::ExtenderOptions& base, policy::PackingStrategy strategy, std::uint64_t seed,
                              const SimulationOptions& options) {
  return simulate(nodes, {}, rows, base, strategy, seed, options);
}

Result<PolicyResult> simulate(const std::vector<model::NodeSupply>& nodes, const std::vector<sources::DraGpus>& dra,
                              const std::vector<WorkloadRow>& rows, const engine::ExtenderOptions& base,
                              policy::PackingStrategy strategy, std::uint64_t seed, const SimulationOptions& options) {
  engine::ExtenderOptions cfg = base;
  cfg.scoring.packing = strategy;
  cfg.demand.share.unit_bytes = 1;
  if (cfg.demand.gpu_resources.empty() || cfg.demand.share.memory_resource.empty()) {
    return Error{"simulate needs a whole-GPU resource and gpu.share"};
  }
  Simulation run(nodes, dra, cfg, rows, seed, options);
  EXTENDER_TRY(run.prepare());
  for (std::size_t i = 0; i < rows.size(); ++i) EXTENDER_TRY(run.arrive(i, rows[i]));
  return run.finish();
}

}  // namespace extender::sim
