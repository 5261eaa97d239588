// Measures what one pod event costs the daemon's state at cluster size: a pod placed on a node,
// then dropped (as the pod watch applies a binding and a deletion), each publishing a new
// snapshot, over NODES nodes of 8 GPUs (default 5,000, and 500 beside it). Prints the median and
// 90th percentile of one place and one drop. Engine state only: no HTTP, no JSON.
//
// usage: state_publish_bench [--nodes N] [--runs N]
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "extender/config/config.h"
#include "extender/sources/inventory.h"
#include "extender/state/cluster_state.h"

namespace {

using namespace extender;
using Clock = std::chrono::steady_clock;

std::string inventory_yaml(int nodes) {
  std::string y = "nodes:\n";
  for (int i = 0; i < nodes; ++i) {
    y += "  - name: gpu-" + std::to_string(i) + "\n    cpu: 64\n    memory: 512Gi\n    gpus: {nvidia.com/gpu: 8}\n";
  }
  return y;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

void run(int nodes, int runs) {
  const config::Config cfg;
  auto inv = sources::parse_inventory(inventory_yaml(nodes), "bench", cfg.gpu.resources, cfg.gpu.share);
  if (!inv) {
    std::fprintf(stderr, "inventory: %s\n", inv.message().c_str());
    std::exit(1);
  }
  state::ClusterState state;
  state.upsert_nodes(std::move(*inv));
  std::vector<double> place_us, drop_us;
  for (int i = 0; i < runs; ++i) {
    state::Claim claim;
    claim.owner = "bench/pod-" + std::to_string(i);
    claim.node = "gpu-" + std::to_string(i % nodes);
    claim.allocation.gpus["nvidia.com/gpu"] = 1;
    claim.allocation.pods = 1;
    const std::string uid = "uid-" + std::to_string(i);
    const auto t0 = Clock::now();
    state.place(uid, std::move(claim));
    const auto t1 = Clock::now();
    state.drop(uid);
    const auto t2 = Clock::now();
    place_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    drop_us.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
  }
  std::printf("%6d nodes: place p50 %8.1f us p90 %8.1f us; drop p50 %8.1f us p90 %8.1f us\n", nodes,
              percentile(place_us, 0.5), percentile(place_us, 0.9), percentile(drop_us, 0.5), percentile(drop_us, 0.9));
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  int nodes = 5000;
  int runs = 400;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--nodes") {
      nodes = std::atoi(argv[i + 1]);
    } else if (flag == "--runs") {
      runs = std::atoi(argv[i + 1]);
    }
  }
  if (nodes < 1 || runs < 1) {
    std::fprintf(stderr, "usage: state_publish_bench [--nodes N] [--runs N]\n");
    return 2;
  }
  run(std::max(1, nodes / 10), runs);
  run(nodes, runs);
  return 0;
}
