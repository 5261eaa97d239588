// Measures the status page (/ui) at cluster size: rendering one page over NODES nodes of 8 GPUs
// (default 5,000; a third with two GPUs held whole, a third with shares, a pool each, a bind in
// flight on every tenth), with 512 refused pods and 50 decisions remembered and a learned mix of
// shapes: the summary pass over every node (alike nodes, placement quality) plus one page of
// nodes. Also the /debug/state JSON `inspect` reads, for comparison. Prints the median and 90th
// percentile and the page's size. Rendering only: no HTTP.
//
// usage: status_page_bench [--nodes N] [--runs N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "extender/server/debug_view.h"
#include "extender/server/status_page.h"
#include "support/status_fixture.h"

namespace {

using namespace extender;
using Clock = std::chrono::steady_clock;
constexpr std::int64_t kGiB = std::int64_t{1} << 30;

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

void fill(state::ClusterState& st, int nodes, TimePoint now) {
  std::vector<model::NodeSupply> supply;
  for (int i = 0; i < nodes; ++i) {
    model::NodeSupply s = testing::gpu_node("gpu-" + std::to_string(i), 8, 80 * kGiB);
    s.pools.push_back({"local", 4096 * kGiB});
    supply.push_back(std::move(s));
  }
  st.upsert_nodes(std::move(supply));
  for (int i = 0; i < nodes; ++i) {
    const std::string node = "gpu-" + std::to_string(i);
    model::Allocation a;
    if (i % 3 == 0) {
      a.gpus["nvidia.com/gpu"] = 2;
      a.gpu_devices = {{0, 0, true}, {1, 0, true}};
    } else if (i % 3 == 1) {
      a.gpu_devices = {{3, 20 * kGiB, false}};
    }
    a.volumes = {{"data", "local", "", 100 * kGiB}};
    st.place("uid-" + std::to_string(i), testing::pod_claim("ml/pod-" + std::to_string(i), node, a));
    if (i % 10 == 0) {
      st.reserve("res-" + std::to_string(i), testing::pod_claim("ml/next-" + std::to_string(i), node, a),
                 std::chrono::seconds(60), now);
    }
  }
}

void run(int nodes, int runs) {
  state::ClusterState st;
  const TimePoint now = SteadyClock::now();
  fill(st, nodes, now);
  server::DecisionLog log;
  for (int i = 0; i < 600; ++i) {
    wire::FilterResult r;
    r.failed.add("gpu-1", "nvidia.com/gpu: pod needs 8, node has 6 free of 8");
    model::PodDemand d;
    d.gpus["nvidia.com/gpu"] = 8;
    log.add_filter("ml", "wait-" + std::to_string(i), "u", d, static_cast<std::size_t>(nodes), r, now);
    log.add_decision({now, "filter", "ml/wait-" + std::to_string(i), static_cast<std::size_t>(nodes), 0, "ok", ""});
  }
  const state::Snapshot snap = st.snapshot();
  server::StatusInputs in;
  in.snapshot = &snap;
  in.refused = log.refused_pods();
  in.decisions = log.decisions();
  in.mix = {{{1, 0, 0}, 4}, {{2, 0, 0}, 1}, {{4, 0, 0}, 1}, {{8, 0, 0}, 1}, {{0, 20 * kGiB, 0}, 2}};
  in.now = now;
  std::vector<double> page_ms, state_ms;
  std::size_t size = 0, state_size = 0;
  for (int r = 0; r < runs; ++r) {
    auto t0 = Clock::now();
    size = server::render_status_page(in, server::parse_page_query("page=7&pod=ml/wait-599")).size();
    auto t1 = Clock::now();
    state_size = server::render_state(snap, now).size();
    auto t2 = Clock::now();
    page_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    state_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
  }
  std::printf("nodes %d: /ui page median %.2f ms, p90 %.2f ms, %zu KB; /debug/state median %.2f ms, %zu KB (%d runs)\n",
              nodes, percentile(page_ms, 0.5), percentile(page_ms, 0.9), size / 1024, percentile(state_ms, 0.5),
              state_size / 1024, runs);
}

}  // namespace

int main(int argc, char** argv) {
  int nodes = 5000;
  int runs = 15;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--nodes") nodes = std::atoi(argv[i + 1]);
    if (a == "--runs") runs = std::atoi(argv[i + 1]);
  }
  run(std::max(nodes, 1), std::max(runs, 1));
  return 0;
}
