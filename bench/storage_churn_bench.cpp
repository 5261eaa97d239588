// Storage and GPU /filter under the churn storage drivers make, against the same cluster quiet:
// KubeCluster watching the fake API server, the engine wired as the daemon wires it (no HTTP),
// two clients at once: one repeating the every-pod entry's /filter of a pod with one 10Gi volume
// (the storage filter), one the /filter of a 1-GPU pod (the GPU filter), each over every node.
// Two scenarios:
// - labels NODES: a TopoLVM class, one CSIStorageCapacity per node (matchLabels
//   topology.topolvm.io/node), 8 GPUs per node; churn rewrites nvidia.com/gfd.timestamp of one
//   node after another (GPU feature discovery's label), --label-rate a second (default 2).
// - acs NODESxDRIVES: csi-baremetal, DRIVES AvailableCapacities per node (SSD), 8 GPUs per node;
//   churn changes the size of one AC after another, --ac-rate a second (default 10).
// Each prints the p50 and p99 of both filters quiet and under churn on one line each, then the
// process's CPU per event (--events, default 20, sent at 20 a second with no client running, CPU counted until
// the process is idle again, less its idle CPU over as long; the fake API server's part, serving
// the event, is included and does not grow with the cluster), and the RSS the synced stores
// added (KubeCluster's stores and the state, over the fake API server's objects).
//
// usage: storage_churn_bench [--labels N,N,...] [--acs NxD,NxD,...] [--seconds S]
//                            [--label-rate R] [--ac-rate R] [--events E]
// default: --labels 500,1000 --acs 500x4 --seconds 2 (well under a minute)
#include <malloc.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "extender/sources/local_binder.h"
#include "gpu_pod.h"
#include "support/cluster_harness.h"

namespace {

using namespace extender;
using namespace extender::kube::testing;
using Clock = std::chrono::steady_clock;

constexpr const char* kTopolvmKey = "topology.topolvm.io/node";
constexpr const char* kGfdLabel = "nvidia.com/gfd.timestamp";

double at(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double rss_mib() {
  malloc_trim(0);
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

// One change of the cluster: the i-th event of the scenario's churn.
using Churn = std::function<void(int)>;

struct Times {
  std::vector<double> storage, gpu;
};

Times run_clients(engine::Extender& ext, const wire::ExtenderArgs& storage, const wire::ExtenderArgs& gpu,
                  const Churn& churn, double rate, int seconds) {
  std::atomic<bool> stop{false};
  std::thread churner([&] {
    if (rate <= 0) return;
    const auto period = std::chrono::duration<double>(1.0 / rate);
    auto next = Clock::now();
    for (int i = 1; !stop; ++i) {
      churn(i);
      next += std::chrono::duration_cast<Clock::duration>(period);
      while (!stop && Clock::now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  Times t;
  const auto until = Clock::now() + std::chrono::seconds(seconds);
  auto client = [&](const wire::ExtenderArgs& args, engine::PodScope scope, std::vector<double>& out) {
    while (Clock::now() < until) {
      const auto start = Clock::now();
      (void)ext.filter(args, {}, scope);
      out.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
  };
  std::thread s([&] { client(storage, engine::PodScope::kUnmanaged, t.storage); });
  std::thread g([&] { client(gpu, engine::PodScope::kManaged, t.gpu); });
  s.join();
  g.join();
  stop = true;
  churner.join();
  return t;
}

// CPU of the whole process per event: `events` sent at 20 a second, then counted until a 200 ms
// window costs under 2 ms of CPU (at most 120 s), less what the process spends idle over as long
// (its threads' polls and timers, measured just before).
double cpu_per_event(const Churn& churn, int events, int offset) {
  auto seconds_since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  const double idle_before = cpu_seconds();
  const auto idle_start = Clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(50 * events));
  const double idle_rate = (cpu_seconds() - idle_before) / seconds_since(idle_start);
  const double before = cpu_seconds();
  const auto start = Clock::now();
  for (int i = 0; i < events; ++i) {
    churn(offset + i);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const auto limit = Clock::now() + std::chrono::seconds(120);
  for (double last = cpu_seconds(); Clock::now() < limit;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const double now = cpu_seconds();
    if (now - last < 0.002) break;
    last = now;
  }
  return std::max(0.0, cpu_seconds() - before - idle_rate * seconds_since(start)) / events;
}

void report(const std::string& scenario, ClusterHarness& h, const std::vector<std::string>& names,
            const wire::ExtenderArgs& storage_args, const Churn& churn, double rate, int seconds, double rss_before,
            int events) {
  const double rss = rss_mib() - rss_before;
  state::DemandCache demands(1000, std::chrono::minutes(10));
  sources::LocalBinder binder(h.state);
  engine::Extender ext =
      engine::EngineBuilder(h.cfg.extender_options(), h.state, demands, binder).cluster(h.cluster.get()).build();
  const wire::ExtenderArgs gpu_args = bench::gpu_pod_args("1", names);
  const auto storage_passed = ext.filter(storage_args, {}, engine::PodScope::kUnmanaged).result.node_names;
  const auto gpu_passed = ext.filter(gpu_args).result.node_names;
  const Times quiet = run_clients(ext, storage_args, gpu_args, churn, 0, seconds);
  const Times churned = run_clients(ext, storage_args, gpu_args, churn, rate, seconds);
  const double cpu = cpu_per_event(churn, events, 1'000'000);
  std::printf(
      "%-26s storage (%zu pass) p50 %7.2f / %7.2f ms  p99 %8.2f / %8.2f ms | gpu (%zu pass) p50 %6.2f / %6.2f ms"
      "  p99 %6.2f / %6.2f ms | calls %zu/%zu, %zu/%zu | cpu/event %8.3f ms | stores +%.0f MiB\n",
      scenario.c_str(), storage_passed ? storage_passed->size() : 0, at(quiet.storage, 0.5), at(churned.storage, 0.5),
      at(quiet.storage, 0.99), at(churned.storage, 0.99), gpu_passed ? gpu_passed->size() : 0, at(quiet.gpu, 0.5),
      at(churned.gpu, 0.5), at(quiet.gpu, 0.99), at(churned.gpu, 0.99), quiet.storage.size(), churned.storage.size(),
      quiet.gpu.size(), churned.gpu.size(), cpu * 1e3, rss);
  std::fflush(stdout);
}

wire::ExtenderArgs volume_pod_args(const std::string& cls, const std::vector<std::string>& nodes) {
  wire::ExtenderArgs args = bench::gpu_pod_args("0", nodes);
  args.pod.uid = "bench-volume-pod";
  args.pod.name = "bench-volume";
  args.pod.containers[0].requests.clear();
  args.pod.volumes.push_back({"data", model::PodVolume::Kind::kEphemeral, "", cls, std::string("10Gi")});
  return args;
}

json labelled_node(const std::string& name, int stamp) {
  return node_object(name, 8, {}, {{kTopolvmKey, name}, {kGfdLabel, std::to_string(stamp)}});
}

bool synced(ClusterHarness& h, const std::vector<std::string>& names, const std::string& pool) {
  return h.wait_ready(std::chrono::seconds(900)) && eventually(
                                                        [&] {
                                                          const auto snap = h.state.snapshot();
                                                          const auto* last = snap.find(names.back());
                                                          return snap.nodes().size() == names.size() && last &&
                                                                 last->supply.find_pool(pool);
                                                        },
                                                        std::chrono::seconds(900));
}

void label_scenario(int nodes, int seconds, double rate, int events) {
  ClusterHarness h;
  std::vector<std::string> names;
  h.fake.put(Kind::kCsiDrivers, csi_driver_object("topolvm.io", true));
  h.fake.put(Kind::kClasses, csi_class_object("topolvm", "topolvm.io"));
  for (int i = 0; i < nodes; ++i) {
    names.push_back("node-" + std::to_string(i));
    h.fake.put(Kind::kNodes, labelled_node(names.back(), 0));
    h.fake.put(Kind::kCapacities,
               capacity_object("cap-" + std::to_string(i), "topolvm", kTopolvmKey, names.back(), "100Gi"));
  }
  const double rss_fake = rss_mib();
  h.start();
  if (!synced(h, names, "topolvm")) {
    std::fprintf(stderr, "labels %d: the cluster did not sync\n", nodes);
    return;
  }
  Churn churn = [&](int i) {
    h.fake.put(Kind::kNodes, labelled_node(names[static_cast<std::size_t>(i) % names.size()], i));
  };
  report("labels " + std::to_string(nodes) + " nodes", h, names, volume_pod_args("topolvm", names), churn, rate,
         seconds, rss_fake, events);
}

json available_capacity(const std::string& name, const std::string& node, std::int64_t gib) {
  return {{"apiVersion", "csi-baremetal.dell.com/v1"},
          {"kind", "AvailableCapacity"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"Location", name + "-drive"}, {"NodeId", "node-" + node}, {"storageClass", "SSD"}, {"Size", gib << 30}}}};
}

void ac_scenario(int nodes, int drives, int seconds, double rate, int events) {
  ClusterHarness h;
  std::vector<std::string> names;
  json sc = csi_class_object("bm-ssd", "csi-baremetal");
  sc["parameters"] = {{"storageType", "SSD"}};
  h.fake.put(Kind::kClasses, sc);
  for (int i = 0; i < nodes; ++i) {
    names.push_back("node-" + std::to_string(i));
    h.fake.put(Kind::kNodes, node_object(names.back(), 8));
    for (int d = 0; d < drives; ++d) {
      h.fake.put(Kind::kAvailableCapacities,
                 available_capacity(names.back() + "-d" + std::to_string(d), names.back(), 100));
    }
  }
  const double rss_fake = rss_mib();
  h.start();
  if (!synced(h, names, "csi-baremetal:SSD")) {
    std::fprintf(stderr, "acs %dx%d: the cluster did not sync\n", nodes, drives);
    return;
  }
  Churn churn = [&](int i) {
    const std::size_t n = static_cast<std::size_t>(i) % names.size();
    const int d = (i / static_cast<int>(names.size())) % drives;
    h.fake.put(Kind::kAvailableCapacities,
               available_capacity(names[n] + "-d" + std::to_string(d), names[n], 100 - (i % 2) * 10));
  };
  report("acs " + std::to_string(nodes) + "x" + std::to_string(drives), h, names, volume_pod_args("bm-ssd", names),
         churn, rate, seconds, rss_fake, events);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string labels = "500,1000";
  std::string acs = "500x4";
  int seconds = 2;
  double label_rate = 2;
  double ac_rate = 10;
  int events = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--labels" && i + 1 < argc)
      labels = argv[++i];
    else if (a == "--acs" && i + 1 < argc)
      acs = argv[++i];
    else if (a == "--seconds" && i + 1 < argc)
      seconds = std::atoi(argv[++i]);
    else if (a == "--label-rate" && i + 1 < argc)
      label_rate = std::atof(argv[++i]);
    else if (a == "--ac-rate" && i + 1 < argc)
      ac_rate = std::atof(argv[++i]);
    else if (a == "--events" && i + 1 < argc)
      events = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr,
                   "usage: storage_churn_bench [--labels N,N,...] [--acs NxD,...] [--seconds S] [--label-rate R] "
                   "[--ac-rate R] [--events E]\n");
      return 2;
    }
  }
  spdlog::set_level(spdlog::level::err);
  std::printf("each figure: quiet / under churn; %d s per phase; labels churned %.0f/s, ACs %.0f/s\n", seconds,
              label_rate, ac_rate);
  for (const auto& n : split(labels)) label_scenario(std::stoi(n), seconds, label_rate, events);
  for (const auto& shape : split(acs)) {
    const auto x = shape.find('x');
    if (x == std::string::npos) continue;
    ac_scenario(std::stoi(shape.substr(0, x)), std::stoi(shape.substr(x + 1)), seconds, ac_rate, events);
  }
  return 0;
}
