#include "extender/sim/simulator.h"

#include <algorithm>

#include "extender/engine/extender.h"
#include "extender/policy/dra_fit.h"
#include "extender/policy/gpu_placement.h"
#include "extender/policy/packing.h"
#include "extender/sim/best_fit.h"
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

double gpu_demand(const WorkloadRow& r) { return static_cast<double>(gpu_milli_requested(r)) / 1000; }

// What a pod that found no node asked. Pods never leave, so free CPU, memory and GPUs only shrink:
// a later pod asking at least as much of each (GPUs of the same kind, or any GPUs when the refused
// pod asked none) finds no node either.
struct Refusal {
  bool share = false;
  std::int64_t gpus = 0;  // whole GPUs, or a share's thousandths
  std::int64_t cpu_milli = 0;
  std::int64_t memory_mib = 0;

  static Refusal of(const WorkloadRow& r) {
    const bool share = is_share(r);
    return {share, share ? r.gpu_milli : r.num_gpu, r.cpu_milli, r.memory_mib};
  }
  bool covers(const Refusal& later) const {
    const bool gpus_covered = (share == later.share && gpus <= later.gpus) || (!share && gpus == 0);
    return gpus_covered && cpu_milli <= later.cpu_milli && memory_mib <= later.memory_mib;
  }
};

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
  c.requests["cpu"] = std::to_string(row.cpu_milli) + "m";
  c.requests["memory"] = std::to_string(row.memory_mib) + "Mi";
  pod.containers.push_back(std::move(c));
  return pod;
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
  const std::string whole_resource = cfg.demand.gpu_resources.front();
  const std::int64_t memory = common_device_memory(nodes);

  state::ClusterState cluster;
  cluster.upsert_nodes(nodes);
  state::DemandCache demands(rows.size() + 16, std::chrono::hours(24 * 365));
  sources::LocalBinder binder(cluster);
  SimDra dra_source(dra, whole_resource);
  engine::ExtenderDeps deps;
  deps.state = &cluster;
  deps.demands = &demands;
  deps.binder = &binder;
  if (!dra.empty()) deps.dra = &dra_source;
  engine::Extender ext(cfg, deps);

  std::int64_t capacity_gpus = dra_source.capacity();
  std::map<std::string, std::int64_t, std::less<>> device_memory;
  std::map<std::string, std::size_t, std::less<>> position;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    capacity_gpus += nodes[k].gpu_devices.count;
    device_memory[nodes[k].name] = nodes[k].gpu_devices.memory_bytes;
    position.emplace(nodes[k].name, k);
  }
  if (capacity_gpus == 0) return Error{"the inventory has no GPUs"};
  SchedulerModel scheduler(nodes, seed, options.scheduler);
  std::vector<bool> is_dra(nodes.size(), false);
  for (const auto& d : dra) {
    auto at = position.find(d.node);
    if (at == position.end()) return Error{"DRA node " + d.node + " is not one of the inventory's nodes"};
    if (is_dra[at->second]) return Error{"DRA node " + d.node + " is listed twice"};
    if (auto g = nodes[at->second].gpus.find(whole_resource); g != nodes[at->second].gpus.end() && g->second > 0) {
      return Error{"node " + d.node + " gives " + whole_resource + " from a device plugin and from DRA"};
    }
    is_dra[at->second] = true;
    scheduler.set_dra_gpus(at->second, d.gpus);
  }
  const model::DemandRules rules = cfg.demand;
  // What prioritize reads of a DRA node's GPUs (policy/dra_fit.h), for the pod's demand.
  auto dra_fit = [&](const model::PodDemand& demand) -> std::unique_ptr<const policy::DraFit> {
    if (dra.empty()) return nullptr;
    return std::make_unique<const policy::DraFit>(demand, dra_source.dra_snapshot(), dra_source.dra_classes());
  };
  auto one_gpu = model::compute_demand(workload_pod({"", 1, 1000, 0, 0}, 0, whole_resource, "", 0), rules);
  if (!one_gpu) return Error{one_gpu.message()};
  PolicyResult out;
  double arrived = 0, allocated = 0;
  bool reached = false, refused_once = false;
  std::vector<Refusal> refusals;
  // Each node's free memory per GPU device as the daemon's placements leave it (0: held whole),
  // by position in `nodes` (the scheduler model's): the nodes whose devices cannot hold a GPU pod,
  // which the daemon's filter would refuse, are not sent to it.
  struct Devices {
    std::int64_t capacity = 0;
    std::vector<std::int64_t> free;  // empty: the node reports no devices or no memory
  };
  std::vector<Devices> device_free(nodes.size());
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const auto& d = nodes[k].gpu_devices;
    if (d.count > 0 && d.memory_bytes > 0) {
      device_free[k] = {d.memory_bytes, std::vector<std::int64_t>(static_cast<std::size_t>(d.count), d.memory_bytes)};
    }
  }
  auto devices_may_hold = [&](std::size_t node, const WorkloadRow& r, std::int64_t share_bytes) {
    const Devices& d = device_free[node];
    if (d.free.empty()) return true;
    if (is_share(r)) return *std::max_element(d.free.begin(), d.free.end()) >= share_bytes;
    return std::count(d.free.begin(), d.free.end(), d.capacity) >= r.num_gpu;
  };
  auto names_of = [&](const std::vector<std::size_t>& at) {
    std::vector<std::string> names;
    names.reserve(at.size());
    for (std::size_t k : at) names.push_back(scheduler.name(k));
    return names;
  };

  auto fragmented = [&] {
    const policy::ShapeMix mix = ext.shape_mix();
    std::int64_t weight = 0;
    for (const auto& [s, w] : mix) weight += w;
    double sum = 0;
    const auto snap = cluster.snapshot();
    const auto dra_view = dra_fit(*one_gpu);
    for (const auto& [name, node] : snap.nodes()) {
      const model::NodeUsage usage = node->usage_excluding("", {});
      const auto served = dra_view ? dra_view->scoring_view(node->supply, usage) : std::nullopt;
      const auto view = served ? policy::gpu_view(served->supply, served->usage) : policy::gpu_view(node->supply, usage);
      for (const auto& [shape, w] : mix) {
        sum += static_cast<double>(w) * policy::fragmentation(view, shape) / view.capacity;
      }
    }
    return weight > 0 ? sum / weight / capacity_gpus : 0.0;
  };

  for (std::size_t i = 0; i < rows.size(); ++i) {
    const WorkloadRow& row = rows[i];
    arrived += gpu_demand(row);
    const model::Pod pod = workload_pod(row, i, whole_resource, cfg.demand.share.memory_resource, memory);
    const std::int64_t mem_bytes = row.memory_mib << 20;

    const bool managed = row.num_gpu > 0;
    const std::int64_t dra_gpus = is_share(row) ? 0 : row.num_gpu;
    auto cycle = [&]() -> Result<std::optional<std::size_t>> {
      wire::ExtenderArgs args;
      args.pod = pod;
      std::vector<std::size_t> candidates = scheduler.feasible_at(row.cpu_milli, mem_bytes, dra_gpus);
      if (managed && !candidates.empty()) {
        const std::int64_t share_bytes = (row.gpu_milli * memory + 999) / 1000;
        std::vector<std::size_t> may_hold;
        for (std::size_t k : candidates) {
          if (devices_may_hold(k, row, share_bytes)) may_hold.push_back(k);
        }
        if (may_hold.empty()) may_hold.push_back(candidates.front());
        args.set_node_names(names_of(may_hold));
        auto filtered = ext.filter(args);
        if (!filtered.result.error.empty()) return Error{"filter: " + filtered.result.error};
        candidates.clear();
        // The filter keeps the order of the names it was given.
        std::size_t next = 0;
        if (filtered.result.node_names) {
          for (std::string_view name : *filtered.result.node_names) {
            std::size_t at = next;
            while (at < may_hold.size() && scheduler.name(may_hold[at]) != name) ++at;
            if (at == may_hold.size()) return Error{"filter answered a node it was not given: " + std::string(name)};
            candidates.push_back(may_hold[at]);
            next = at + 1;
          }
        }
      }
      std::vector<std::int64_t> scores;
      if (!candidates.empty() && (managed || options.deployment == Deployment::kEveryPod)) {
        std::vector<std::string> names = names_of(candidates);
        if (options.best_fit) {
          auto demand = model::compute_demand(pod, rules);
          if (!demand) return Error{demand.message()};
          scores = best_fit_scores(cluster.snapshot(), names, *demand, dra_fit(*demand).get());
        } else {
          args.set_node_names(std::move(names));
          const auto scope = managed ? engine::PodScope::kManaged : engine::PodScope::kUnmanaged;
          auto scored = ext.prioritize(args, {}, scope);
          if (!scored.scores.empty()) scores.assign(candidates.size(), 0);
          for (std::size_t k = 0; k < scored.scores.size() && k < candidates.size(); ++k) scores[k] = scored.scores[k].score;
        }
      }
      auto pick = scheduler.choose_at(candidates, scores, row.cpu_milli, mem_bytes);
      if (!pick) return std::optional<std::size_t>{};
      const std::size_t node = candidates[*pick];
      if (managed) {
        auto bound = ext.bind({pod.name, pod.namespace_name, pod.uid, scheduler.name(node)});
        if (!bound.error.empty()) return std::optional<std::size_t>{};
      } else {
        state::Claim claim;
        claim.owner = pod.display_name();
        claim.node = scheduler.name(node);
        claim.allocation.cpu_milli = row.cpu_milli;
        claim.allocation.memory_bytes = mem_bytes;
        cluster.place(pod.uid, std::move(claim));
      }
      return std::optional<std::size_t>{node};
    };
    // A pod a refusal covers is refused again: its search still moves the scheduler's start as the
    // full cycles would, and the daemon's filter still sees the pod once (as it would on the
    // first cycle that finds nodes fitting CPU and memory), which counts its shape in the mix.
    auto refused_again = [&]() -> Result<bool> {
      const Refusal asked = Refusal::of(row);
      if (std::none_of(refusals.begin(), refusals.end(), [&](const Refusal& r) { return r.covers(asked); })) return false;
      bool filtered = false;
      for (std::size_t searched = 0; searched < scheduler.node_count();) {
        const std::vector<std::size_t> candidates = scheduler.feasible_at(row.cpu_milli, mem_bytes, dra_gpus);
        if (managed && !filtered && !candidates.empty()) {
          wire::ExtenderArgs args;
          args.pod = pod;
          args.set_node_names({scheduler.name(candidates.front())});
          auto answer = ext.filter(args);
          if (!answer.result.error.empty()) return Error{"filter: " + answer.result.error};
          filtered = true;
        }
        searched += std::max<std::size_t>(scheduler.last_searched(), 1);
      }
      return true;
    };
    std::optional<std::size_t> node;
    auto again = refused_again();
    if (!again) return again.error();
    for (std::size_t searched = 0; !*again && !node && searched < scheduler.node_count();) {
      auto tried = cycle();
      if (!tried) return tried.error();
      node = *tried;
      searched += std::max<std::size_t>(scheduler.last_searched(), 1);
    }
    if (!node && !*again) refusals.push_back(Refusal::of(row));
    std::vector<model::GpuHold> devices;
    if (auto claim = managed && node ? cluster.claim_of(pod.uid) : std::nullopt) {
      devices = claim->allocation.gpu_devices;
    }
    if (!node) {
      ++out.refused[shape_key(row)];
      if (!refused_once) out.first_refusal_at = arrived / capacity_gpus;
      refused_once = true;
    } else {
      std::vector<std::int64_t>& free = device_free[*node].free;
      for (const auto& h : devices) {
        if (h.index < 0 || static_cast<std::size_t>(h.index) >= free.size()) continue;
        const auto k = static_cast<std::size_t>(h.index);
        free[k] = h.whole ? 0 : free[k] - h.bytes;
      }
      const std::string& chosen = scheduler.name(*node);
      if (is_dra[*node] && dra_gpus > 0) {
        auto taken = dra_source.allocate(chosen, dra_gpus);
        if (!taken) return Error{"DRA allocator: " + taken.message()};
        for (std::int64_t index : *taken) devices.push_back({index, 0, true});
      }
      scheduler.place_at(*node, row.cpu_milli, mem_bytes, is_dra[*node] ? dra_gpus : 0);
      if (is_share(row)) {
        allocated += static_cast<double>((row.gpu_milli * memory + 999) / 1000) / device_memory[chosen];
      } else {
        allocated += row.num_gpu;
      }
      out.placements.push_back({row.name, chosen, std::move(devices)});
    }
    if (!reached && arrived >= capacity_gpus) {
      reached = true;
      out.allocated_at_100 = allocated / capacity_gpus;
      out.fragmented_at_100 = fragmented();
    }
  }
  out.allocated_at_end = allocated / capacity_gpus;
  if (!reached) {
    out.allocated_at_100 = out.allocated_at_end;
    out.fragmented_at_100 = fragmented();
  }
  if (!refused_once) out.first_refusal_at = arrived / capacity_gpus;
  return out;
}

}  // namespace extender::sim
