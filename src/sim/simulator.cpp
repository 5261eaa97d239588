#include "extender/sim/simulator.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "extender/engine/extender.h"
#include "extender/policy/gpu_devices.h"
#include "extender/policy/packing.h"
#include "extender/sim/best_fit.h"
#include "extender/sources/inventory.h"
#include "extender/sources/local_binder.h"
#include "extender/state/cluster_state.h"
#include "extender/state/demand_cache.h"

namespace extender::sim {
namespace {

// Every GPU of the trace as 1000 MiB, so a share of n thousandths is exactly n MiB.
constexpr std::int64_t kTraceGpuMemory = std::int64_t{1000} << 20;

std::string shape_key(const WorkloadRow& r) {
  if (r.num_gpu == 0) return "none";
  if (r.num_gpu == 1 && r.gpu_milli > 0 && r.gpu_milli < 1000) {
    return policy::shape_name({0, 0, r.gpu_milli});
  }
  return std::to_string(r.num_gpu);
}

double gpu_demand(const WorkloadRow& r) { return static_cast<double>(gpu_milli_requested(r)) / 1000; }

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
  engine::ExtenderDeps deps;
  deps.state = &cluster;
  deps.demands = &demands;
  deps.binder = &binder;
  engine::Extender ext(cfg, deps);

  std::int64_t capacity_gpus = 0;
  std::map<std::string, std::int64_t, std::less<>> device_memory;
  for (const auto& n : nodes) {
    capacity_gpus += n.gpu_devices.count;
    device_memory[n.name] = n.gpu_devices.memory_bytes;
  }
  if (capacity_gpus == 0) return Error{"the inventory has no GPUs"};
  SchedulerModel scheduler(nodes, seed, options.scheduler);
  const model::DemandRules rules = cfg.demand;
  PolicyResult out;
  double arrived = 0, allocated = 0;
  bool reached = false, refused_once = false;

  auto fragmented = [&] {
    const policy::ShapeMix mix = ext.shape_mix();
    std::int64_t weight = 0;
    for (const auto& [s, w] : mix) weight += w;
    double sum = 0;
    const auto snap = cluster.snapshot();
    for (const auto& [name, node] : snap.nodes()) {
      const auto view = policy::gpu_view(node->supply, node->usage_excluding("", {}));
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
    auto cycle = [&]() -> Result<std::string> {
      wire::ExtenderArgs args;
      args.pod = pod;
      std::vector<std::string> candidates = scheduler.feasible(row.cpu_milli, mem_bytes);
      if (managed && !candidates.empty()) {
        args.set_node_names(candidates);
        auto filtered = ext.filter(args);
        if (!filtered.result.error.empty()) return Error{"filter: " + filtered.result.error};
        candidates.clear();
        if (filtered.result.node_names) candidates.assign(filtered.result.node_names->begin(), filtered.result.node_names->end());
      }
      std::vector<std::int64_t> scores;
      if (!candidates.empty() && (managed || options.deployment == Deployment::kEveryPod)) {
        args.set_node_names(candidates);
        if (options.best_fit) {
          auto demand = model::compute_demand(pod, rules);
          if (!demand) return Error{demand.message()};
          scores = best_fit_scores(cluster.snapshot(), candidates, *demand);
        } else {
          const auto scope = managed ? engine::PodScope::kManaged : engine::PodScope::kUnmanaged;
          auto scored = ext.prioritize(args, {}, scope);
          if (!scored.scores.empty()) scores.assign(candidates.size(), 0);
          for (std::size_t k = 0; k < scored.scores.size() && k < candidates.size(); ++k) scores[k] = scored.scores[k].score;
        }
      }
      std::string chosen;
      if (auto pick = scheduler.choose(candidates, scores, row.cpu_milli, mem_bytes)) chosen = candidates[*pick];
      if (!chosen.empty() && managed) {
        auto bound = ext.bind({pod.name, pod.namespace_name, pod.uid, chosen});
        if (!bound.error.empty()) chosen.clear();
      } else if (!chosen.empty()) {
        state::Claim claim;
        claim.owner = pod.display_name();
        claim.node = chosen;
        claim.allocation.cpu_milli = row.cpu_milli;
        claim.allocation.memory_bytes = mem_bytes;
        cluster.place(pod.uid, std::move(claim));
      }
      return chosen;
    };
    std::string chosen;
    for (std::size_t searched = 0; chosen.empty() && searched < scheduler.node_count();) {
      auto tried = cycle();
      if (!tried) return tried.error();
      chosen = *tried;
      searched += std::max<std::size_t>(scheduler.last_searched(), 1);
    }
    std::vector<model::GpuHold> devices;
    if (auto claim = managed && !chosen.empty() ? cluster.claim_of(pod.uid) : std::nullopt) {
      devices = claim->allocation.gpu_devices;
    }
    if (chosen.empty()) {
      ++out.refused[shape_key(row)];
      if (!refused_once) out.first_refusal_at = arrived / capacity_gpus;
      refused_once = true;
    } else {
      scheduler.place(chosen, row.cpu_milli, mem_bytes);
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

namespace {

Result<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"cannot read " + path};
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The trace's node and pod lists in `dir`, the pods arranged by the paper's protocol for `seed`.
Result<std::pair<std::vector<model::NodeSupply>, std::vector<WorkloadRow>>> read_trace(const std::string& dir,
                                                                                      const std::string& gpu_resource,
                                                                                      std::uint64_t seed) {
  const std::string node_file = dir + "/openb_node_list_gpu_node.csv";
  const std::string pod_file = dir + "/openb_pod_list_default.csv";
  auto node_text = read_text(node_file);
  if (!node_text) return node_text.error();
  auto pod_text = read_text(pod_file);
  if (!pod_text) return pod_text.error();
  if (gpu_resource.empty()) return Error{"simulate needs a whole-GPU resource"};
  auto nodes = parse_trace_nodes(*node_text, node_file, gpu_resource, kTraceGpuMemory);
  if (!nodes) return nodes.error();
  auto pods = parse_trace_pods(*pod_text, pod_file);
  if (!pods) return pods.error();
  std::int64_t capacity = 0;
  for (const auto& n : *nodes) capacity += n.gpu_devices.count;
  return std::pair{std::move(*nodes), paper_workload(std::move(*pods), capacity, seed)};
}

}  // namespace

int run_simulate_command(int argc, const char* const* argv, const SimulatorConfigLoader& load_config) {
  std::string inventory, workload, trace, config_file;
  struct Policy {
    std::string name;
    policy::PackingStrategy packing = policy::PackingStrategy::kBinpack;
    bool best_fit = false;
  };
  std::vector<Policy> policies;
  std::uint64_t seed = 1;
  bool json = false;
  SimulationOptions options;
  auto usage = [] {
    std::fputs("usage: scheduler-extender simulate (--inventory FILE --workload FILE | --trace DIR) [--policy NAME]... "
               "[--deployment gpu-pods|every-pod] [--weight N] [--percentage-of-nodes-to-score N] [--seed N] [--json] "
               "[--config FILE]\n", stderr);
    return 2;
  };
  auto count = [](const char* v, std::int64_t low, std::int64_t high) -> std::optional<std::int64_t> {
    try {
      std::size_t used = 0;
      const long long n = std::stoll(v, &used);
      if (used == std::string_view(v).size() && n >= low && n <= high) return n;
    } catch (const std::exception&) {
    }
    return std::nullopt;
  };
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--json") {
      json = true;
    } else if (a == "--inventory" && (v = value())) {
      inventory = v;
    } else if (a == "--workload" && (v = value())) {
      workload = v;
    } else if (a == "--trace" && (v = value())) {
      trace = v;
    } else if (a == "--config" && (v = value())) {
      config_file = v;
    } else if (a == "--seed" && (v = value())) {
      try {
        seed = std::stoull(v);
      } catch (const std::exception&) {
        return usage();
      }
    } else if (a == "--policy" && (v = value())) {
      auto p = policy::parse_packing(v);
      if (!p && std::string_view(v) != "best-fit") {
        std::fprintf(stderr, "scheduler-extender simulate: unknown policy \"%s\" (binpack, spread, fragmentation, best-fit)\n", v);
        return 2;
      }
      policies.push_back({v, p.value_or(policy::PackingStrategy::kBinpack), !p});
    } else if (a == "--deployment" && (v = value())) {
      auto d = parse_deployment(v);
      if (!d) return usage();
      options.deployment = *d;
    } else if (a == "--weight" && (v = value())) {
      auto n = count(v, 1, 100000);
      if (!n) return usage();
      options.scheduler.extender_weight = *n;
    } else if (a == "--percentage-of-nodes-to-score" && (v = value())) {
      auto n = count(v, 0, 100);
      if (!n) return usage();
      options.scheduler.percentage_of_nodes_to_score = *n;
    } else {
      return usage();
    }
  }
  if (trace.empty() == (inventory.empty() || workload.empty()) || (!trace.empty() && !(inventory + workload).empty())) {
    return usage();
  }
  if (policies.empty()) {
    for (const auto& p : policy::packing_policies()) policies.push_back({p.name, p.strategy, false});
  }
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "scheduler-extender simulate: %s\n", message.c_str());
    return 2;
  };
  auto cfg = load_config(config_file);
  if (!cfg) return fail(cfg.message());
  std::vector<model::NodeSupply> nodes;
  std::vector<WorkloadRow> rows;
  if (!trace.empty()) {
    auto read = read_trace(trace, cfg->gpu_resources.empty() ? std::string() : cfg->gpu_resources.front().name, seed);
    if (!read) return fail(read.message());
    nodes = std::move(read->first);
    rows = std::move(read->second);
  } else {
    auto inv = sources::load_inventory(inventory, cfg->gpu_resources, cfg->share);
    if (!inv) return fail(inv.message());
    auto text = read_text(workload);
    if (!text) return fail(text.message());
    auto parsed = parse_workload(*text, workload);
    if (!parsed) return fail(parsed.message());
    nodes = std::move(*inv);
    rows = std::move(*parsed);
  }
  nlohmann::ordered_json all = nlohmann::ordered_json::object();
  for (const auto& p : policies) {
    SimulationOptions run = options;
    run.best_fit = p.best_fit;
    auto r = simulate(nodes, rows, cfg->engine, p.packing, seed, run);
    if (!r) {
      std::fprintf(stderr, "scheduler-extender simulate: %s\n", r.message().c_str());
      return 1;
    }
    if (json) {
      all[p.name] = {{"allocated_at_100", r->allocated_at_100},
                                      {"allocated_at_end", r->allocated_at_end},
                                      {"first_refusal_at", r->first_refusal_at},
                                      {"refused", r->refused}};
    } else {
      std::string refused;
      for (const auto& [shape, n] : r->refused) refused += " " + shape + ":" + std::to_string(n);
      std::printf("%-14s allocated at 100%%: %.2f%%  at end: %.2f%%  first refusal at: %.2f%%  fragmented at 100%%: %.2f%%  refused:%s\n",
                  p.name.c_str(), 100 * r->allocated_at_100, 100 * r->allocated_at_end,
                  100 * r->first_refusal_at, 100 * r->fragmented_at_100, refused.empty() ? " none" : refused.c_str());
    }
  }
  if (json) std::printf("%s\n", nlohmann::ordered_json{{"policies", all}}.dump().c_str());
  return 0;
}

}  // namespace extender::sim
