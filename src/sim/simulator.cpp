#include "extender/sim/simulator.h"

#include "extender/sim/scheduler_model.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "extender/engine/extender.h"
#include "extender/policy/gpu_devices.h"
#include "extender/sources/inventory.h"
#include "extender/state/cluster_state.h"
#include "extender/state/demand_cache.h"

namespace extender::sim {
namespace {

Result<std::int64_t> field(const std::string& text, const std::string& where) {
  try {
    std::size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used != text.size() || v < 0) throw std::invalid_argument(text);
    return static_cast<std::int64_t>(v);
  } catch (const std::exception&) {
    return Error{where + ": \"" + text.substr(0, 32) + "\" is not a whole number"};
  }
}

std::string shape_key(const WorkloadRow& r) {
  if (r.num_gpu == 0) return "none";
  if (r.num_gpu == 1 && r.gpu_milli > 0 && r.gpu_milli < 1000) {
    return policy::shape_name({0, 0, r.gpu_milli});
  }
  return std::to_string(r.num_gpu);
}

bool is_share(const WorkloadRow& r) { return r.num_gpu == 1 && r.gpu_milli > 0 && r.gpu_milli < 1000; }

double gpu_demand(const WorkloadRow& r) { return is_share(r) ? r.gpu_milli / 1000.0 : static_cast<double>(r.num_gpu); }

}  // namespace

Result<std::vector<WorkloadRow>> parse_workload(const std::string& text, const std::string& source) {
  std::istringstream in(text);
  std::string line;
  std::vector<WorkloadRow> rows;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (number == 1) {
      if (line != "name,num_gpu,gpu_milli,cpu_milli,memory_mib") {
        return Error{source + ":1: expected the header name,num_gpu,gpu_milli,cpu_milli,memory_mib"};
      }
      continue;
    }
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::stringstream ls(line);
    for (std::string cell; std::getline(ls, cell, ',');) cells.push_back(cell);
    const std::string where = source + ":" + std::to_string(number);
    if (cells.size() != 5) return Error{where + ": expected 5 fields"};
    WorkloadRow r;
    r.name = cells[0];
    std::int64_t* out[] = {&r.num_gpu, &r.gpu_milli, &r.cpu_milli, &r.memory_mib};
    for (std::size_t i = 0; i < 4; ++i) {
      auto v = field(cells[i + 1], where);
      if (!v) return v.error();
      *out[i] = *v;
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

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

Result<PolicyResult> simulate(const std::vector<model::NodeSupply>& nodes, const std::vector<WorkloadRow>& rows,
                              const config::Config& base, policy::PackingStrategy strategy, std::uint64_t seed) {
  config::Config cfg = base;
  cfg.mode = config::Mode::kStandalone;
  cfg.scoring.packing = strategy;
  cfg.gpu.share.unit_bytes = 1;
  if (cfg.gpu.resources.empty() || cfg.gpu.share.memory_resource.empty()) {
    return Error{"simulate needs a whole-GPU resource and gpu.share"};
  }
  const std::string whole_resource = cfg.gpu.resources.front().name;
  const std::int64_t memory = common_device_memory(nodes);

  state::ClusterState cluster;
  cluster.upsert_nodes(nodes);
  state::DemandCache demands(rows.size() + 16, std::chrono::hours(24 * 365));
  engine::ExtenderDeps deps;
  deps.state = &cluster;
  deps.demands = &demands;
  engine::Extender ext(cfg, deps);

  std::int64_t capacity_gpus = 0;
  std::map<std::string, std::int64_t, std::less<>> device_memory;
  for (const auto& n : nodes) {
    capacity_gpus += n.gpu_devices.count;
    device_memory[n.name] = n.gpu_devices.memory_bytes;
  }
  if (capacity_gpus == 0) return Error{"the inventory has no GPUs"};
  SchedulerModel scheduler(nodes, seed);
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
    const model::Pod pod = workload_pod(row, i, whole_resource, cfg.gpu.share.memory_resource, memory);
    const std::int64_t mem_bytes = row.memory_mib << 20;

    wire::ExtenderArgs args;
    args.pod = pod;
    args.set_node_names(scheduler.fitting(row.cpu_milli, mem_bytes));
    std::string chosen;
    std::vector<model::GpuHold> devices;
    if (!args.node_names->empty()) {
      auto filtered = ext.filter(args);
      if (!filtered.result.error.empty()) return Error{"filter: " + filtered.result.error};
      std::vector<std::string> passed;
      if (filtered.result.node_names) passed.assign(filtered.result.node_names->begin(), filtered.result.node_names->end());
      if (!passed.empty()) {
        args.set_node_names(passed);
        auto scored = ext.prioritize(args);
        std::vector<std::int64_t> scores(passed.size(), 0);
        for (std::size_t k = 0; k < scored.scores.size() && k < passed.size(); ++k) scores[k] = scored.scores[k].score;
        chosen = passed[*scheduler.choose(scores, cfg.scoring.gpu_packing_weight)];
        if (row.num_gpu > 0) {
          auto bound = ext.bind({pod.name, pod.namespace_name, pod.uid, chosen});
          if (!bound.error.empty()) {
            chosen.clear();
          } else if (auto claim = cluster.claim_of(pod.uid)) {
            devices = claim->allocation.gpu_devices;
          }
        }
      }
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

int run_simulate_command(int argc, const char* const* argv) {
  std::string inventory, workload, config_file;
  std::vector<policy::PackingStrategy> policies;
  std::uint64_t seed = 1;
  bool json = false;
  auto usage = [] {
    std::fputs("usage: scheduler-extender simulate --inventory FILE --workload FILE [--policy NAME]... "
               "[--seed N] [--json] [--config FILE]\n", stderr);
    return 2;
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
      if (!p) {
        std::fprintf(stderr, "scheduler-extender simulate: unknown policy \"%s\" (binpack, spread, fragmentation)\n", v);
        return 2;
      }
      policies.push_back(*p);
    } else {
      return usage();
    }
  }
  if (inventory.empty() || workload.empty()) return usage();
  if (policies.empty()) policies = {policy::PackingStrategy::kBinpack, policy::PackingStrategy::kSpread,
                                    policy::PackingStrategy::kFragmentation};
  auto cfg = config_file.empty() ? config::parse_config("", "<defaults>") : config::load_config_file(config_file);
  if (!cfg) {
    std::fprintf(stderr, "scheduler-extender simulate: %s\n", cfg.message().c_str());
    return 2;
  }
  auto nodes = sources::load_inventory(inventory, cfg->gpu.resources, cfg->gpu.share);
  if (!nodes) {
    std::fprintf(stderr, "scheduler-extender simulate: %s\n", nodes.message().c_str());
    return 2;
  }
  std::ifstream in(workload, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "scheduler-extender simulate: cannot read %s\n", workload.c_str());
    return 2;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto rows = parse_workload(text.str(), workload);
  if (!rows) {
    std::fprintf(stderr, "scheduler-extender simulate: %s\n", rows.message().c_str());
    return 2;
  }
  nlohmann::ordered_json all = nlohmann::ordered_json::object();
  for (auto p : policies) {
    auto r = simulate(*nodes, *rows, *cfg, p, seed);
    if (!r) {
      std::fprintf(stderr, "scheduler-extender simulate: %s\n", r.message().c_str());
      return 1;
    }
    if (json) {
      all[policy::packing_name(p)] = {{"allocated_at_100", r->allocated_at_100},
                                      {"allocated_at_end", r->allocated_at_end},
                                      {"first_refusal_at", r->first_refusal_at},
                                      {"refused", r->refused}};
    } else {
      std::string refused;
      for (const auto& [shape, n] : r->refused) refused += " " + shape + ":" + std::to_string(n);
      std::printf("%-14s allocated at 100%%: %.2f%%  at end: %.2f%%  first refusal at: %.2f%%  fragmented at 100%%: %.2f%%  refused:%s\n",
                  policy::packing_name(p), 100 * r->allocated_at_100, 100 * r->allocated_at_end,
                  100 * r->first_refusal_at, 100 * r->fragmented_at_100, refused.empty() ? " none" : refused.c_str());
    }
  }
  if (json) std::printf("%s\n", nlohmann::ordered_json{{"policies", all}}.dump().c_str());
  return 0;
}

}  // namespace extender::sim
