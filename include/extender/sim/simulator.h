#pragma once
// Simulator: replays a workload through the engine's Extender in-process (standalone state, the
// same filter, prioritize and bind as the daemon) with kube-scheduler around it as SchedulerModel
// models it (scheduler_model.h), in one of two deployments. The inventory's DRA nodes are served
// as sim_dra.h describes: the engine reads them through a SimDra (its filter and prioritize rank
// DRA and device-plugin nodes on one scale), kube-scheduler's DRA allocator admits a whole-GPU
// pod there only where enough devices are free and allocates them; GPU shares are never served
// on DRA nodes (no share resource there). Rows arrive in order and never leave.
// Each simulate() call builds its own engine and state: calls may run on separate threads.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "extender/common/result.h"
#include "extender/engine/options.h"
#include "extender/model/supply.h"
#include "extender/sim/scheduler_model.h"
#include "extender/sim/workload.h"
#include "extender/sources/inventory.h"

namespace extender::sim {

// Where a pod went: the node, and for a GPU pod the devices it holds there (on a DRA node, the
// indexes of the DRA devices allocated to it, held whole).
struct Placement {
  std::string pod;
  std::string node;
  std::vector<model::GpuHold> devices;
  bool operator==(const Placement&) const = default;
};

// The pod a row stands for: uid "sim-<index>", namespace "sim", one container "main" requesting
// the row's CPU and memory and its GPUs, as `whole_resource` for whole GPUs or as
// `share_resource` in bytes for a share (its fraction of `device_memory`, rounded up); with
// gpu_models, a required node affinity `kGpuModelLabel In (gpu_models)`.
model::Pod workload_pod(const WorkloadRow& row, std::size_t index, const std::string& whole_resource,
                        const std::string& share_resource, std::int64_t device_memory);

// The memory of the inventory's most common GPU device (by device count); 0 when none reports it.
std::int64_t common_device_memory(const std::vector<model::NodeSupply>& nodes);

// GPU capacity and allocation count device-plugin and DRA GPUs alike.
struct PolicyResult {
  double allocated_at_100 = 0;  // allocated GPU capacity / the cluster's, when arrived demand reaches 100%
  double allocated_at_end = 0;
  double first_refusal_at = 0;                  // arrived GPU demand / capacity at the first refusal (at end if none)
  double fragmented_at_100 = 0;                 // expected fragmented GPU capacity / the cluster's, at 100%
  std::map<std::string, std::int64_t> refused;  // by shape ("1", "0.47", "none" for no GPU)
  std::vector<Placement> placements;            // in arrival order, refused pods left out
};

// Which pods kube-scheduler shows the daemon. gpu-pods: those that ask GPUs (the extender entry
// with managedResources: filter, prioritize, bind). every-pod: also every other pod, to
// prioritize only (a second entry without managedResources); kube-scheduler binds those.
enum class Deployment { kGpuPods, kEveryPod };
const char* deployment_name(Deployment d);  // "gpu-pods", "every-pod"
std::optional<Deployment> parse_deployment(std::string_view name);

// The simulator's reference policies (reference_scores.h): none (the daemon's prioritize), best-fit, fgd.
enum class Reference { kNone, kBestFit, kFgd };
// "best-fit" or "fgd"; nullopt for other names.
std::optional<Reference> parse_reference(std::string_view name);

struct SimulationOptions {
  Deployment deployment = Deployment::kGpuPods;
  SchedulerSettings scheduler;  // the extender's weight and percentageOfNodesToScore
  // Scores with a reference policy (reference_scores.h) instead of the daemon's prioritize; filter
  // and bind stay the daemon's.
  Reference reference = Reference::kNone;
  // fgd learns its typical pods from the first `typical_rows` rows only (0: all of them): for the
  // trace, its own pod list, which paper_workload keeps first, before the pods it draws again.
  std::size_t typical_rows = 0;
};

// Runs the workload through an Extender of `base` with scoring.gpu_packing = `policy`. The share unit is set to
// bytes; a share's request is its fraction of the most common GPU memory of the inventory. Every
// placed pod's CPU and memory count on its node in the daemon's state (as its watch counts them).
// `dra`: the nodes (each one of `nodes`, offering no GPUs of its own) whose GPUs DRA serves as the
// first of the engine's GPU resources.
Result<PolicyResult> simulate(const std::vector<model::NodeSupply>& nodes, const std::vector<sources::DraGpus>& dra,
                              const std::vector<WorkloadRow>& rows, const engine::ExtenderOptions& base,
                              policy::PackingStrategy policy, std::uint64_t seed,
                              const SimulationOptions& options = {});
// The same without DRA nodes.
Result<PolicyResult> simulate(const std::vector<model::NodeSupply>& nodes, const std::vector<WorkloadRow>& rows,
                              const engine::ExtenderOptions& base, policy::PackingStrategy policy, std::uint64_t seed,
                              const SimulationOptions& options = {});

// What the `simulate` subcommand runs with: the engine's options and the GPU resources and share
// rule inventories are read with.
struct SimulatorConfig {
  engine::ExtenderOptions engine;
  std::vector<model::GpuResourceRule> gpu_resources;
  model::GpuShareRule share;
};
// Loads the settings of a config file (--config), or the defaults for "".
using SimulatorConfigLoader = std::function<Result<SimulatorConfig>(const std::string& file)>;

// The `simulate` subcommand: argv after "simulate". Returns the exit code.
int run_simulate_command(int argc, const char* const* argv, const SimulatorConfigLoader& load_config);

}  // namespace extender::sim
