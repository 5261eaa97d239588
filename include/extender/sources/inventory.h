#pragma once
// Inventory: the standalone description of the cluster, a YAML file of nodes with labels, GPUs,
// memory per GPU and storage pools (optionally split into devices). Read once at start; every
// error names the file, line and key. A node may give `cpu` and `memory` (quantities; the simulator
// models the scheduler's own fit with them). GPU devices are derived by `share` and the GPU rules
// (model/gpu_devices.h). Pure apart from reading the file.
#include <string>
#include <vector>

#include "extender/common/result.h"
#include "extender/model/supply.h"

namespace extender::sources {

// Parses inventory YAML. `gpu_rules` supplies the memory labels: a node's `gpu_memory` entry, or
// its label named by the rule, gives the memory per GPU.
Result<std::vector<model::NodeSupply>> parse_inventory(std::string text, std::string source,
                                                       const std::vector<model::GpuResourceRule>& gpu_rules,
                                                       const model::GpuShareRule& share = {});
Result<std::vector<model::NodeSupply>> load_inventory(const std::string& path,
                                                      const std::vector<model::GpuResourceRule>& gpu_rules,
                                                      const model::GpuShareRule& share = {});

}  // namespace extender::sources
