// /filter under DRA claim churn against a quiet cluster: KubeCluster watching the fake API server
// (NODES DRA nodes, default 1,000, one ResourceSlice of 8 GPUs each, DeviceClass gpu.nvidia.com
// backing nvidia.com/gpu), the engine wired as the daemon wires it, and CLIENTS threads (1 and 4)
// repeating the /filter of a 1-GPU pod over every node for SECONDS each, in three phases: quiet;
// one unallocated ResourceClaim updated 50 times a second (what any namespace user can do);
// one claim whose allocation flips 50 times a second. Engine only, no HTTP. Prints each phase's
// median, p99 and worst filter time and the calls made.
//
// usage: dra_churn_bench [--nodes N] [--seconds S]
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "extender/sources/local_binder.h"
#include "gpu_pod.h"
#include "support/cluster_harness.h"
#include "support/fake_dra.h"

namespace {

using namespace extender;
using namespace extender::kube::testing;
using Clock = std::chrono::steady_clock;

double at(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

enum class Churn { kQuiet, kUnallocated, kAllocation };

void churn(ClusterHarness& h, Churn kind, const std::atomic<bool>& stop) {
  for (int i = 1; !stop; ++i) {
    if (kind == Churn::kUnallocated) {
      h.fake.put(Kind::kResourceClaims, resource_claim_object("ml", "churn", "c-churn", 1 + i % 7));
    } else if (kind == Churn::kAllocation) {
      h.fake.put(Kind::kResourceClaims, i % 2 ? resource_claim_object("ml", "flip", "c-flip", 1, "dra-0", {"gpu-0"})
                                              : resource_claim_object("ml", "flip", "c-flip", 1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void phase(const char* name, ClusterHarness& h, engine::Extender& ext, const wire::ExtenderArgs& args, Churn kind,
           int clients, int seconds) {
  std::atomic<bool> stop{false};
  std::thread churner([&] { churn(h, kind, stop); });
  std::vector<std::vector<double>> ms(static_cast<std::size_t>(clients));
  std::vector<std::thread> threads;
  const auto until = Clock::now() + std::chrono::seconds(seconds);
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      while (Clock::now() < until) {
        const auto start = Clock::now();
        (void)ext.filter(args);
        ms[static_cast<std::size_t>(c)].push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - start).count());
      }
    });
  }
  for (auto& t : threads) t.join();
  stop = true;
  churner.join();
  std::vector<double> all;
  for (const auto& v : ms) all.insert(all.end(), v.begin(), v.end());
  std::printf("%-34s clients %d  calls %6zu  median %8.2f ms  p99 %8.2f ms  worst %8.2f ms\n", name, clients,
              all.size(), at(all, 0.5), at(all, 0.99), at(all, 1.0));
}

}  // namespace

int main(int argc, char** argv) {
  int nodes = 1000;
  int seconds = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--nodes" && i + 1 < argc)
      nodes = std::atoi(argv[++i]);
    else if (a == "--seconds" && i + 1 < argc)
      seconds = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: dra_churn_bench [--nodes N] [--seconds S]\n");
      return 2;
    }
  }
  spdlog::set_level(spdlog::level::warn);
  ClusterHarness h;
  std::vector<std::string> names;
  for (int i = 0; i < nodes; ++i) {
    names.push_back("dra-" + std::to_string(i));
    h.fake.put(Kind::kNodes, node_object(names.back(), 0));
    h.fake.put(Kind::kResourceSlices, resource_slice_object(names.back(), 8));
  }
  h.fake.put(Kind::kDeviceClasses, device_class_object());
  h.start();
  if (!h.wait_ready(std::chrono::seconds(60)) ||
      !eventually([&] { return h.cluster->dra_served() && h.cluster->dra_inventory()->nodes.size() == names.size(); },
                  std::chrono::seconds(60))) {
    std::fprintf(stderr, "the cluster did not sync\n");
    return 1;
  }
  state::DemandCache demands(1000, std::chrono::minutes(10));
  sources::LocalBinder binder(h.state);
  engine::Extender ext =
      engine::EngineBuilder(h.cfg.extender_options(), h.state, demands, binder).cluster(h.cluster.get()).build();
  const wire::ExtenderArgs args = bench::gpu_pod_args("1", names);
  const auto passed = ext.filter(args).result.node_names->size();
  std::printf("%d DRA nodes, %zu pass the filter, %d s per phase\n", nodes, passed, seconds);
  for (int clients : {1, 4}) {
    phase("quiet", h, ext, args, Churn::kQuiet, clients, seconds);
    phase("unallocated claim updated 50/s", h, ext, args, Churn::kUnallocated, clients, seconds);
    phase("allocation flipped 50/s", h, ext, args, Churn::kAllocation, clients, seconds);
  }
  return 0;
}
