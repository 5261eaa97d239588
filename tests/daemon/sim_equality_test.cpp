// The simulator and the daemon decide alike: a small workload replayed by `simulate` in-process
// and, pod by pod, through a live daemon over HTTP (/filter, /prioritize, kube-scheduler's choice
// as SchedulerModel makes it with the same seed, /bind) ends with every pod on the same node and
// the same GPU devices, for every policy. In the every-pod deployment a pod without GPUs is
// ranked by /prioritize-unmanaged over HTTP and by the simulator in-process, and lands alike.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <random>
#include <set>

#include "daemon/daemon_process.h"
#include "extender/config/config.h"
#include "extender/sim/scheduler_model.h"
#include "extender/sim/simulator.h"
#include "extender/sources/inventory.h"

namespace extender::sim {
void PrintTo(const Placement& p, std::ostream* os) {
  *os << p.pod << " on " << p.node << " devices [";
  for (const auto& h : p.devices) {
    *os << " " << h.index << ":";
    if (h.whole) {
      *os << "whole";
    } else {
      *os << h.bytes;
    }
  }
  *os << " ]";
}
}  // namespace extender::sim

namespace extender::testing {
namespace {

using nlohmann::json;

// Nodes of unlike GPU counts and CPU/memory, so that CPU runs out before GPUs on some.
constexpr const char* kInventory = R"(nodes:
  - name: eq-a
    cpu: "32"
    memory: 128Gi
    gpus: {nvidia.com/gpu: 8}
    gpu_memory: {nvidia.com/gpu: 16Gi}
  - name: eq-b
    cpu: "64"
    memory: 256Gi
    gpus: {nvidia.com/gpu: 8}
    gpu_memory: {nvidia.com/gpu: 16Gi}
  - name: eq-c
    cpu: "24"
    memory: 96Gi
    gpus: {nvidia.com/gpu: 4}
    gpu_memory: {nvidia.com/gpu: 16Gi}
  - name: eq-d
    cpu: "16"
    memory: 64Gi
    gpus: {nvidia.com/gpu: 2}
    gpu_memory: {nvidia.com/gpu: 16Gi}
  - name: eq-e
    cpu: "8"
    memory: 32Gi
    gpus: {nvidia.com/gpu: 2}
    gpu_memory: {nvidia.com/gpu: 16Gi}
  - name: eq-f
    cpu: "8"
    memory: 48Gi
    gpus: {nvidia.com/gpu: 1}
    gpu_memory: {nvidia.com/gpu: 16Gi}
)";

// 25 GPUs: rows until about 130% of them are asked, of every GPU kind the trace has. No pods
// without GPUs: the simulator counts their CPU and memory as a watch shows them to the daemon, and
// a standalone daemon has no watch.
std::vector<sim::WorkloadRow> workload() {
  std::mt19937 rng(7);
  const std::int64_t shares[] = {230, 320, 470, 470, 650, 810, 810};
  std::vector<sim::WorkloadRow> rows;
  double asked = 0;
  while (asked < 1.3 * 25) {
    sim::WorkloadRow r;
    r.name = "pod-" + std::to_string(rows.size());
    const unsigned kind = rng() % 10;
    if (kind <= 5) {
      r.num_gpu = 1;
      r.gpu_milli = shares[rng() % 7];
    } else if (kind <= 8) {
      r.num_gpu = 1;
      r.gpu_milli = 1000;
    } else {
      r.num_gpu = 2;
      r.gpu_milli = 2000;
    }
    r.cpu_milli = (500 + static_cast<std::int64_t>(rng() % 6000)) * std::max<std::int64_t>(r.num_gpu, 1);
    r.memory_mib = 2048 + static_cast<std::int64_t>(rng() % 30000);
    asked += r.gpu_milli / 1000.0;
    rows.push_back(r);
  }
  return rows;
}

// The pod as kube-scheduler sends it; a required node affinity's terms (match expressions only) too.
std::string pod_json(const model::Pod& pod) {
  json requests = json::object();
  for (const auto& [k, v] : pod.containers.front().requests) requests[k] = v;
  json spec = {{"containers", json::array({{{"name", "main"}, {"resources", {{"requests", requests}}}}})}};
  if (const auto& terms = pod.constraints.required_node_affinity) {
    json selector_terms = json::array();
    for (const auto& t : *terms) {
      json expressions = json::array();
      for (const auto& r : t.match_expressions)
        expressions.push_back({{"key", r.key}, {"operator", r.op}, {"values", r.values}});
      selector_terms.push_back({{"matchExpressions", expressions}});
    }
    spec["affinity"] = {
        {"nodeAffinity",
         {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", selector_terms}}}}}};
  }
  return json{{"metadata", {{"name", pod.name}, {"namespace", pod.namespace_name}, {"uid", pod.uid}}}, {"spec", spec}}
      .dump();
}

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char path[] = "/tmp/extender-sim-equality-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) throw std::runtime_error("mkstemp");
    close(fd);
    path_ = path;
    std::ofstream(path_) << text;
  }
  ~TempFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The standalone daemon's config: this policy on this inventory, a window of 20 pods.
std::string daemon_yaml(const std::string& policy, const std::string& inventory) {
  return "admin:\n  listen: 127.0.0.1:0\n"
         "gpu:\n  share:\n    unit: \"\"\n"
         "scoring:\n  gpu_packing: " +
         policy +
         "\n  fragmentation_window: 20\n"
         "standalone:\n  inventory: " +
         inventory + "\n";
}

// The placements the daemon makes when kube-scheduler, as SchedulerModel, drives it over HTTP.
// A pod without GPUs is ranked by /prioritize-unmanaged (the every-pod entry) and placed by the
// scheduler alone: a standalone daemon has no watch to count its CPU and memory, so such a pod
// may only come last. Every GPU pod gets [] from /prioritize-unmanaged.
std::vector<sim::Placement> through_daemon(const std::string& config_yaml, const std::vector<model::NodeSupply>& nodes,
                                           const std::vector<sim::WorkloadRow>& rows, std::uint64_t seed,
                                           std::int64_t weight, std::vector<json>* unmanaged_answers = nullptr) {
  DaemonProcess daemon({}, config_yaml);
  httplib::Client c("127.0.0.1", daemon.port());
  httplib::Client admin("127.0.0.1", daemon.admin_port());
  c.set_read_timeout(10, 0);
  sim::SchedulerModel scheduler(nodes, seed, {weight, 0});
  const std::int64_t memory = sim::common_device_memory(nodes);
  std::vector<sim::Placement> out;
  std::map<std::string, std::size_t> bound;  // pod name -> index in out
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const model::Pod pod = sim::workload_pod(row, i, "nvidia.com/gpu", "aliyun.com/gpu-mem", memory);
    const std::int64_t mem_bytes = row.memory_mib << 20;
    const std::vector<std::string> fitting = scheduler.feasible(row.cpu_milli, mem_bytes, 0, pod.constraints);
    if (fitting.empty()) continue;
    const json request = {{"Pod", json::parse(pod_json(pod))}, {"NodeNames", fitting}};
    auto u = c.Post("/prioritize-unmanaged", request.dump(), "application/json");
    if (!u || u->status != 200) throw std::runtime_error("prioritize-unmanaged failed:\n" + daemon.log());
    if (row.num_gpu == 0) {
      if (i + 1 != rows.size()) throw std::runtime_error("a pod without GPUs before the last row");
      const json answer = json::parse(u->body);
      if (unmanaged_answers) unmanaged_answers->push_back(answer);
      std::map<std::string, std::int64_t> by_host;
      for (const auto& s : answer) by_host[s["Host"].get<std::string>()] = s["Score"].get<std::int64_t>();
      std::vector<std::int64_t> scores;
      if (!answer.empty()) {
        for (const auto& n : fitting) scores.push_back(by_host.count(n) ? by_host[n] : 0);
      }
      const std::string chosen = fitting[*scheduler.choose(fitting, scores, row.cpu_milli, mem_bytes)];
      scheduler.place(chosen, row.cpu_milli, mem_bytes);
      out.push_back({row.name, chosen, {}});
      continue;
    }
    if (u->body != "[]") throw std::runtime_error("prioritize-unmanaged scored a GPU pod: " + u->body);
    auto f =
        c.Post("/filter", json{{"Pod", json::parse(pod_json(pod))}, {"NodeNames", fitting}}.dump(), "application/json");
    if (!f || f->status != 200) throw std::runtime_error("filter failed:\n" + daemon.log());
    const json filtered = json::parse(f->body);
    if (filtered["NodeNames"].is_null() || filtered["NodeNames"].empty()) continue;
    const auto passed = filtered["NodeNames"].get<std::vector<std::string>>();
    auto p = c.Post("/prioritize", json{{"Pod", json::parse(pod_json(pod))}, {"NodeNames", passed}}.dump(),
                    "application/json");
    if (!p || p->status != 200) throw std::runtime_error("prioritize failed:\n" + daemon.log());
    std::map<std::string, std::int64_t> by_host;
    const json answer = json::parse(p->body);
    for (const auto& s : answer) by_host[s["Host"].get<std::string>()] = s["Score"].get<std::int64_t>();
    std::vector<std::int64_t> scores;
    for (const auto& n : passed) scores.push_back(by_host.count(n) ? by_host[n] : 0);
    const std::string chosen = passed[*scheduler.choose(passed, scores, row.cpu_milli, mem_bytes)];
    if (row.num_gpu > 0) {
      auto b = c.Post(
          "/bind",
          json{{"PodName", pod.name}, {"PodNamespace", pod.namespace_name}, {"PodUID", pod.uid}, {"Node", chosen}}
              .dump(),
          "application/json");
      if (!b || b->status != 200) throw std::runtime_error("bind failed:\n" + daemon.log());
      if (!json::parse(b->body)["Error"].get<std::string>().empty()) continue;
      bound[pod.display_name()] = out.size();
    }
    scheduler.place(chosen, row.cpu_milli, mem_bytes);
    out.push_back({row.name, chosen, {}});
  }
  for (const auto& n : nodes) {
    auto d = admin.Get("/debug/nodes/" + n.name);
    if (!d || d->status != 200) throw std::runtime_error("debug/nodes failed:\n" + daemon.log());
    const json view = json::parse(d->body);
    for (const auto& placed : view.at("pods")) {
      auto it = bound.find(placed["pod"].get<std::string>());
      if (it == bound.end()) continue;
      sim::Placement& where = out[it->second];
      if (where.node != n.name)
        throw std::runtime_error(where.pod + " shows on " + n.name + ", bound to " + where.node);
      for (const auto& h : placed.value("gpu_devices", json::array())) {
        where.devices.push_back(
            {h["index"].get<std::int64_t>(), h.value("bytes", std::int64_t{0}), h.value("whole", false)});
      }
    }
  }
  return out;
}

TEST(SimulatorEqualsDaemon, EveryPodOnTheSameNodeAndDevicesForEachPolicyAndSeed) {
  const TempFile inventory(kInventory);
  const auto rows = workload();
  struct Case {
    const char* policy;
    std::uint64_t seed;
  };
  const std::vector<Case> cases = {{"binpack", 1}, {"spread", 1}, {"fragmentation", 1}, {"fragmentation", 2}};
  std::map<std::string, std::vector<sim::Placement>> by_policy;
  for (const auto& c : cases) {
    const std::string yaml = daemon_yaml(c.policy, inventory.path());
    auto cfg = config::parse_config(yaml, "<test>");
    ASSERT_TRUE(cfg) << cfg.message();
    auto nodes = sources::load_inventory(inventory.path(), cfg->gpu.resources, cfg->gpu.share);
    ASSERT_TRUE(nodes) << nodes.message();
    auto simulated = sim::simulate(*nodes, rows, cfg->extender_options(), *policy::parse_packing(c.policy), c.seed);
    ASSERT_TRUE(simulated) << simulated.message();
    const auto live = through_daemon(yaml, *nodes, rows, c.seed, sim::SimulationOptions{}.scheduler.extender_weight);

    ASSERT_EQ(live.size(), simulated->placements.size()) << c.policy << " seed " << c.seed;
    for (std::size_t i = 0; i < live.size(); ++i) {
      EXPECT_EQ(live[i], simulated->placements[i])
          << c.policy << " seed " << c.seed << ": " << live[i].pod << " on " << live[i].node << " over HTTP, "
          << simulated->placements[i].node << " in the simulator";
    }
    // The workload is one that tests something: shares share devices, and some pods are refused.
    std::map<std::pair<std::string, std::int64_t>, int> shares_on_device;
    for (const auto& p : live) {
      for (const auto& h : p.devices) {
        if (!h.whole) ++shares_on_device[{p.node, h.index}];
      }
    }
    EXPECT_TRUE(std::any_of(shares_on_device.begin(), shares_on_device.end(), [](const auto& e) {
      return e.second > 1;
    })) << c.policy;
    EXPECT_LT(live.size(), rows.size()) << c.policy;
    by_policy[std::string(c.policy) + "/" + std::to_string(c.seed)] = live;
  }
  // The policies decide differently on it, so equal placements are not an accident of the workload.
  EXPECT_NE(by_policy["binpack/1"], by_policy["spread/1"]);
  EXPECT_NE(by_policy["binpack/1"], by_policy["fragmentation/1"]);
}

TEST(SimulatorEqualsDaemon, EveryPodDeploymentRanksAPodWithoutGpusAsThePrioritizeUnmanagedVerb) {
  const TempFile inventory(kInventory);
  const auto gpu_rows = workload();
  const std::string yaml = daemon_yaml("fragmentation", inventory.path());
  auto cfg = config::parse_config(yaml, "<test>");
  ASSERT_TRUE(cfg) << cfg.message();
  auto nodes = sources::load_inventory(inventory.path(), cfg->gpu.resources, cfg->gpu.share);
  ASSERT_TRUE(nodes) << nodes.message();
  constexpr std::int64_t kWeight = 10;

  int cases = 0, ranked = 0, moved_by_ranking = 0;
  for (std::uint64_t seed : {1, 2}) {
    for (std::size_t gpu_pods : {6, 12, 18, 24}) {
      for (std::int64_t cpu_milli : {3000, 7000}) {
        std::vector<sim::WorkloadRow> rows(gpu_rows.begin(), gpu_rows.begin() + static_cast<std::ptrdiff_t>(gpu_pods));
        sim::WorkloadRow cpu_only;
        cpu_only.name = "cpu-only";
        cpu_only.cpu_milli = cpu_milli;
        cpu_only.memory_mib = 8192;
        rows.push_back(cpu_only);
        const std::string what = "seed " + std::to_string(seed) + ", after " + std::to_string(gpu_pods) +
                                 " GPU pods, " + std::to_string(cpu_milli) + "m";
        ++cases;

        sim::SimulationOptions every_pod;
        every_pod.deployment = sim::Deployment::kEveryPod;
        every_pod.scheduler = {kWeight, 0};
        auto simulated = sim::simulate(*nodes, rows, cfg->extender_options(), policy::PackingStrategy::kFragmentation,
                                       seed, every_pod);
        ASSERT_TRUE(simulated) << simulated.message();
        std::vector<json> answers;
        const auto live = through_daemon(yaml, *nodes, rows, seed, kWeight, &answers);

        ASSERT_EQ(live, simulated->placements) << what;
        ASSERT_EQ(live.back().pod, "cpu-only") << what;
        ASSERT_EQ(answers.size(), 1u) << what;
        std::set<std::int64_t> distinct;
        for (const auto& a : answers.front()) distinct.insert(a["Score"].get<std::int64_t>());
        if (distinct.size() > 1) ++ranked;

        sim::SimulationOptions gpu_pods_only = every_pod;
        gpu_pods_only.deployment = sim::Deployment::kGpuPods;
        auto unranked = sim::simulate(*nodes, rows, cfg->extender_options(), policy::PackingStrategy::kFragmentation,
                                      seed, gpu_pods_only);
        ASSERT_TRUE(unranked) << unranked.message();
        ASSERT_EQ(unranked->placements.size(), rows.size()) << what;
        if (unranked->placements.back().node != live.back().node) ++moved_by_ranking;
      }
    }
  }
  // The daemon's ranking tells nodes apart and moves the pod from where the scheduler's own
  // plugins would put it, so equal placements are not an accident of the workload.
  EXPECT_EQ(ranked, cases);
  EXPECT_GE(moved_by_ranking, cases / 2);
}

// Pods constrained to GPU models (the trace's gpu_spec): kube-scheduler, as SchedulerModel, filters
// nodes by the pods' required node affinity on nvidia.com/gpu.product before the daemon sees them,
// over HTTP as in the simulator, and every pod lands alike, a constrained one on its model only.
TEST(SimulatorEqualsDaemon, PodsConstrainedToAGpuModelLandAlike) {
  const std::map<std::string, std::string> model_of = {{"eq-a", "A"}, {"eq-b", "B"}, {"eq-c", "A"},
                                                       {"eq-d", "B"}, {"eq-e", "A"}, {"eq-f", "B"}};
  // The daemon reads each node's model from the inventory's labels, as from a Node's in a cluster.
  std::string labelled = kInventory;
  for (const auto& [name, gpu_model] : model_of) {
    const std::string line = "  - name: " + name + "\n";
    labelled.insert(labelled.find(line) + line.size(), "    labels: {nvidia.com/gpu.product: " + gpu_model + "}\n");
  }
  const TempFile inventory(labelled);
  const TempFile unlabelled_inventory(kInventory);
  const std::string yaml = daemon_yaml("fragmentation", inventory.path());
  auto cfg = config::parse_config(yaml, "<test>");
  ASSERT_TRUE(cfg) << cfg.message();
  auto nodes = sources::load_inventory(inventory.path(), cfg->gpu.resources, cfg->gpu.share);
  ASSERT_TRUE(nodes) << nodes.message();
  for (auto& n : *nodes) {
    EXPECT_EQ(n.gpu_model, model_of.at(n.name));
    n.labels[sim::kGpuModelLabel] = model_of.at(n.name);
    n.labels_known = true;
  }
  auto rows = workload();
  const std::vector<std::vector<std::string>> specs = {{"A"}, {"B"}, {}, {"A", "B"}};
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i].gpu_models = specs[i % specs.size()];
  std::size_t unlike_without_models = 0;
  for (std::uint64_t seed : {1, 2}) {
    auto simulated =
        sim::simulate(*nodes, rows, cfg->extender_options(), policy::PackingStrategy::kFragmentation, seed);
    ASSERT_TRUE(simulated) << simulated.message();
    const auto live = through_daemon(yaml, *nodes, rows, seed, sim::SimulationOptions{}.scheduler.extender_weight);
    ASSERT_EQ(live, simulated->placements) << "seed " << seed;
    std::map<std::string, const sim::WorkloadRow*> by_name;
    for (const auto& r : rows) by_name[r.name] = &r;
    std::set<std::string> unconstrained_models;
    for (const auto& p : live) {
      const auto& models = by_name.at(p.pod)->gpu_models;
      if (models.empty()) unconstrained_models.insert(model_of.at(p.node));
      if (models.size() == 1) {
        EXPECT_EQ(model_of.at(p.node), models.front()) << p.pod << " seed " << seed;
      }
    }
    EXPECT_EQ(unconstrained_models.size(), 2u) << "unconstrained pods land on both models, seed " << seed;
    EXPECT_LT(live.size(), rows.size()) << "some pods are refused, seed " << seed;
    const std::string blind = daemon_yaml("fragmentation", unlabelled_inventory.path());
    const auto without = through_daemon(blind, *nodes, rows, seed, sim::SimulationOptions{}.scheduler.extender_weight);
    if (without != live) ++unlike_without_models;
  }
  EXPECT_GT(unlike_without_models, 0u) << "a daemon that knows no node's model ranks the constrained mix otherwise";
}

}  // namespace
}  // namespace extender::testing
