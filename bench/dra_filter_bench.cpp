// Measures the engine's /filter and /prioritize of a 2-GPU pod in the NodeNames form over a cluster
// of NODES nodes (default 5,000), in three clusters of the same size: every node's GPUs from the
// device plugin (no DRA); half device-plugin nodes and half DRA nodes with DRA served (a DeviceClass
// with extendedResourceName: nvidia.com/gpu, one ResourceSlice of 8 GPUs per DRA node, a quarter
// of their devices allocated); the same mixed cluster with DRA not served. Engine only, no HTTP
// (filter_bench measures the listener). Prints the median and 90th percentile of each stage and
// how many nodes passed.
//
// usage: dra_filter_bench [--nodes N] [--runs N] [--cluster 1|2|3] (one cluster only, e.g. under perf)
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "extender/config/config.h"
#include "extender/engine/engine_builder.h"
#include "extender/sim/sim_dra.h"
#include "extender/sources/inventory.h"
#include "extender/sources/local_binder.h"
#include "gpu_pod.h"

namespace {

using namespace extender;
using Clock = std::chrono::steady_clock;

class BenchDra final : public engine::DraSource {
 public:
  std::shared_ptr<const model::DraInventory> dra_snapshot() const override { return inventory; }
  std::vector<model::DeviceClass> dra_device_classes() const override { return classes; }
  std::shared_ptr<const policy::DraClasses> dra_classes() const override { return compiled; }
  std::shared_ptr<const model::DraInventory> inventory;
  std::vector<model::DeviceClass> classes;
  std::shared_ptr<const policy::DraClasses> compiled = std::make_shared<const policy::DraClasses>();
};

std::string inventory_yaml(int nodes, bool half_dra) {
  std::string y = "nodes:\n";
  for (int i = 0; i < nodes; ++i) {
    const bool dra = half_dra && i % 2 == 1;
    y += "  - name: " + std::string(dra ? "dra-" : "dp-") + std::to_string(i) + "\n";
    y += "    cpu: 64\n    memory: 512Gi\n";
    if (!dra) y += "    labels: {nvidia.com/gpu.memory: \"81559\"}\n    gpus: {nvidia.com/gpu: 8}\n";
  }
  return y;
}

std::shared_ptr<const model::DraInventory> dra_inventory(int nodes) {
  std::vector<model::ResourceSlice> slices;
  std::vector<model::ResourceClaim> claims;
  for (int i = 1; i < nodes; i += 2) {
    const std::string node = "dra-" + std::to_string(i);
    slices.push_back(sim::nvidia_gpu_slice({node, 8, std::int64_t{80} << 30}));
    model::ResourceClaim c;
    c.uid = "claim-" + node;
    c.namespace_name = "ml";
    c.name = "held-" + node;
    c.allocated = true;
    c.results = {{"gpu", model::kNvidiaGpuDriver, node, "gpu-0", false},
                 {"gpu", model::kNvidiaGpuDriver, node, "gpu-1", false}};
    claims.push_back(std::move(c));
  }
  return std::make_shared<const model::DraInventory>(model::build_dra_inventory(slices, claims));
}

struct Stats {
  double median_ms = 0;
  double p90_ms = 0;
};

template <typename F>
Stats time_runs(int runs, F&& f) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 9 / 10)]};
}

struct Cluster {
  const char* name;
  bool half_dra;
  bool dra_served;
};

void run(const Cluster& c, int nodes, int runs) {
  config::Config cfg;
  state::ClusterState state;
  auto inv = sources::parse_inventory(inventory_yaml(nodes, c.half_dra), "bench", cfg.gpu.resources, cfg.gpu.share);
  if (!inv) {
    std::fprintf(stderr, "inventory: %s\n", inv.message().c_str());
    std::exit(1);
  }
  state.upsert_nodes(std::move(*inv));
  state::DemandCache demands(1000, std::chrono::minutes(10));
  sources::LocalBinder binder(state);
  BenchDra dra;
  if (c.dra_served) {
    dra.inventory = dra_inventory(nodes);
    dra.classes = {{"gpu.nvidia.com",
                    {"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"},
                    "nvidia.com/gpu"}};
    dra.compiled = std::make_shared<const policy::DraClasses>(dra.classes);
  }
  engine::Extender ext = engine::EngineBuilder(cfg.extender_options(), state, demands, binder).dra(&dra).build();

  std::vector<std::string> names;
  for (int i = 0; i < nodes; ++i) names.push_back((c.half_dra && i % 2 == 1 ? "dra-" : "dp-") + std::to_string(i));
  const wire::ExtenderArgs args = bench::gpu_pod_args("2", names);

  std::size_t passed = 0;
  const Stats filter = time_runs(runs, [&] { passed = ext.filter(args).result.node_names->size(); });
  std::size_t scored = 0;
  const Stats prioritize = time_runs(runs, [&] { scored = ext.prioritize(args).scores.size(); });
  std::printf("%-36s filter %7.3f ms (p90 %7.3f)  prioritize %7.3f ms (p90 %7.3f)  passed %zu of %d, scored %zu\n",
              c.name, filter.median_ms, filter.p90_ms, prioritize.median_ms, prioritize.p90_ms, passed, nodes, scored);
}

}  // namespace

int main(int argc, char** argv) {
  int nodes = 5000;
  int runs = 50;
  int only = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--nodes" && i + 1 < argc) {
      nodes = std::atoi(argv[++i]);
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (a == "--cluster" && i + 1 < argc) {
      only = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: dra_filter_bench [--nodes N] [--runs N] [--cluster 1|2|3]\n");
      return 2;
    }
  }
  if (nodes < 2 || runs < 1) return 2;
  spdlog::set_level(spdlog::level::warn);
  for (int round = 0; round < 2; ++round) {
    std::printf("round %d (%d nodes, %d runs each; NodeNames form, a pod asking nvidia.com/gpu: 2)\n", round + 1, nodes,
                runs);
    const Cluster clusters[] = {{"device plugin only (no DRA)", false, false},
                                {"half DRA nodes, DRA served", true, true},
                                {"half DRA nodes, DRA not served", true, false}};
    for (int c = 0; c < 3; ++c) {
      if (only == 0 || only == c + 1) run(clusters[c], nodes, runs);
    }
  }
  return 0;
}
