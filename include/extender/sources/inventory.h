#pragma once
// Inventory: the standalone description of the cluster, a YAML file of nodes with labels, GPUs,
// memory per GPU and storage pools (optionally split into devices). Read once at start; every
// error names the file, line and key. A node may give `cpu` and `memory` (quantities; the simulator
// models the scheduler's own fit with them). GPU devices are derived by `share` and the GPU rules
// (model/gpu_devices.h). A node may instead describe GPUs a DRA driver publishes for it
// (`dra: {gpus: 8, gpu_memory: 80Gi}`): only the simulator reads those (parse_inventory_with_dra);
// standalone mode reads no DRA, and parse_inventory refuses such a node. Pure apart from reading
// the file.
#include <cstdint>
#include <string>
#include <vector>

#include "extender/common/result.h"
#include "extender/model/supply.h"

namespace extender::sources {

// A node's GPUs as NVIDIA's DRA driver (model::kNvidiaGpuDriver) publishes them: `gpus` devices of
// type gpu, index 0.., each with `memory_bytes` of memory (0: no memory capacity). Such a node has
// no `gpus` allocatable: its GPUs come from a device plugin or from DRA, never both.
struct DraGpus {
  std::string node;
  std::int64_t gpus = 0;
  std::int64_t memory_bytes = 0;
  bool operator==(const DraGpus&) const = default;
};

// At most this many DRA GPUs on one node, and in the whole inventory (each becomes a device object).
inline constexpr std::int64_t kMaxDraGpusPerNode = 256;
inline constexpr std::int64_t kMaxDraGpus = 100'000;

struct Inventory {
  std::vector<model::NodeSupply> nodes;
  std::vector<DraGpus> dra;  // the nodes with `dra`, in inventory order
};

// Parses inventory YAML. `gpu_rules` supplies the memory labels: a node's `gpu_memory` entry, or
// its label named by the rule, gives the memory per GPU. A node with `dra` is an error here.
Result<std::vector<model::NodeSupply>> parse_inventory(std::string text, std::string source,
                                                       const std::vector<model::GpuResourceRule>& gpu_rules,
                                                       const model::GpuShareRule& share = {});
Result<std::vector<model::NodeSupply>> load_inventory(const std::string& path,
                                                      const std::vector<model::GpuResourceRule>& gpu_rules,
                                                      const model::GpuShareRule& share = {});
// The same, with the nodes' `dra` entries (the simulator's inventories).
Result<Inventory> parse_inventory_with_dra(std::string text, std::string source,
                                           const std::vector<model::GpuResourceRule>& gpu_rules,
                                           const model::GpuShareRule& share = {});
Result<Inventory> load_inventory_with_dra(const std::string& path, const std::vector<model::GpuResourceRule>& gpu_rules,
                                          const model::GpuShareRule& share = {});

}  // namespace extender::sources
