#include "extender/policy/fit.h"
#include "extender/model/persistent_volume.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>
#include <vector>

namespace extender::policy {
namespace {

using model::Allocation;
using model::NodeSupply;
using model::NodeUsage;
using model::PodDemand;
using model::Pool;

constexpr std::int64_t GiB = std::int64_t{1} << 30;
constexpr std::int64_t MiB = std::int64_t{1} << 20;

NodeSupply gpu_node(std::int64_t gpus, std::optional<std::int64_t> memory = std::nullopt) {
  NodeSupply n;
  n.name = "n";
  n.gpus["nvidia.com/gpu"] = gpus;
  if (memory) n.gpu_memory_bytes["nvidia.com/gpu"] = *memory;
  return n;
}

PodDemand gpu_pod(std::int64_t gpus, std::optional<std::int64_t> floor = std::nullopt) {
  PodDemand d;
  d.uid = "p";
  d.gpus["nvidia.com/gpu"] = gpus;
  d.gpu_memory_floor_bytes = floor;
  return d;
}

NodeUsage gpus_used(std::int64_t n, const char* resource = "nvidia.com/gpu") {
  NodeUsage u;
  Allocation a;
  a.gpus[resource] = n;
  u.add(a);
  return u;
}

struct GpuCase {
  const char* what;
  std::int64_t allocatable;
  std::int64_t used;
  std::int64_t need;
  Verdict verdict;
  const char* reason;
};

TEST(CheckFit, GpuCount) {
  const GpuCase cases[] = {
      {"fits exactly", 4, 2, 2, Verdict::kFits, ""},
      {"fits with room", 8, 0, 2, Verdict::kFits, ""},
      {"usage in the way", 4, 3, 2, Verdict::kInsufficient, "nvidia.com/gpu: pod needs 2, node has 1 free of 4"},
      {"full", 4, 4, 1, Verdict::kInsufficient, "nvidia.com/gpu: pod needs 1, node has 0 free of 4"},
      {"node too small", 1, 0, 2, Verdict::kUnresolvable, "nvidia.com/gpu: pod needs 2, node has 1 allocatable"},
      {"no GPUs", 0, 0, 1, Verdict::kUnresolvable, "nvidia.com/gpu: pod needs 1, node has none"},
  };
  for (const auto& c : cases) {
    Fit f = check_fit(gpu_pod(c.need), gpu_node(c.allocatable), gpus_used(c.used));
    EXPECT_EQ(f.verdict, c.verdict) << c.what;
    EXPECT_EQ(format_reason(f.reason), c.reason) << c.what;
    if (c.verdict == Verdict::kFits) {
      EXPECT_EQ(f.allocation.gpus.at("nvidia.com/gpu"), c.need) << c.what;
    }
  }
}

TEST(CheckFit, VerdictOnlyGivesTheSameVerdictAndReasonWithoutAnAllocation) {
  const GpuCase cases[] = {
      {"fits", 8, 0, 2, Verdict::kFits, ""},
      {"usage in the way", 4, 3, 2, Verdict::kInsufficient, "nvidia.com/gpu: pod needs 2, node has 1 free of 4"},
      {"node too small", 1, 0, 2, Verdict::kUnresolvable, "nvidia.com/gpu: pod needs 2, node has 1 allocatable"},
  };
  GpuPlacement verdict_only;
  verdict_only.verdict_only = true;
  for (const auto& c : cases) {
    NodeSupply node = gpu_node(c.allocatable, 40 * GiB);
    node.gpu_devices = {"nvidia.com/gpu", c.allocatable, 40 * GiB};
    const Fit full = check_fit(gpu_pod(c.need), node, gpus_used(c.used));
    const Fit quick = check_fit(gpu_pod(c.need), node, gpus_used(c.used), verdict_only);
    EXPECT_EQ(quick.verdict, c.verdict) << c.what;
    EXPECT_EQ(quick.verdict, full.verdict) << c.what;
    EXPECT_EQ(quick.reason, full.reason) << c.what;
    EXPECT_TRUE(quick.allocation.gpus.empty()) << c.what;
    EXPECT_TRUE(quick.allocation.gpu_devices.empty()) << c.what;
    if (c.verdict == Verdict::kFits) {
      EXPECT_FALSE(full.allocation.gpu_devices.empty()) << c.what << ": the full check chooses devices";
    }
  }
}

// check_whole_gpus reads the node's GPU availability for the usage in question, which filter keeps
// per node; over every combination below it gives check_fit's verdict and reason.
TEST(CheckWholeGpus, SameVerdictAndReasonAsCheckFit) {
  std::vector<NodeSupply> nodes;
  for (std::int64_t gpus : {0, 2, 8}) {
    for (bool devices : {false, true}) {
      for (std::optional<std::int64_t> memory :
           {std::optional<std::int64_t>{}, std::optional<std::int64_t>{40 * GiB}}) {
        for (bool problem : {false, true}) {
          NodeSupply n = gpu_node(gpus, memory);
          if (gpus == 0) n.gpus.clear();
          if (devices && gpus > 0) n.gpu_devices = {"nvidia.com/gpu", gpus, memory.value_or(0)};
          if (problem) n.problems["nvidia.com/gpu"] = "allocatable \"lots\"";
          nodes.push_back(n);
          n.gpus["amd.com/gpu"] = 2;
          nodes.push_back(n);
        }
      }
    }
  }
  std::vector<NodeUsage> usages = {{}, gpus_used(1), gpus_used(2), gpus_used(9), gpus_used(2, "amd.com/gpu")};
  NodeUsage on_devices = gpus_used(1);
  on_devices.gpu_devices = {{0, {1, 0, 0}}, {1, {0, 5 * GiB, 1}}};
  usages.push_back(on_devices);
  std::vector<PodDemand> pods;
  for (std::int64_t need : {1, 2, 7}) {
    for (std::optional<std::int64_t> floor : {std::optional<std::int64_t>{}, std::optional<std::int64_t>{32 * GiB},
                                              std::optional<std::int64_t>{80 * GiB}}) {
      PodDemand pod = gpu_pod(need, floor);
      pods.push_back(pod);
      pod.gpus["amd.com/gpu"] = 1;
      pods.push_back(pod);
    }
  }
  GpuPlacement verdict_only;
  verdict_only.verdict_only = true;
  std::size_t compared = 0;
  std::set<Verdict> seen;
  for (const auto& pod : pods) {
    ASSERT_TRUE(asks_whole_gpus_only(pod));
    for (const auto& node : nodes) {
      for (const auto& usage : usages) {
        const Fit want = check_fit(pod, node, usage, verdict_only);
        const Fit got = check_whole_gpus(pod, model::gpu_availability(node, usage));
        ASSERT_EQ(got.verdict, want.verdict) << compared;
        ASSERT_EQ(got.reason, want.reason) << format_reason(want.reason);
        seen.insert(got.verdict);
        ++compared;
      }
    }
  }
  EXPECT_EQ(seen.size(), 3u) << "the table reaches every verdict";
  PodDemand shares = gpu_pod(1);
  shares.gpus.clear();
  shares.gpu_share_bytes = GiB;
  EXPECT_FALSE(asks_whole_gpus_only(shares));
  PodDemand with_volume = gpu_pod(1);
  with_volume.volumes.push_back({});
  EXPECT_FALSE(asks_whole_gpus_only(with_volume));
  EXPECT_FALSE(asks_whole_gpus_only(PodDemand{}));
}

TEST(CheckFit, EveryGpuResourceAtOnce) {
  PodDemand pod = gpu_pod(1);
  pod.gpus["amd.com/gpu"] = 2;
  NodeSupply node = gpu_node(4);
  node.gpus["amd.com/gpu"] = 2;
  EXPECT_EQ(check_fit(pod, node, {}).verdict, Verdict::kFits);
  Fit f = check_fit(pod, node, gpus_used(1, "amd.com/gpu"));
  EXPECT_EQ(f.verdict, Verdict::kInsufficient);
  EXPECT_EQ(f.reason, (FitReason{FitReason::Kind::kGpusNotFree, "amd.com/gpu", 2, 1, 2, {}})) << "a value, not text";
  EXPECT_EQ(format_reason(f.reason), "amd.com/gpu: pod needs 2, node has 1 free of 2");
  node.gpus.erase("amd.com/gpu");
  f = check_fit(pod, node, gpus_used(4));
  EXPECT_EQ(f.verdict, Verdict::kUnresolvable) << "unresolvable wins over insufficient";
  EXPECT_EQ(format_reason(f.reason), "amd.com/gpu: pod needs 2, node has none");
}

TEST(CheckFit, GpuMemoryFloor) {
  struct Case {
    const char* what;
    std::optional<std::int64_t> node_memory;
    std::int64_t floor;
    Verdict verdict;
    const char* reason;
  };
  const Case cases[] = {
      {"H100 reports 81559 MiB: an 80Gi floor excludes it", 81559 * MiB, 80 * GiB, Verdict::kUnresolvable,
       "nvidia.com/gpu: pod needs 80 GiB per GPU, node's GPUs have 79.65 GiB"},
      {"a floor in MiB just below the card fits", 81559 * MiB, 81000 * MiB, Verdict::kFits, ""},
      {"exactly equal fits", 40960 * MiB, 40 * GiB, Verdict::kFits, ""},
      {"no label", std::nullopt, 40 * GiB, Verdict::kUnresolvable,
       "nvidia.com/gpu: pod needs 40 GiB per GPU, node reports no GPU memory"},
  };
  for (const auto& c : cases) {
    Fit f = check_fit(gpu_pod(1, c.floor), gpu_node(8, c.node_memory), {});
    EXPECT_EQ(f.verdict, c.verdict) << c.what;
    EXPECT_EQ(format_reason(f.reason), c.reason) << c.what;
  }
}

TEST(CheckFit, UnreadableNodeValuesAreUnresolvable) {
  NodeSupply node = gpu_node(8);
  node.problems["nvidia.com/gpu"] = "allocatable nvidia.com/gpu: invalid quantity \"x\"";
  Fit f = check_fit(gpu_pod(1), node, {});
  EXPECT_EQ(f.verdict, Verdict::kUnresolvable);
  EXPECT_NE(format_reason(f.reason).find("invalid value"), std::string::npos);
}

PodDemand volume_pod(std::vector<std::pair<std::string, std::int64_t>> volumes) {
  PodDemand d;
  d.uid = "p";
  int i = 0;
  for (auto& [pool, bytes] : volumes) {
    d.volumes.push_back({"v" + std::to_string(i++), "local", pool, bytes, false, "", false, "", 0, false, ""});
  }
  return d;
}

NodeSupply pool_node(std::vector<Pool> pools) {
  NodeSupply n;
  n.name = "n";
  n.pools = std::move(pools);
  return n;
}

TEST(CheckFit, VolumesAcrossPools) {
  NodeSupply node = pool_node({Pool{"nvme", 500 * GiB, {}}, Pool{"hdd", 4096 * GiB, {}}});
  NodeUsage used;
  Allocation existing;
  existing.volumes = {{"old", "nvme", "", 400 * GiB, "", ""}};
  used.add(existing);

  Fit fits = check_fit(volume_pod({{"nvme", 50 * GiB}, {"nvme", 50 * GiB}, {"hdd", 1000 * GiB}}), node, used);
  EXPECT_EQ(fits.verdict, Verdict::kFits);
  ASSERT_EQ(fits.allocation.volumes.size(), 3u);

  Fit too_much = check_fit(volume_pod({{"nvme", 60 * GiB}, {"nvme", 50 * GiB}}), node, used);
  EXPECT_EQ(too_much.verdict, Verdict::kUnresolvable) << "storage shortfalls are never fixed by eviction";
  EXPECT_EQ(format_reason(too_much.reason), "pool nvme: pod needs 110 GiB, node has 100 GiB free of 500 GiB");

  Fit missing = check_fit(volume_pod({{"ssd", 1 * GiB}}), node, used);
  EXPECT_EQ(missing.verdict, Verdict::kUnresolvable);
  EXPECT_EQ(format_reason(missing.reason), "pool ssd: pod needs 1 GiB, node has no such pool");

  Fit small = check_fit(volume_pod({{"nvme", 512 * MiB}}), pool_node({Pool{"nvme", 256 * MiB, {}}}), {});
  EXPECT_EQ(format_reason(small.reason), "pool nvme: pod needs 512 MiB, node has 256 MiB free of 256 MiB");
}

TEST(CheckFit, APoolsLargestVolumeLimitsEachVolume) {
  Pool published{"topolvm", 500 * GiB, {}};
  published.max_volume_bytes = 100 * GiB;
  NodeSupply node = pool_node({published});
  Fit fits = check_fit(volume_pod({{"topolvm", 100 * GiB}, {"topolvm", 100 * GiB}}), node, {});
  EXPECT_EQ(fits.verdict, Verdict::kFits) << "two volumes at the limit fit, the pool holds both";
  Fit too_large = check_fit(volume_pod({{"topolvm", 101 * GiB}}), node, {});
  EXPECT_EQ(too_large.verdict, Verdict::kUnresolvable);
  EXPECT_EQ(format_reason(too_large.reason).substr(0, 54), "pool topolvm: volume v0 needs 101 GiB, the node's larg");
}

TEST(CheckFit, DevicesBestFit) {
  Pool pool{"nvme", 0, {{"d0", 1000 * GiB}, {"d1", 300 * GiB}, {"d2", 600 * GiB}}};
  pool.capacity_bytes = 1900 * GiB;
  NodeSupply node = pool_node({pool});
  NodeUsage used;
  Allocation existing;
  existing.volumes = {{"old", "nvme", "d2", 400 * GiB, "", ""}};  // d2 has 200 GiB free
  used.add(existing);

  // Largest first: 500 -> d0 (only fit); 250 -> d1 (300 free, tighter than d0's 500);
  // 150 -> d2 (200 free is now the tightest).
  Fit f = check_fit(volume_pod({{"nvme", 150 * GiB}, {"nvme", 500 * GiB}, {"nvme", 250 * GiB}}), node, used);
  ASSERT_EQ(f.verdict, Verdict::kFits) << format_reason(f.reason);
  std::map<std::string, std::string> device_of;
  for (const auto& v : f.allocation.volumes) device_of[v.volume] = v.device;
  EXPECT_EQ(device_of["v1"], "d0");
  EXPECT_EQ(device_of["v2"], "d1");
  EXPECT_EQ(device_of["v0"], "d2");

  // 1100 GiB fits the pool's total free (1500) but no single device.
  Fit g = check_fit(volume_pod({{"nvme", 1100 * GiB}}), node, used);
  EXPECT_EQ(g.verdict, Verdict::kUnresolvable);
  EXPECT_EQ(format_reason(g.reason),
            "pool nvme: volume v0 needs 1100 GiB on one device, largest free device has 1000 GiB");
}

// csi-baremetal's SSD pool of one node: a 100 GiB drive and a 10 GiB one.
Pool ssd_drives() {
  Pool pool{"csi-baremetal:SSD", 0, {{"ac-big"}, {"ac-small"}}};
  pool.devices[0].capacity_bytes = 100 * GiB;
  pool.devices[1].capacity_bytes = 10 * GiB;
  for (auto& d : pool.devices) d.drive_class = "SSD";
  pool.drives = true;
  return pool;
}

// A claim of that pool's storage class `cls` (a drive class, or a volume group's: SSDLVG).
model::VolumeDemand ssd_claim(std::string volume, const char* cls, std::int64_t bytes) {
  model::VolumeDemand v;
  v.volume = std::move(volume);
  v.pool = "csi-baremetal:SSD";
  v.drive_class = cls;
  v.bytes = bytes;
  return v;
}

// A pool of csi-baremetal drives and volume groups: a drive claim takes a whole drive, a group
// claim whole extents of a group (or of a free drive, which then serves no drive claim), and what
// earlier pods hold carries from one pod to the next.
TEST(CheckFit, CsiBaremetalDrivesAreTakenWholeAndGroupsByExtents) {
  const NodeSupply node = pool_node({ssd_drives()});
  auto pod = [](std::vector<std::pair<const char*, std::int64_t>> asks) {
    PodDemand p = volume_pod({});
    for (const auto& [cls, bytes] : asks)
      p.volumes.push_back(ssd_claim("v" + std::to_string(p.volumes.size() + 1), cls, bytes));
    return p;
  };

  Fit drive = check_fit(pod({{"SSD", 5 * GiB}}), node, {});
  ASSERT_EQ(drive.verdict, Verdict::kFits) << format_reason(drive.reason);
  EXPECT_EQ(drive.allocation.volumes[0].device, "ac-small") << "the smallest drive that holds it";
  EXPECT_EQ(drive.allocation.volumes[0].bytes, 10 * GiB) << "the whole drive is held";

  NodeUsage used;
  used.add(drive.allocation);
  Fit group = check_fit(pod({{"SSDLVG", GiB + 1}}), node, used);
  ASSERT_EQ(group.verdict, Verdict::kFits) << format_reason(group.reason);
  EXPECT_EQ(group.allocation.volumes[0].device, "ac-big");
  EXPECT_EQ(group.allocation.volumes[0].bytes, GiB + 4 * MiB) << "whole 4 MiB extents";

  used.add(group.allocation);
  Fit no_drive = check_fit(pod({{"SSD", GiB}}), node, used);
  EXPECT_EQ(no_drive.verdict, Verdict::kUnresolvable);
  EXPECT_EQ(format_reason(no_drive.reason), "pool csi-baremetal:SSD: no SSD capacity of 1 GiB")
      << "one drive is taken whole, the other carved by a group";
  EXPECT_EQ(check_fit(pod({{"SSDLVG", 90 * GiB}}), node, used).verdict, Verdict::kFits) << "the group's room is left";
  EXPECT_EQ(check_fit(pod({{"SSDLVG", 99 * GiB}}), node, used).verdict, Verdict::kUnresolvable);
}

// /filter keeps a fitting node's volume placements from its verdict-only check: the same drives
// and devices the full check chooses, for each pod below.
TEST(CheckFit, VerdictOnlyKeepsTheVolumesPlacementsTheFullCheckMakes) {
  Pool lvm{"nvme", 500 * GiB, {{"vg-a"}, {"vg-b"}}};
  lvm.devices[0].capacity_bytes = 200 * GiB;
  lvm.devices[1].capacity_bytes = 300 * GiB;
  NodeSupply node = pool_node({ssd_drives(), lvm});
  node.gpus["nvidia.com/gpu"] = 2;
  node.gpu_devices = {"nvidia.com/gpu", 2, 40 * GiB};
  PodDemand with_gpu = volume_pod({{"nvme", 250 * GiB}});
  with_gpu.gpus["nvidia.com/gpu"] = 1;
  with_gpu.volumes.push_back(ssd_claim("d-SSD", "SSD", 5 * GiB));
  PodDemand groups = volume_pod({});
  groups.volumes = {ssd_claim("d-SSDLVG", "SSDLVG", GiB + 1), ssd_claim("d-SSD", "SSD", 50 * GiB)};
  PodDemand too_large = volume_pod({{"nvme", 600 * GiB}});
  GpuPlacement verdict_only;
  verdict_only.verdict_only = true;
  for (const PodDemand* pod : {&with_gpu, &groups, &too_large}) {
    const Fit full = check_fit(*pod, node, {});
    const Fit quick = check_fit(*pod, node, {}, verdict_only);
    EXPECT_EQ(quick.verdict, full.verdict) << pod->volumes[0].volume;
    EXPECT_EQ(quick.allocation.volumes, full.allocation.volumes) << pod->volumes[0].volume;
    EXPECT_TRUE(quick.allocation.gpus.empty());
    EXPECT_TRUE(quick.allocation.gpu_devices.empty());
  }
  const Fit quick = check_fit(with_gpu, node, {}, verdict_only);
  ASSERT_EQ(quick.verdict, Verdict::kFits) << format_reason(quick.reason);
  ASSERT_EQ(quick.allocation.volumes.size(), 2u);
  EXPECT_EQ(quick.allocation.volumes[0].device, "ac-small") << "the smallest drive that holds it";
  EXPECT_EQ(quick.allocation.volumes[1].device, "vg-b") << "the only volume group it fits";
  EXPECT_FALSE(check_fit(with_gpu, node, {}).allocation.gpu_devices.empty()) << "the full check chooses devices";
  EXPECT_EQ(check_fit(too_large, node, {}, verdict_only).verdict, Verdict::kUnresolvable);
}

// csi-baremetal's default class (storageType ANY): its claims' pool "csi-baremetal:ANY" stands for
// the node's HDD, SSD and NVME pools, planned together with the pod's claims of those pools: a
// whole HDD drive first, then SSD, then NVME; never a volume group; no drive twice, across pods.
TEST(CheckFit, AnAnyClaimTakesAWholeDriveHddThenSsdThenNvme) {
  auto drive_pool = [](const char* name, std::vector<std::tuple<const char*, const char*, std::int64_t>> acs) {
    Pool pool{name, 0, {}};
    pool.drives = true;
    for (const auto& [ac, cls, bytes] : acs) {
      model::Device d{ac, bytes};
      d.drive_class = cls;
      pool.devices.push_back(d);
    }
    return pool;
  };
  const NodeSupply node =
      pool_node({drive_pool("csi-baremetal:HDD", {{"hdd-1", "HDD", 100 * GiB}, {"hdd-lvg", "HDDLVG", 500 * GiB}}),
                 drive_pool("csi-baremetal:SSD", {{"ssd-1", "SSD", 50 * GiB}}),
                 drive_pool("csi-baremetal:NVME", {{"nvme-1", "NVME", 200 * GiB}})});
  auto pod = [](std::vector<std::tuple<const char*, const char*, std::int64_t>> asks) {
    PodDemand p = volume_pod({});
    for (const auto& [pool, cls, bytes] : asks) {
      model::VolumeDemand v;
      v.volume = "v" + std::to_string(p.volumes.size() + 1);
      v.pool = pool;
      v.drive_class = cls;
      v.bytes = bytes;
      p.volumes.push_back(v);
    }
    return p;
  };
  NodeUsage used;
  const char* want[] = {"csi-baremetal:HDD/hdd-1", "csi-baremetal:SSD/ssd-1", "csi-baremetal:NVME/nvme-1"};
  for (const char* placed : want) {
    Fit f = check_fit(pod({{"csi-baremetal:ANY", "ANY", 40 * GiB}}), node, used);
    ASSERT_EQ(f.verdict, Verdict::kFits) << placed << ": " << format_reason(f.reason);
    ASSERT_EQ(f.allocation.volumes.size(), 1u);
    const auto& v = f.allocation.volumes[0];
    EXPECT_EQ(v.pool + "/" + v.device, placed);
    EXPECT_NE(v.device, "hdd-lvg") << "never a volume group";
    used.add(f.allocation);
  }
  Fit full = check_fit(pod({{"csi-baremetal:ANY", "ANY", 40 * GiB}}), node, used);
  EXPECT_EQ(full.verdict, Verdict::kUnresolvable);
  EXPECT_EQ(format_reason(full.reason),
            "pool csi-baremetal:ANY: no ANY capacity of 40 GiB (a free HDD, SSD or NVME drive)");

  // One pod: its HDD claim and its ANY claim do not share the one HDD drive.
  Fit both = check_fit(pod({{"csi-baremetal:HDD", "HDD", 10 * GiB}, {"csi-baremetal:ANY", "ANY", 10 * GiB}}), node, {});
  ASSERT_EQ(both.verdict, Verdict::kFits) << format_reason(both.reason);
  std::set<std::string> devices;
  for (const auto& v : both.allocation.volumes) devices.insert(v.device);
  EXPECT_EQ(devices, (std::set<std::string>{"hdd-1", "ssd-1"}));
  // A group claim takes its extents from the HDD group; the ANY claim still gets the HDD drive.
  Fit grouped =
      check_fit(pod({{"csi-baremetal:HDD", "HDDLVG", 10 * GiB}, {"csi-baremetal:ANY", "ANY", 10 * GiB}}), node, {});
  ASSERT_EQ(grouped.verdict, Verdict::kFits) << format_reason(grouped.reason);
  EXPECT_EQ(grouped.allocation.volumes.size(), 2u);

  Fit none = check_fit(pod({{"csi-baremetal:ANY", "ANY", GiB}}), pool_node({Pool{"local", 100 * GiB, {}}}), {});
  EXPECT_EQ(format_reason(none.reason), "pool csi-baremetal:ANY: pod needs 1 GiB, node has no such pool");
}

// A pool of local PersistentVolumes: each claim takes one whole volume, as VolumeBinding matches.
TEST(CheckFit, LocalPersistentVolumesAreTakenWhole) {
  Pool pool{"fast-disks", 300 * GiB, {{"pv-a", 100 * GiB}, {"pv-b", 100 * GiB}, {"pv-c", 100 * GiB}}};
  pool.whole_devices = true;
  for (auto& d : pool.devices) d.access_modes = model::kReadWriteOnce;
  const NodeSupply node = pool_node({pool});
  PodDemand two = volume_pod({{"fast-disks", 40 * GiB}, {"fast-disks", 40 * GiB}});
  for (auto& v : two.volumes) v.access_modes = model::kReadWriteOnce;

  Fit first = check_fit(two, node, {});
  ASSERT_EQ(first.verdict, Verdict::kFits) << format_reason(first.reason);
  ASSERT_EQ(first.allocation.volumes.size(), 2u);
  EXPECT_EQ(first.allocation.volumes[0].device, "pv-a");
  EXPECT_EQ(first.allocation.volumes[1].device, "pv-b") << "two claims never take one volume";
  EXPECT_EQ(first.allocation.volumes[0].bytes, 100 * GiB) << "the whole volume is held";

  NodeUsage used;
  used.add(first.allocation);
  Fit second = check_fit(two, node, used);
  EXPECT_EQ(second.verdict, Verdict::kUnresolvable) << "60 GiB of pv-a's 100 are no room for another claim";
  EXPECT_EQ(format_reason(second.reason),
            "pool fast-disks: volume v1 needs a free local PersistentVolume of 40 GiB with its access modes, node has "
            "1 free of 3");

  PodDemand many = two;
  many.volumes[0].access_modes = model::kReadWriteMany;
  EXPECT_EQ(check_fit(many, node, {}).verdict, Verdict::kUnresolvable) << "no volume offers ReadWriteMany";

  PodDemand bound = volume_pod({{"fast-disks", 10 * GiB}});
  bound.volumes[0].bound_volume = "pv-c";
  Fit own = check_fit(bound, node, used);
  ASSERT_EQ(own.verdict, Verdict::kFits);
  EXPECT_EQ(own.allocation.volumes[0].device, "pv-c") << "a bound claim takes its own volume";
}

TEST(CheckFit, PodsNeedingNothingAlwaysFit) {
  EXPECT_EQ(check_fit(PodDemand{}, NodeSupply{}, {}).verdict, Verdict::kFits);
}

TEST(FormatBytes, BinaryUnits) {
  EXPECT_EQ(format_bytes(0), "0 MiB");
  EXPECT_EQ(format_bytes(512 * MiB), "512 MiB");
  EXPECT_EQ(format_bytes(1536), "0.00 MiB");
  EXPECT_EQ(format_bytes(40 * GiB), "40 GiB");
  EXPECT_EQ(format_bytes(81559 * MiB), "79.65 GiB");
}

}  // namespace
}  // namespace extender::policy

namespace extender::policy {
namespace {

using model::Allocation;
using model::NodeSupply;
using model::NodeUsage;
using model::PodDemand;
using model::Pool;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

Allocation volume_held(const std::string& pool, const std::string& device, std::int64_t bytes,
                       const std::string& freed_with = "") {
  Allocation a;
  a.volumes.push_back({"v", pool, device, bytes, "ns/claim", freed_with});
  return a;
}

PodDemand scratch_pod(std::int64_t bytes, bool ephemeral = true) {
  PodDemand d;
  d.uid = "new";
  d.volumes.push_back({"scratch", "local-storage", "local", bytes, false, "ns/new-scratch", ephemeral, ""});
  return d;
}

TEST(LocalVolumes, ADevicePoolIsCheckedAgainstItsTotalToo) {
  // 1800 GiB of 2048 GiB held; the devices' own ledgers (here: empty) must not hide it.
  NodeSupply node;
  node.name = "n";
  node.pools = {Pool{"local", 2048 * kGiB, {{"d0", 1024 * kGiB}, {"d1", 1024 * kGiB}}}};
  NodeUsage used;
  used.add(volume_held("local", "", 1800 * kGiB));
  Fit f = check_fit(scratch_pod(800 * kGiB, false), node, used);
  EXPECT_EQ(f.verdict, Verdict::kUnresolvable) << format_reason(f.reason);
  EXPECT_EQ(format_reason(f.reason), "pool local: pod needs 800 GiB, node has 248 GiB free of 2048 GiB");
}

TEST(LocalVolumes, ShortagesOtherPodsEphemeralVolumesCauseAreResolvable) {
  struct Case {
    const char* what;
    std::vector<Allocation> held;
    std::int64_t need;
    bool devices;
    Verdict verdict;
  };
  const Case cases[] = {
      {"fits", {volume_held("local", "", 300 * kGiB)}, 600 * kGiB, false, Verdict::kFits},
      {"short only because of another pod's scratch",
       {volume_held("local", "", 900 * kGiB, "victim")},
       600 * kGiB,
       false,
       Verdict::kInsufficient},
      {"short because of a persistent claim",
       {volume_held("local", "", 900 * kGiB)},
       600 * kGiB,
       false,
       Verdict::kUnresolvable},
      {"evicting the scratch would not be enough",
       {volume_held("local", "", 500 * kGiB), volume_held("local", "", 400 * kGiB, "victim")},
       600 * kGiB,
       false,
       Verdict::kUnresolvable},
      {"device pool, the device is full of scratch",
       {volume_held("local", "d0", 900 * kGiB, "victim"), volume_held("local", "d1", 900 * kGiB)},
       600 * kGiB,
       true,
       Verdict::kInsufficient},
      {"device pool, scratch spread so no device frees enough",
       {volume_held("local", "d0", 500 * kGiB), volume_held("local", "d0", 300 * kGiB, "victim"),
        volume_held("local", "d1", 500 * kGiB), volume_held("local", "d1", 300 * kGiB, "victim")},
       600 * kGiB,
       true,
       Verdict::kUnresolvable},
  };
  for (const auto& c : cases) {
    NodeSupply node;
    node.name = "n";
    node.pools = {c.devices ? Pool{"local", 2048 * kGiB, {{"d0", 1024 * kGiB}, {"d1", 1024 * kGiB}}}
                            : Pool{"local", 1024 * kGiB, {}}};
    NodeUsage used;
    for (const auto& a : c.held) used.add(a);
    Fit f = check_fit(scratch_pod(c.need), node, used);
    EXPECT_EQ(f.verdict, c.verdict) << c.what << ": " << format_reason(f.reason);
  }
}

TEST(LocalVolumes, AVolumeWhoseClaimIsHeldOnAnotherNodeCannotRunHere) {
  NodeSupply node;
  node.name = "n1";
  node.pools = {Pool{"local", 1024 * kGiB, {}}};
  PodDemand pod;
  pod.uid = "p";
  pod.volumes.push_back({"data", "local-storage", "local", 100 * kGiB, false, "ns/data", false, "n2"});
  Fit elsewhere = check_fit(pod, node, {});
  EXPECT_EQ(elsewhere.verdict, Verdict::kUnresolvable);
  EXPECT_EQ(format_reason(elsewhere.reason), "volume data: its claim is held on node n2");
  pod.volumes[0].held_on = "n1";
  EXPECT_EQ(check_fit(pod, node, {}).verdict, Verdict::kFits) << "on its own node the volume is placed again";
}

TEST(LocalVolumes, PlacementsNameTheirClaimAndWhatFreesThem) {
  NodeSupply node;
  node.name = "n";
  node.pools = {Pool{"local", 1024 * kGiB, {{"d0", 512 * kGiB}, {"d1", 512 * kGiB}}}};
  Fit f = check_fit(scratch_pod(100 * kGiB), node, {});
  ASSERT_EQ(f.verdict, Verdict::kFits);
  ASSERT_EQ(f.allocation.volumes.size(), 1u);
  EXPECT_EQ(f.allocation.volumes[0].claim, "ns/new-scratch");
  EXPECT_EQ(f.allocation.volumes[0].freed_with, "new") << "a generic ephemeral volume goes with its pod";
  EXPECT_FALSE(f.allocation.volumes[0].device.empty());
  EXPECT_EQ(check_fit(scratch_pod(100 * kGiB, false), node, {}).allocation.volumes[0].freed_with, "");
}

TEST(FitReason, FormattedAsTheSchedulerShowsIt) {
  using K = FitReason::Kind;
  const std::int64_t gib = std::int64_t{1} << 30;
  const struct {
    FitReason reason;
    const char* text;
  } cases[] = {
      {{}, ""},
      {{K::kInvalidValue, "storage", 0, 0, 0, "x"}, "storage: node reports an invalid value (x)"},
      {{K::kGpusNotAllocatable, "g", 2, 0, 0, {}}, "g: pod needs 2, node has none"},
      {{K::kGpusNotAllocatable, "g", 2, 1, 0, {}}, "g: pod needs 2, node has 1 allocatable"},
      {{K::kShareNoGpu, "s", gib, 0, 0, {}}, "s: pod needs 1 GiB of one GPU, node has no GPU"},
      {{K::kShareNoGpuMemory, "s", gib, 0, 0, {}}, "s: pod needs 1 GiB of one GPU, node reports no GPU memory"},
      {{K::kMemoryFloorUnknown, "g", 40 * gib, 0, 0, {}}, "g: pod needs 40 GiB per GPU, node reports no GPU memory"},
      {{K::kMemoryFloorTooSmall, "g", 40 * gib, 16 * gib, 0, {}},
       "g: pod needs 40 GiB per GPU, node's GPUs have 16 GiB"},
      {{K::kNoLocalVolume, "p", 2 * gib, 0, 3, "v"},
       "pool p: volume v needs a free local PersistentVolume of 2 GiB with its access modes, node has 0 free of 3"},
      {{K::kDraTooFewDevices, "g", 0, 0, 0, "g: pod needs 2 c, node has 1 matching devices"},
       "g: pod needs 2 c, node has 1 matching devices"},
  };
  for (const auto& c : cases) EXPECT_EQ(format_reason(c.reason), c.text);
}

}  // namespace
}  // namespace extender::policy
