#pragma once
// Simulator: replays a workload through the engine's Extender in-process (standalone state, the
// same filter, prioritize and bind as the daemon) and models kube-scheduler around it: its own
// CPU/memory fit first (NodeResourcesFit), then the extender's filter, then the highest score,
// random among ties (seeded). Rows arrive in order and never leave. Not thread-safe.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "extender/common/result.h"
#include "extender/config/config.h"
#include "extender/model/supply.h"

namespace extender::sim {

struct WorkloadRow {
  std::string name;
  std::int64_t num_gpu = 0;
  std::int64_t gpu_milli = 0;  // < 1000 with num_gpu 1: a share of that fraction of one GPU's memory
  std::int64_t cpu_milli = 0;
  std::int64_t memory_mib = 0;
};

// Parses `name,num_gpu,gpu_milli,cpu_milli,memory_mib` with that header line.
Result<std::vector<WorkloadRow>> parse_workload(const std::string& text, const std::string& source);

struct PolicyResult {
  double allocated_at_100 = 0;   // allocated GPU capacity / the cluster's, when arrived demand reaches 100%
  double allocated_at_end = 0;
  double first_refusal_at = 0;   // arrived GPU demand / capacity at the first refusal (at end if none)
  double fragmented_at_100 = 0;  // expected fragmented GPU capacity / the cluster's, at 100%
  std::map<std::string, std::int64_t> refused;      // by shape ("1", "0.47", "none" for no GPU)
  std::vector<std::pair<std::string, std::string>> placements;  // pod name -> node, in order
};

// Runs the workload under `base` with scoring.gpu_packing = `policy`. The share unit is set to
// bytes; a share's request is its fraction of the most common GPU memory of the inventory.
Result<PolicyResult> simulate(const std::vector<model::NodeSupply>& nodes, const std::vector<WorkloadRow>& rows,
                              const config::Config& base, policy::PackingStrategy policy, std::uint64_t seed);

// The `simulate` subcommand: argv after "simulate". Returns the exit code.
int run_simulate_command(int argc, const char* const* argv);

}  // namespace extender::sim
