#pragma once
// A small cluster for the status page and `inspect` tests: two A100 nodes (devices held whole
// and in shares, a hand-written pool with a bind in flight), an H100 node with a published pool,
// a node whose name and pool are markup, and a CPU node; and one refused pod in a DecisionLog.
#include <string>

#include "extender/server/decision_log.h"
#include "extender/state/cluster_state.h"

namespace extender::testing {

inline constexpr std::int64_t kGiB = std::int64_t{1} << 30;
inline constexpr const char* kHostileNode = "<script>alert('n')</script>";

inline model::NodeSupply gpu_node(const std::string& name, std::int64_t gpus, std::int64_t memory) {
  model::NodeSupply s;
  s.name = name;
  s.gpus["nvidia.com/gpu"] = gpus;
  s.gpu_memory_bytes["nvidia.com/gpu"] = memory;
  s.gpu_devices = {"nvidia.com/gpu", gpus, memory};
  return s;
}

inline state::Claim pod_claim(const std::string& owner, const std::string& node, model::Allocation a) {
  state::Claim c;
  c.owner = owner;
  c.node = node;
  a.pods = 1;
  c.allocation = std::move(a);
  return c;
}

inline void fill_status_fixture(state::ClusterState& st, TimePoint now) {
  model::NodeSupply a1 = gpu_node("gpu-a100-1", 8, 40 * kGiB);
  a1.pools.push_back({"local", 2048 * kGiB});
  model::NodeSupply a2 = gpu_node("gpu-a100-2", 8, 40 * kGiB);
  a2.pools.push_back({"local", 2048 * kGiB});
  model::NodeSupply h1 = gpu_node("gpu-h100-1", 4, 80 * kGiB);
  model::Pool nvme{"nvme", 900 * kGiB};
  nvme.source = "CSIStorageCapacity storage/nvme-h100-1";
  nvme.published_bytes = 900 * kGiB;
  h1.pools.push_back(nvme);
  model::NodeSupply bad = gpu_node(kHostileNode, 1, 16 * kGiB);
  bad.pools.push_back({"<b>pool</b>", 10 * kGiB});
  model::NodeSupply cpu;
  cpu.name = "cpu-1";
  cpu.pools.push_back({"local", 500 * kGiB});
  st.upsert_nodes({a1, a2, h1, bad, cpu});

  model::Allocation whole;
  whole.gpus["nvidia.com/gpu"] = 2;
  whole.gpu_devices = {{0, 0, true}, {1, 0, true}};
  st.place("uid-trainer", pod_claim("ml/trainer-0", "gpu-a100-1", whole));
  model::Allocation share_a;
  share_a.gpu_devices = {{2, 10 * kGiB, false}};
  st.place("uid-infer-a", pod_claim("ml/infer-a", "gpu-a100-1", share_a));
  model::Allocation share_b;
  share_b.gpu_devices = {{2, 20 * kGiB, false}};
  st.place("uid-infer-b", pod_claim("ml/infer-b", "gpu-a100-1", share_b));
  model::Allocation h100;
  h100.gpus["nvidia.com/gpu"] = 4;
  h100.gpu_devices = {{0, 0, true}, {1, 0, true}, {2, 0, true}, {3, 0, true}};
  st.place("uid-big", pod_claim("ml/<big>", "gpu-h100-1", h100));
  model::Allocation etl;
  etl.volumes = {{"scratch", "local", "", 100 * kGiB}};
  st.reserve("uid-etl", pod_claim("data/etl-0", "gpu-a100-2", etl), std::chrono::seconds(30), now);
}

// ml/trainer-1 asks 4 GPUs: the H100 node is full, the CPU node has none, the A100 nodes passed.
inline void refuse_fixture_pod(server::DecisionLog& log, TimePoint now) {
  model::PodDemand d;
  d.uid = "uid-trainer-1";
  d.namespace_name = "ml";
  d.name = "trainer-1";
  d.gpus["nvidia.com/gpu"] = 4;
  wire::FilterResult r;
  r.node_names = std::vector<std::string_view>{"gpu-a100-1", "gpu-a100-2"};
  r.failed.add("gpu-h100-1", "nvidia.com/gpu: pod needs 4, node has 0 free of 4");
  r.failed.add(kHostileNode, "nvidia.com/gpu: pod needs 4, node has 1");
  r.failed_unresolvable.add("cpu-1", "nvidia.com/gpu: pod needs 4, node has none");
  log.add_filter("ml", "trainer-1", "uid-trainer-1", d, 5, r, now);
  log.add_decision({now, "filter", "ml/trainer-1", 5, 2, "ok", ""});
}

}  // namespace extender::testing
