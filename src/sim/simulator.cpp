#include "extender/sim/simulator.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

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
    auto cycle = [&]() -> Result<std::optional<std::size_t>> {
      wire::ExtenderArgs args;
      args.pod = pod;
      std::vector<std::size_t> candidates = scheduler.feasible_at(row.cpu_milli, mem_bytes);
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
          scores = best_fit_scores(cluster.snapshot(), names, *demand);
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
        const std::vector<std::size_t> candidates = scheduler.feasible_at(row.cpu_milli, mem_bytes);
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
      scheduler.place_at(*node, row.cpu_milli, mem_bytes);
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
  std::size_t jobs = 0;
  SimulationOptions options;
  auto usage = [] {
    std::fputs("usage: scheduler-extender simulate (--inventory FILE --workload FILE | --trace DIR) [--policy NAME]... "
               "[--deployment gpu-pods|every-pod] [--weight N] [--percentage-of-nodes-to-score N] [--seed N] [--json] "
               "[--jobs N] [--config FILE]\n", stderr);
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
    } else if (a == "--jobs" && (v = value())) {
      auto n = count(v, 1, 1024);
      if (!n) return usage();
      jobs = static_cast<std::size_t>(*n);
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
  std::vector<std::optional<Result<PolicyResult>>> results(policies.size());
  {
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      for (std::size_t k; (k = next++) < policies.size();) {
        SimulationOptions run = options;
        run.best_fit = policies[k].best_fit;
        results[k].emplace(simulate(nodes, rows, cfg->engine, policies[k].packing, seed, run));
      }
    };
    const std::size_t threads =
        std::clamp<std::size_t>(jobs > 0 ? jobs : std::thread::hardware_concurrency(), 1, policies.size());
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
  }
  nlohmann::ordered_json all = nlohmann::ordered_json::object();
  for (std::size_t k = 0; k < policies.size(); ++k) {
    const auto& p = policies[k];
    auto& r = *results[k];
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
