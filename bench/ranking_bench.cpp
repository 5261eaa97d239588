// Measures the fragmentation ranking of one pod over the candidates kube-scheduler sends at 5,000
// nodes (about 500), as /prioritize runs it: with warm caches (the same call repeated) and with
// cold ones (64 MiB written before each timed call, untimed), which is what the daemon meets under
// kube-scheduler, whose processes run between its calls. Nodes of 8 GPUs, each node's supply and
// usage in allocations of their own scattered among others, a third of them with GPUs in use.
// Policy only: no state, HTTP or JSON. Prints medians and 90th percentiles.
//
// usage: ranking_bench [--nodes N] [--candidates N] [--runs N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "extender/policy/score.h"

namespace {

using namespace extender;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

struct Node {
  model::NodeSupply supply;
  model::NodeUsage usage;
};

std::unique_ptr<Node> make_node(int i, std::mt19937_64& rng) {
  auto n = std::make_unique<Node>();
  n->supply.name = "gpu-node-" + std::to_string(i);
  n->supply.gpus = {{"nvidia.com/gpu", 8}};
  n->supply.gpu_devices = {"nvidia.com/gpu", 8, 80 * kGiB};
  n->supply.cpu_milli = 96000;
  n->supply.memory_bytes = 1024 * kGiB;
  n->supply.labels = {{"kubernetes.io/hostname", n->supply.name}, {"nvidia.com/gpu.product", "A100-SXM4-80GB"}};
  if (rng() % 3 == 0) {
    const std::int64_t used = 1 + static_cast<std::int64_t>(rng() % 7);
    n->usage.gpus["nvidia.com/gpu"] = used;
    for (std::int64_t d = 0; d < used; ++d) n->usage.gpu_devices[d] = {1, 0, 0};
    n->usage.cpu_milli = used * 8000;
    n->usage.memory_bytes = used * 64 * kGiB;
    n->usage.pods = used;
  }
  return n;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  int nodes = 5000;
  int candidates = 500;
  int runs = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const int v = std::atoi(argv[i + 1]);
    if (a == "--nodes") nodes = v;
    if (a == "--candidates") candidates = v;
    if (a == "--runs") runs = v;
  }
  if (nodes <= 0 || candidates <= 0 || candidates > nodes || runs <= 0) {
    std::fprintf(stderr, "usage: ranking_bench [--nodes N] [--candidates N <= nodes] [--runs N]\n");
    return 2;
  }
  std::mt19937_64 rng(42);
  std::vector<std::unique_ptr<Node>> all;
  std::vector<std::unique_ptr<char[]>> between;  // what else the heap holds between two nodes
  for (int i = 0; i < nodes; ++i) {
    all.push_back(make_node(i, rng));
    between.push_back(std::make_unique<char[]>(512 + rng() % 4096));
  }
  std::vector<policy::Candidate> list;
  std::vector<std::size_t> order(all.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  for (int i = 0; i < candidates; ++i) list.push_back({&all[order[i]]->supply, &all[order[i]]->usage});

  model::PodDemand pod;
  pod.uid = "bench-pod";
  pod.gpus = {{"nvidia.com/gpu", 1}};
  pod.cpu_milli = 8000;
  pod.memory_bytes = 64 * kGiB;
  const policy::ShapeMix mix = {{{1, 0, 0, 8000, 64 * kGiB}, 60},
                                {{2, 0, 0, 16000, 128 * kGiB}, 25},
                                {{4, 0, 0, 32000, 256 * kGiB}, 10},
                                {{8, 0, 0, 64000, 512 * kGiB}, 5}};

  std::vector<char> evictor(64 << 20);
  std::int64_t checksum = 0;
  auto time_one = [&](bool cold) {
    if (cold) {
      for (std::size_t i = 0; i < evictor.size(); i += 64) evictor[i] = static_cast<char>(evictor[i] + 1);
    }
    const auto t0 = Clock::now();
    const auto scores = policy::fragmentation_scores(pod, list, mix, 0.5);
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    for (std::int64_t s : scores) checksum += s;
    return us;
  };
  std::printf("fragmentation ranking of %d candidates among %d nodes, %d runs\n", candidates, nodes, runs);
  for (const bool cold : {false, true}) {
    std::vector<double> us;
    time_one(cold);
    for (int r = 0; r < runs; ++r) us.push_back(time_one(cold));
    std::printf("  %-40s p50 %8.1f us  p90 %8.1f us\n",
                cold ? "caches cold (64 MiB written before each)" : "caches warm", percentile(us, 0.5),
                percentile(us, 0.9));
  }
  std::printf("  (checksum %lld)\n", static_cast<long long>(checksum));
  return 0;
}
