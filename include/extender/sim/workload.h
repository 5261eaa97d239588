#pragma once
// Workloads for the simulator: its own CSV of pods, and the 2023 Alibaba GPU trace ("openb", the
// files published with *Beware of Fragmentation*, ATC'23) read as published, with the paper's
// arrival protocol. Every file is outside input: a malformed one gives an error naming the file
// and line, never a crash. Pure apart from the text handed in.
#include <cstdint>
#include <string>
#include <vector>

#include "extender/common/result.h"
#include "extender/model/supply.h"

namespace extender::sim {

struct WorkloadRow {
  std::string name;
  std::int64_t num_gpu = 0;
  std::int64_t gpu_milli = 0;  // < 1000 with num_gpu 1: a share of that fraction of one GPU's memory
  std::int64_t cpu_milli = 0;
  std::int64_t memory_mib = 0;
  // The GPU models the pod may run on (any one of them; empty: any node), sorted, each a label
  // value: a required node affinity `kGpuModelLabel In (models)`.
  std::vector<std::string> gpu_models;
};

// The node label naming its GPU model, as NVIDIA's GPU Feature Discovery publishes it; the trace's
// node `model` column and pod `gpu_spec` column are read onto it.
inline constexpr const char* kGpuModelLabel = model::kGpuProductLabel;

// A share: one GPU, 0 < gpu_milli < 1000. Otherwise the row asks num_gpu whole GPUs.
bool is_share(const WorkloadRow& row);
// GPUs requested, in thousandths: gpu_milli for a share, 1000 × num_gpu otherwise.
std::int64_t gpu_milli_requested(const WorkloadRow& row);

// Parses `name,num_gpu,gpu_milli,cpu_milli,memory_mib` with that header line, optionally followed
// by a `gpu_spec` column: empty, or GPU models separated by '|' ("A|B": either), each a valid
// label value (at most 63 of [A-Za-z0-9-_.], starting and ending alphanumeric).
Result<std::vector<WorkloadRow>> parse_workload(const std::string& text, const std::string& source);

// The trace's pod list: a header naming at least name, cpu_milli, memory_mib, num_gpu and
// gpu_milli (in any order; other columns are ignored but gpu_spec, read as parse_workload reads
// it), then one pod per line.
Result<std::vector<WorkloadRow>> parse_trace_pods(const std::string& text, const std::string& source);

// The trace's node list: a header naming at least sn, cpu_milli, memory_mib and gpu, then one node
// per line. Each node offers its GPUs as `whole_resource`, every GPU with `gpu_memory_bytes`
// (the trace's gpu_milli is a fraction of any GPU, whatever its model), and its CPU and memory.
// With a `model` column, a node with a model there carries it as label kGpuModelLabel, and every
// node's labels count as known (labels_known: the daemon's eligibility check reads them).
Result<std::vector<model::NodeSupply>> parse_trace_nodes(const std::string& text, const std::string& source,
                                                         const std::string& whole_resource,
                                                         std::int64_t gpu_memory_bytes);

// The paper's protocol: the pods shuffled by `seed`, then pods drawn uniformly with replacement from
// that list appended until the requested GPUs reach `arrival_percent` of `capacity_gpus`.
std::vector<WorkloadRow> paper_workload(std::vector<WorkloadRow> pods, std::int64_t capacity_gpus, std::uint64_t seed,
                                        std::int64_t arrival_percent = 130);

}  // namespace extender::sim
