// Measures policy::check_fit of a pod with CLAIMS claims (default 4) on a node whose pool of local
// PersistentVolumes has VOLUMES volumes (default 64) of mixed sizes, half of them held: the cost a
// /filter pays per node for local PVs (the matching rule of policy/local_volumes.h). Prints the
// median and 90th percentile per call over RUNS runs of 10,000 calls.
//
// usage: local_volumes_bench [--volumes N] [--claims N] [--runs N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "extender/model/persistent_volume.h"
#include "extender/policy/fit.h"

namespace {

using namespace extender;
using Clock = std::chrono::steady_clock;
constexpr std::int64_t kGiB = std::int64_t{1} << 30;

int arg(int argc, char** argv, const std::string& name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int volumes = arg(argc, argv, "--volumes", 64);
  const int claims = arg(argc, argv, "--claims", 4);
  const int runs = arg(argc, argv, "--runs", 15);
  model::Pool pool;
  pool.name = "fast-disks";
  pool.whole_devices = true;
  model::NodeUsage usage;
  model::Allocation held;
  for (int i = 0; i < volumes; ++i) {
    const std::int64_t bytes = (100 + 50 * (i % 4)) * kGiB;
    pool.devices.push_back({"pv-" + std::to_string(i), bytes, model::kReadWriteOnce, false});
    pool.capacity_bytes += bytes;
    if (i % 2 == 0)
      held.volumes.push_back({"v", "fast-disks", pool.devices.back().name, bytes, "ns/c" + std::to_string(i), ""});
  }
  usage.add(held);
  model::NodeSupply node;
  node.name = "n";
  node.pools.push_back(pool);
  model::PodDemand pod;
  pod.uid = "p";
  for (int i = 0; i < claims; ++i) {
    model::VolumeDemand v;
    v.volume = "v" + std::to_string(i);
    v.pool = "fast-disks";
    v.bytes = (40 + 30 * i) * kGiB;
    v.access_modes = model::kReadWriteOnce;
    v.claim = "ns/p-" + std::to_string(i);
    pod.volumes.push_back(v);
  }
  constexpr int kCalls = 10'000;
  std::vector<double> per_call;
  bool fits = false;
  for (int r = 0; r < runs; ++r) {
    const auto start = Clock::now();
    for (int i = 0; i < kCalls; ++i) fits = policy::check_fit(pod, node, usage, {}).verdict == policy::Verdict::kFits;
    per_call.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count() / kCalls);
  }
  std::sort(per_call.begin(), per_call.end());
  std::printf(
      "local_volumes_bench: %d volumes (half held), %d claims: fits=%d, check_fit median %.0f ns, p90 %.0f ns\n",
      volumes, claims, fits, per_call[per_call.size() / 2], per_call[per_call.size() * 9 / 10]);
  return 0;
}
