#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "extender/config/config.h"
#include "extender/daemon/simulator_config.h"
#include "extender/policy/packing.h"
#include "extender/sim/sim_dra.h"
#include "extender/sim/simulator.h"
#include "extender/sources/inventory.h"

namespace extender::sim {
namespace {

engine::ExtenderOptions options(const char* policy = "binpack") {
  auto cfg = config::parse_config(std::string("scoring:\n  gpu_packing: ") + policy + "\n", "<test>");
  EXPECT_TRUE(cfg) << cfg.message();
  return cfg->extender_options();
}

sources::Inventory inventory(const std::string& yaml) {
  auto cfg = config::parse_config("", "<test>");
  auto inv = sources::parse_inventory_with_dra(yaml, "inv", cfg->gpu.resources, cfg->gpu.share);
  EXPECT_TRUE(inv) << inv.message();
  return inv ? std::move(*inv) : sources::Inventory{};
}

WorkloadRow whole(std::string name, std::int64_t gpus) { return {std::move(name), gpus, 1000 * gpus, 1000, 4096, {}}; }
WorkloadRow share(std::string name, std::int64_t milli) { return {std::move(name), 1, milli, 1000, 4096, {}}; }

constexpr const char* kMixed = R"(nodes:
  - {name: dp-a, cpu: "64", memory: 512Gi, gpus: {nvidia.com/gpu: 4}, gpu_memory: {nvidia.com/gpu: 80Gi}}
  - {name: dra-a, cpu: "64", memory: 512Gi, dra: {gpus: 4, gpu_memory: 80Gi}}
  - {name: dra-b, cpu: "64", memory: 512Gi, dra: {gpus: 2, gpu_memory: 80Gi}}
  - {name: cpu-a, cpu: "64", memory: 512Gi}
)";

TEST(SimDra, AllocatesTheLowestFreeDevicesAndKeepsSnapshotsImmutable) {
  SimDra dra({{"a", 4, 80ll << 30}, {"b", 2, 0}}, "nvidia.com/gpu");
  EXPECT_EQ(dra.capacity(), 6);
  ASSERT_EQ(dra.dra_device_classes().size(), 1u);
  EXPECT_EQ(dra.dra_device_classes()[0].extended_resource_name, "nvidia.com/gpu");
  const auto before = dra.dra_snapshot();
  ASSERT_EQ(before->node("a")->gpus.size(), 4u);
  EXPECT_EQ(before->node("a")->gpus[3].memory_bytes, 80ll << 30);
  struct Step {
    const char* node;
    std::int64_t count;
    std::vector<std::int64_t> taken;  // empty: refused
    std::int64_t free_after;
  };
  const Step steps[] = {{"a", 1, {0}, 3}, {"a", 2, {1, 2}, 1}, {"a", 2, {}, 1}, {"b", 2, {0, 1}, 0},
                        {"b", 1, {}, 0},  {"c", 1, {}, -1},    {"a", 1, {3}, 0}};
  for (const auto& s : steps) {
    auto got = dra.allocate(s.node, s.count);
    if (s.taken.empty()) {
      EXPECT_FALSE(got) << s.node << " " << s.count;
    } else {
      ASSERT_TRUE(got) << got.message();
      EXPECT_EQ(*got, s.taken) << s.node << " " << s.count;
    }
    EXPECT_EQ(dra.free_gpus(s.node), s.free_after) << s.node;
  }
  EXPECT_EQ(before->node("a")->allocated_gpus(), 0) << "a snapshot handed out never changes";
  EXPECT_EQ(dra.dra_snapshot()->node("a")->allocated_gpus(), 4);
}

TEST(SimulatorDra, WholeGpuPodsLandOnDraNodesWithinTheirDevicesAndSharesNever) {
  const auto inv = inventory(kMixed);
  const std::map<std::string, std::int64_t> dra_devices{{"dra-a", 4}, {"dra-b", 2}};
  std::vector<WorkloadRow> rows;
  for (int i = 0; i < 14; ++i) {
    rows.push_back(i % 3 == 0 ? share("s" + std::to_string(i), 500) : whole("w" + std::to_string(i), 1 + i % 2));
  }
  for (const char* policy : {"binpack", "spread", "fragmentation"}) {
    for (std::uint64_t seed : {1, 2, 3}) {
      auto r = simulate(inv.nodes, inv.dra, rows, options(policy), *policy::parse_packing(policy), seed);
      ASSERT_TRUE(r) << r.message();
      std::map<std::string, std::set<std::int64_t>> held;
      std::int64_t on_dra = 0;
      for (const auto& p : r->placements) {
        auto devices = dra_devices.find(p.node);
        if (devices == dra_devices.end()) continue;
        EXPECT_EQ(p.pod[0], 'w') << policy << " seed " << seed << ": share " << p.pod << " on DRA node " << p.node;
        const WorkloadRow& row = rows[std::stoul(p.pod.substr(1))];
        EXPECT_EQ(static_cast<std::int64_t>(p.devices.size()), row.num_gpu) << p.pod;
        for (const auto& h : p.devices) {
          EXPECT_TRUE(h.whole);
          EXPECT_GE(h.index, 0);
          EXPECT_LT(h.index, devices->second) << p.pod << " on " << p.node;
          EXPECT_TRUE(held[p.node].insert(h.index).second) << p.node << " device " << h.index << " allocated twice";
        }
        on_dra += row.num_gpu;
      }
      EXPECT_GT(on_dra, 0) << policy << " seed " << seed << ": no pod was served from DRA";
      // 10 GPUs, 2 shares of 0.5 can only go to dp-a: 1+2+1+2... whole GPUs asked are 14.
      EXPECT_EQ(on_dra, 6) << policy << " seed " << seed << ": DRA nodes are filled before pods are refused";
    }
  }
}

TEST(SimulatorDra, BinpackFillsTheFullerNodeFirstAcrossBothKinds) {
  const auto inv = inventory(R"(nodes:
  - {name: dp, cpu: "64", memory: 512Gi, gpus: {nvidia.com/gpu: 4}, gpu_memory: {nvidia.com/gpu: 80Gi}}
  - {name: dra, cpu: "64", memory: 512Gi, dra: {gpus: 8, gpu_memory: 80Gi}}
)");
  struct Case {
    const char* what;
    WorkloadRow first;              // fits only one of the two nodes
    std::vector<std::string> then;  // where the next 1-GPU pods go, in order
  };
  const std::vector<std::string> dra3(3, "dra"), dp4(4, "dp");
  std::vector<std::string> dra_first = dra3, dp_first = dp4;
  dra_first.insert(dra_first.end(), dp4.begin(), dp4.end());
  dp_first.insert(dp_first.end(), dra3.begin(), dra3.end());
  dp_first.insert(dp_first.end(), {"dra", "dra", "dra", "dra"});
  const Case cases[] = {
      {"a 5-GPU pod makes the DRA node fuller", whole("big", 5), dra_first},
      {"a share makes the device-plugin node fuller",
       share("small", 500),
       {"dp", "dp", "dp", "dra", "dra", "dra", "dra", "dra", "dra", "dra"}},
  };
  for (const auto& c : cases) {
    for (std::uint64_t seed : {1, 2, 3, 4}) {
      std::vector<WorkloadRow> rows{c.first};
      for (std::size_t i = 0; i < c.then.size(); ++i) rows.push_back(whole("p" + std::to_string(i), 1));
      auto r = simulate(inv.nodes, inv.dra, rows, options(), policy::PackingStrategy::kBinpack, seed);
      ASSERT_TRUE(r) << r.message();
      ASSERT_EQ(r->placements.size(), rows.size()) << c.what;
      for (std::size_t i = 0; i < c.then.size(); ++i) {
        EXPECT_EQ(r->placements[i + 1].node, c.then[i]) << c.what << ", seed " << seed << ", pod " << i;
      }
    }
  }
}

TEST(SimulatorDra, AllocationAndFragmentationCountDraGpusAsDevicePluginGpus) {
  // The same cluster with node b's GPUs from DRA or from the device plugin: every whole-GPU pod
  // lands alike and the figures agree.
  const auto mixed = inventory(R"(nodes:
  - {name: a, cpu: "64", memory: 512Gi, gpus: {nvidia.com/gpu: 4}, gpu_memory: {nvidia.com/gpu: 80Gi}}
  - {name: b, cpu: "64", memory: 512Gi, dra: {gpus: 8, gpu_memory: 80Gi}}
)");
  const auto plugin = inventory(R"(nodes:
  - {name: a, cpu: "64", memory: 512Gi, gpus: {nvidia.com/gpu: 4}, gpu_memory: {nvidia.com/gpu: 80Gi}}
  - {name: b, cpu: "64", memory: 512Gi, gpus: {nvidia.com/gpu: 8}, gpu_memory: {nvidia.com/gpu: 80Gi}}
)");
  struct Case {
    std::vector<std::int64_t> gpus;  // one whole-GPU pod per entry
    double allocated_at_end;
  };
  const Case cases[] = {
      {{1, 1, 1}, 3.0 / 12},     {{2, 1, 4, 1}, 8.0 / 12},           {{8, 4}, 1.0},
      {{4, 4, 4, 1}, 12.0 / 12}, {{2, 2, 2, 2, 2, 2, 2}, 12.0 / 12},
  };
  for (const char* policy : {"binpack", "spread", "fragmentation"}) {
    for (const auto& c : cases) {
      std::vector<WorkloadRow> rows;
      for (std::int64_t g : c.gpus) rows.push_back(whole("p" + std::to_string(rows.size()), g));
      auto dra = simulate(mixed.nodes, mixed.dra, rows, options(policy), *policy::parse_packing(policy), 5);
      auto dp = simulate(plugin.nodes, plugin.dra, rows, options(policy), *policy::parse_packing(policy), 5);
      ASSERT_TRUE(dra) << dra.message();
      ASSERT_TRUE(dp) << dp.message();
      EXPECT_DOUBLE_EQ(dra->allocated_at_end, c.allocated_at_end) << policy << " " << rows.size() << " pods";
      EXPECT_DOUBLE_EQ(dra->allocated_at_end, dp->allocated_at_end) << policy;
      EXPECT_DOUBLE_EQ(dra->allocated_at_100, dp->allocated_at_100) << policy;
      EXPECT_DOUBLE_EQ(dra->first_refusal_at, dp->first_refusal_at) << policy;
      EXPECT_DOUBLE_EQ(dra->fragmented_at_100, dp->fragmented_at_100) << policy << " " << rows.size() << " pods";
      EXPECT_EQ(dra->refused, dp->refused) << policy;
      ASSERT_EQ(dra->placements.size(), dp->placements.size()) << policy;
      for (std::size_t i = 0; i < dra->placements.size(); ++i) {
        EXPECT_EQ(dra->placements[i].node, dp->placements[i].node) << policy << " " << dra->placements[i].pod;
      }
    }
  }
}

TEST(SimulatorDra, DraNodesTheInventoryCannotServeAreErrors) {
  const auto inv = inventory(kMixed);
  struct Case {
    std::vector<sources::DraGpus> dra;
    const char* mentions;
  };
  const Case cases[] = {
      {{{"elsewhere", 4, 0}}, "DRA node elsewhere is not one of the inventory's nodes"},
      {{{"dra-a", 4, 0}, {"dra-a", 4, 0}}, "DRA node dra-a is listed twice"},
      {{{"dp-a", 4, 0}}, "node dp-a gives nvidia.com/gpu from a device plugin and from DRA"},
  };
  for (const auto& c : cases) {
    auto r = simulate(inv.nodes, c.dra, {whole("p", 1)}, options(), policy::PackingStrategy::kBinpack, 1);
    ASSERT_FALSE(r) << c.mentions;
    EXPECT_NE(r.message().find(c.mentions), std::string::npos) << r.message();
  }
}

TEST(SimulateCommand, RunsTheExampleMixedInventory) {
  const std::string examples = std::string(EXTENDER_SOURCE_DIR) + "/examples/";
  const std::string inventory_file = examples + "mixed-inventory.yaml", workload_file = examples + "mixed-workload.csv";
  const char* argv[] = {
      "--inventory", inventory_file.c_str(), "--workload", workload_file.c_str(), "--policy", "binpack", "--json"};
  ::testing::internal::CaptureStdout();
  const int code = run_simulate_command(7, argv, daemon::simulator_config);
  std::fflush(stdout);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(code, 0);
  EXPECT_NE(out.find("{\"policies\":{\"binpack\":{\"allocated_at_100\":"), std::string::npos) << out;
}

TEST(SimulateCommand, AnUnknownPolicyIsRefusedListingThePackingTable) {
  const char* argv[] = {"--inventory", "unused.yaml", "--workload", "unused.csv", "--policy", "tight"};
  ::testing::internal::CaptureStderr();
  const int code = run_simulate_command(6, argv, daemon::simulator_config);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(code, 0);
  EXPECT_NE(err.find("unknown policy \"tight\" (" + policy::packing_names(", ") + ", best-fit, fgd)"),
            std::string::npos)
      << err;
}

}  // namespace
}  // namespace extender::sim
