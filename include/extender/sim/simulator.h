#pragma once
// Simulator: replays a workload through the engine's Extender in-process (standalone state, the
// same filter, prioritize and bind as the daemon) with kube-scheduler around it as SchedulerModel
// models it (scheduler_model.h). Rows arrive in order and never leave. Not thread-safe.
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

// Where a pod went: the node, and for a GPU pod the devices it holds there.
struct Placement {
  std::string pod;
  std::string node;
  std::vector<model::GpuHold> devices;
  bool operator==(const Placement&) const = default;
};

// The pod a row stands for: uid "sim-<index>", namespace "sim", one container "main" requesting
// the row's CPU and memory and its GPUs, as `whole_resource` for whole GPUs or as
// `share_resource` in bytes for a share (its fraction of `device_memory`, rounded up).
model::Pod workload_pod(const WorkloadRow& row, std::size_t index, const std::string& whole_resource,
                        const std::string& share_resource, std::int64_t device_memory);

// The memory of the inventory's most common GPU device (by device count); 0 when none reports it.
std::int64_t common_device_memory(const std::vector<model::NodeSupply>& nodes);

struct PolicyResult {
  double allocated_at_100 = 0;   // allocated GPU capacity / the cluster's, when arrived demand reaches 100%
  double allocated_at_end = 0;
  double first_refusal_at = 0;   // arrived GPU demand / capacity at the first refusal (at end if none)
  double fragmented_at_100 = 0;  // expected fragmented GPU capacity / the cluster's, at 100%
  std::map<std::string, std::int64_t> refused;      // by shape ("1", "0.47", "none" for no GPU)
  std::vector<Placement> placements;                // in arrival order, refused pods left out
};

// Runs the workload under `base` with scoring.gpu_packing = `policy`. The share unit is set to
// bytes; a share's request is its fraction of the most common GPU memory of the inventory.
Result<PolicyResult> simulate(const std::vector<model::NodeSupply>& nodes, const std::vector<WorkloadRow>& rows,
                              const config::Config& base, policy::PackingStrategy policy, std::uint64_t seed);

// The `simulate` subcommand: argv after "simulate". Returns the exit code.
int run_simulate_command(int argc, const char* const* argv);

}  // namespace extender::sim
