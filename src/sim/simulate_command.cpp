#include "extender/sim/simulator.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>
#include <tuple>

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

// The trace's node and pod lists in `dir`, the pods arranged by the paper's protocol for `seed`, and
// how many pods the trace lists (the arranged list's first ones).
Result<std::tuple<std::vector<model::NodeSupply>, std::vector<WorkloadRow>, std::size_t>> read_trace(
    const std::string& dir, const std::string& gpu_resource, std::uint64_t seed) {
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
  const std::size_t listed = pods->size();
  return std::tuple{std::move(*nodes), paper_workload(std::move(*pods), capacity, seed), listed};
}

struct Policy {
  std::string name;
  policy::PackingStrategy packing = policy::PackingStrategy::kBinpack;
  Reference reference = Reference::kNone;
};

// The subcommand's flags.
struct Command {
  std::string inventory, workload, trace, config_file;
  std::vector<Policy> policies;
  std::uint64_t seed = 1;
  bool json = false;
  std::size_t jobs = 0;
  SimulationOptions options;
};

// What the policies run on: an inventory and a workload, or the trace's.
struct Input {
  std::vector<model::NodeSupply> nodes;
  std::vector<sources::DraGpus> dra;
  std::vector<WorkloadRow> rows;
  std::size_t typical_rows = 0;  // SimulationOptions::typical_rows
};

using Outcomes = std::vector<std::optional<Result<PolicyResult>>>;  // by policy

// Prints the usage; false, for the flag parser to return.
bool usage() {
  std::fputs(
      "usage: scheduler-extender simulate (--inventory FILE --workload FILE | --trace DIR) [--policy NAME]... "
      "[--deployment gpu-pods|every-pod] [--weight N] [--percentage-of-nodes-to-score N] [--seed N] [--json] "
      "[--jobs N] [--config FILE] [--scheduler kube|paper]\n",
      stderr);
  return false;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "scheduler-extender simulate: %s\n", message.c_str());
  return 2;
}

std::optional<std::int64_t> count(const char* v, std::int64_t low, std::int64_t high) {
  try {
    std::size_t used = 0;
    const long long n = std::stoll(v, &used);
    if (used == std::string_view(v).size() && n >= low && n <= high) return n;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// Sets the flag `name` (one that takes a value) to `v`; false, after printing why, when either is wrong.
bool set_flag(Command& c, const std::string& name, const char* v) {
  std::optional<std::int64_t> n;
  if (name == "--inventory") {
    c.inventory = v;
  } else if (name == "--workload") {
    c.workload = v;
  } else if (name == "--trace") {
    c.trace = v;
  } else if (name == "--config") {
    c.config_file = v;
  } else if (name == "--seed") {
    try {
      c.seed = std::stoull(v);
    } catch (const std::exception&) {
      return usage();
    }
  } else if (name == "--policy") {
    auto p = policy::parse_packing(v);
    auto reference = parse_reference(v);
    if (!p && !reference) {
      std::fprintf(stderr, "scheduler-extender simulate: unknown policy \"%s\" (%s, best-fit, fgd)\n", v,
                   policy::packing_names(", ").c_str());
      return false;
    }
    // fgd chooses a share's device as fragmentation does; best-fit as binpack does.
    const auto packing = reference == Reference::kFgd ? policy::PackingStrategy::kFragmentation
                                                      : p.value_or(policy::PackingStrategy::kBinpack);
    c.policies.push_back({v, packing, reference.value_or(Reference::kNone)});
  } else if (name == "--deployment") {
    auto d = parse_deployment(v);
    if (!d) return usage();
    c.options.deployment = *d;
  } else if (name == "--jobs" && (n = count(v, 1, 1024))) {
    c.jobs = static_cast<std::size_t>(*n);
  } else if (name == "--weight" && (n = count(v, 1, 100000))) {
    c.options.scheduler.extender_weight = *n;
  } else if (name == "--percentage-of-nodes-to-score" && (n = count(v, 0, 100))) {
    c.options.scheduler.percentage_of_nodes_to_score = *n;
  } else if (name == "--scheduler" && (std::string_view(v) == "kube" || std::string_view(v) == "paper")) {
    c.options.scheduler.paper = std::string_view(v) == "paper";
  } else {
    return usage();
  }
  return true;
}

// The flags, or nullopt after printing why they are wrong. No --policy: every packing policy.
std::optional<Command> parse_command(int argc, const char* const* argv) {
  Command c;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") {
      c.json = true;
    } else if (i + 1 == argc) {
      usage();
      return std::nullopt;
    } else if (!set_flag(c, a, argv[++i])) {
      return std::nullopt;
    }
  }
  if (c.trace.empty() == (c.inventory.empty() || c.workload.empty()) ||
      (!c.trace.empty() && !(c.inventory + c.workload).empty())) {
    usage();
    return std::nullopt;
  }
  if (c.policies.empty()) {
    for (const auto& p : policy::packing_policies()) c.policies.push_back({p.name, p.strategy, Reference::kNone});
  }
  return c;
}

Result<Input> read_input(const Command& c, const SimulatorConfig& cfg) {
  Input in;
  if (!c.trace.empty()) {
    auto read = read_trace(c.trace, cfg.gpu_resources.empty() ? std::string() : cfg.gpu_resources.front().name, c.seed);
    if (!read) return read.error();
    in.nodes = std::move(std::get<0>(*read));
    in.rows = std::move(std::get<1>(*read));
    in.typical_rows = std::get<2>(*read);
    return in;
  }
  auto inv = sources::load_inventory_with_dra(c.inventory, cfg.gpu_resources, cfg.share);
  if (!inv) return inv.error();
  auto text = read_text(c.workload);
  if (!text) return text.error();
  auto parsed = parse_workload(*text, c.workload);
  if (!parsed) return parsed.error();
  in.nodes = std::move(inv->nodes);
  in.dra = std::move(inv->dra);
  in.rows = std::move(*parsed);
  return in;
}

// Simulates each policy, on --jobs threads (default: the usable CPUs) at most one per policy.
Outcomes run_policies(const Command& c, const Input& in, const engine::ExtenderOptions& engine) {
  Outcomes results(c.policies.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t k; (k = next++) < c.policies.size();) {
      SimulationOptions run = c.options;
      run.reference = c.policies[k].reference;
      run.typical_rows = in.typical_rows;
      results[k].emplace(simulate(in.nodes, in.dra, in.rows, engine, c.policies[k].packing, c.seed, run));
    }
  };
  const std::size_t threads = std::clamp<std::size_t>(c.jobs > 0 ? c.jobs : usable_cpus(), 1, c.policies.size());
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return results;
}

// Prints a line per policy, or one JSON document with --json; 1 at the first policy that failed.
int print_results(const Command& c, const Outcomes& results) {
  nlohmann::ordered_json all = nlohmann::ordered_json::object();
  for (std::size_t k = 0; k < c.policies.size(); ++k) {
    const auto& p = c.policies[k];
    const auto& r = *results[k];
    if (!r) {
      std::fprintf(stderr, "scheduler-extender simulate: %s\n", r.message().c_str());
      return 1;
    }
    if (c.json) {
      all[p.name] = {{"allocated_at_100", r->allocated_at_100},
                     {"allocated_at_end", r->allocated_at_end},
                     {"first_refusal_at", r->first_refusal_at},
                     {"refused", r->refused}};
    } else {
      std::string refused;
      for (const auto& [shape, n] : r->refused) refused += " " + shape + ":" + std::to_string(n);
      std::printf(
          "%-14s allocated at 100%%: %.2f%%  at end: %.2f%%  first refusal at: %.2f%%  fragmented at 100%%: %.2f%%  "
          "refused:%s\n",
          p.name.c_str(), 100 * r->allocated_at_100, 100 * r->allocated_at_end, 100 * r->first_refusal_at,
          100 * r->fragmented_at_100, refused.empty() ? " none" : refused.c_str());
    }
  }
  if (c.json) std::printf("%s\n", nlohmann::ordered_json{{"policies", all}}.dump().c_str());
  return 0;
}

}  // namespace

int run_simulate_command(int argc, const char* const* argv, const SimulatorConfigLoader& load_config) {
  const auto command = parse_command(argc, argv);
  if (!command) return 2;
  auto cfg = load_config(command->config_file);
  if (!cfg) return fail(cfg.message());
  auto input = read_input(*command, *cfg);
  if (!input) return fail(input.message());
  return print_results(*command, run_policies(*command, *input, cfg->engine));
}

}  // namespace extender::sim
