#include "extender/sim/simulator.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "extender/common/usable_cpus.h"
#include "extender/policy/packing.h"
#include "extender/sources/inventory.h"

namespace extender::sim {
namespace {

// Every GPU of the trace as 1000 MiB, so a share of n thousandths is exactly n MiB.
constexpr std::int64_t kTraceGpuMemory = std::int64_t{1000} << 20;

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
  std::vector<sources::DraGpus> dra;
  std::vector<WorkloadRow> rows;
  if (!trace.empty()) {
    auto read = read_trace(trace, cfg->gpu_resources.empty() ? std::string() : cfg->gpu_resources.front().name, seed);
    if (!read) return fail(read.message());
    nodes = std::move(read->first);
    rows = std::move(read->second);
  } else {
    auto inv = sources::load_inventory_with_dra(inventory, cfg->gpu_resources, cfg->share);
    if (!inv) return fail(inv.message());
    auto text = read_text(workload);
    if (!text) return fail(text.message());
    auto parsed = parse_workload(*text, workload);
    if (!parsed) return fail(parsed.message());
    nodes = std::move(inv->nodes);
    dra = std::move(inv->dra);
    rows = std::move(*parsed);
  }
  std::vector<std::optional<Result<PolicyResult>>> results(policies.size());
  {
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      for (std::size_t k; (k = next++) < policies.size();) {
        SimulationOptions run = options;
        run.best_fit = policies[k].best_fit;
        results[k].emplace(simulate(nodes, dra, rows, cfg->engine, policies[k].packing, seed, run));
      }
    };
    const std::size_t threads =
        std::clamp<std::size_t>(jobs > 0 ? jobs : usable_cpus(), 1, policies.size());
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
