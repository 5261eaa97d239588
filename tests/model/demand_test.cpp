#include "extender/model/demand.h"

#include <gtest/gtest.h>

namespace extender::model {
namespace {

constexpr const char* kGpu = "nvidia.com/gpu";

Container app(const char* name, const char* gpus) {
  Container c;
  c.name = name;
  if (gpus) c.requests[kGpu] = gpus;
  return c;
}

Container init(const char* name, const char* gpus, bool sidecar = false) {
  Container c = app(name, gpus);
  c.restart_always = sidecar;
  return c;
}

DemandRules rules() {
  DemandRules r;
  r.gpu_resources = {kGpu, "amd.com/gpu"};
  r.gpu_memory_annotation = "scheduler-extender.io/gpu-memory";
  r.pool_by_class = {{"local-nvme", "nvme"}, {"local-hdd", "hdd"}};
  r.default_class = "local-nvme";
  r.default_pool = "nvme";
  r.default_claim_bytes = std::int64_t{10} << 30;
  return r;
}

struct RequestCase {
  const char* what;
  std::vector<Container> init_containers;
  std::vector<Container> containers;
  const char* overhead;
  std::int64_t expected;
};

TEST(EffectiveRequest, FollowsKep753) {
  const RequestCase cases[] = {
      {"one app container", {}, {app("a", "2")}, nullptr, 2},
      {"app containers add up", {}, {app("a", "2"), app("b", "1")}, nullptr, 3},
      {"no request", {}, {app("a", nullptr)}, nullptr, 0},
      {"a regular init container above the apps sets the peak", {init("i", "4")}, {app("a", "1")}, nullptr, 4},
      {"a regular init container below the apps does not", {init("i", "1")}, {app("a", "3")}, nullptr, 3},
      {"sidecars add to the apps", {init("s", "1", true)}, {app("a", "2")}, nullptr, 3},
      // Regular init container i runs after sidecar s started: peak = s + i = 1 + 4.
      {"an init container after a sidecar runs beside it",
       {init("s", "1", true), init("i", "4")},
       {app("a", "1")},
       nullptr,
       5},
      // i runs before s starts: its peak is 4 alone; apps + sidecar = 2.
      {"an init container before a sidecar runs alone",
       {init("i", "4"), init("s", "1", true)},
       {app("a", "1")},
       nullptr,
       4},
      {"two sidecars accumulate into later init containers",
       {init("s1", "1", true), init("s2", "2", true), init("i", "1")},
       {app("a", "0")},
       nullptr,
       4},
      {"overhead adds on top", {}, {app("a", "2")}, "1", 3},
  };
  for (const auto& c : cases) {
    Pod pod;
    pod.init_containers = c.init_containers;
    pod.containers = c.containers;
    if (c.overhead) pod.overhead[kGpu] = c.overhead;
    auto r = effective_request(pod, kGpu);
    ASSERT_TRUE(r) << c.what << ": " << r.message();
    EXPECT_EQ(*r, c.expected) << c.what;
  }
}

TEST(EffectiveRequest, FallsBackToLimits) {
  Pod pod;
  Container c;
  c.name = "a";
  c.limits[kGpu] = "3";
  pod.containers.push_back(c);
  EXPECT_EQ(*effective_request(pod, kGpu), 3);
  pod.containers[0].requests[kGpu] = "2";  // requests win when both are set
  EXPECT_EQ(*effective_request(pod, kGpu), 2);
}

TEST(EffectiveRequest, GarbageIsAnErrorNamingTheContainer) {
  Pod pod;
  pod.containers.push_back(app("trainer", "two"));
  auto r = effective_request(pod, kGpu);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("container trainer"), std::string::npos) << r.message();
}

TEST(ComputeDemand, CollectsEveryManagedGpuResource) {
  Pod pod;
  pod.uid = "u1";
  Container c = app("a", "2");
  c.requests["amd.com/gpu"] = "1";
  c.requests["cpu"] = "not-a-quantity";  // unmanaged resources are not read
  pod.containers.push_back(c);
  auto d = compute_demand(pod, rules());
  ASSERT_TRUE(d) << d.message();
  EXPECT_EQ(d->gpus.at(kGpu), 2);
  EXPECT_EQ(d->gpus.at("amd.com/gpu"), 1);
  EXPECT_FALSE(d->needs_nothing());
}

TEST(ComputeDemand, EveryPodCarriesItsCpuAndMemoryAndManagedOnesTheirConstraints) {
  Pod pod;
  pod.uid = "u";
  Container main = app("main", nullptr);
  main.requests["cpu"] = "16";
  main.requests["memory"] = "2Gi";
  pod.containers.push_back(main);
  pod.constraints.node_selector = {{"team", "a"}};
  pod.constraints.tolerations = {{"team", "Exists", "", "NoSchedule"}};
  auto nothing = compute_demand(pod, rules());
  ASSERT_TRUE(nothing) << nothing.message();
  EXPECT_EQ(nothing->cpu_milli, 16000) << "a pod that needs nothing managed: read (fragmentation weighs it)";
  EXPECT_EQ(nothing->constraints, PodConstraints{});

  PodVolume scratch;
  scratch.name = "scratch";
  scratch.kind = PodVolume::Kind::kEphemeral;
  scratch.storage_class = "local-hdd";
  scratch.storage_request = "1Gi";
  pod.volumes.push_back(scratch);
  auto volume_only = compute_demand(pod, rules());
  ASSERT_TRUE(volume_only) << volume_only.message();
  EXPECT_FALSE(volume_only->needs_gpu());
  EXPECT_EQ(volume_only->cpu_milli, 16000) << "a volume-only pod: read too, for the bind's check";
  EXPECT_EQ(volume_only->memory_bytes, std::int64_t{2} << 30);
  EXPECT_EQ(volume_only->constraints, pod.constraints);
}

TEST(ComputeDemand, CpuAndMemoryOfEveryPodByTheSameRules) {
  struct Case {
    const char* what;
    const char* gpus;
    const char* cpu;
    const char* memory;
    std::int64_t cpu_milli;
    std::int64_t memory_bytes;
  };
  const std::vector<Case> cases = {
      {"app plus sidecar, thousandths of a core", "1", "1500m", "1Gi", 1500 + 250, (std::int64_t{1} << 30) + (1 << 20)},
      {"a pod without GPUs: read too", nullptr, "2", "1Gi", 2000 + 250, (std::int64_t{1} << 30) + (1 << 20)},
      {"unreadable: counted as none", "1", "lots", "1Gi", 0, (std::int64_t{1} << 30) + (1 << 20)},
  };
  for (const auto& c : cases) {
    Pod pod;
    pod.uid = "u";
    Container main = app("main", c.gpus);
    main.requests["cpu"] = c.cpu;
    main.requests["memory"] = c.memory;
    pod.containers.push_back(main);
    Container side = init("side", nullptr, /*sidecar=*/true);
    side.requests["cpu"] = "250m";
    side.requests["memory"] = "1Mi";
    pod.init_containers.push_back(side);
    auto d = compute_demand(pod, rules());
    ASSERT_TRUE(d) << c.what << ": " << d.message();
    EXPECT_EQ(d->cpu_milli, c.cpu_milli) << c.what;
    EXPECT_EQ(d->memory_bytes, c.memory_bytes) << c.what;
  }
}

TEST(ComputeDemand, MemoryFloorOnlyForGpuPods) {
  Pod pod;
  pod.annotations["scheduler-extender.io/gpu-memory"] = "40Gi";
  pod.containers.push_back(app("a", "1"));
  EXPECT_EQ(compute_demand(pod, rules())->gpu_memory_floor_bytes, std::int64_t{40} << 30);
  pod.containers[0].requests.clear();
  EXPECT_FALSE(compute_demand(pod, rules())->gpu_memory_floor_bytes);
  pod.containers[0].requests[kGpu] = "1";
  pod.annotations["scheduler-extender.io/gpu-memory"] = "lots";
  EXPECT_FALSE(compute_demand(pod, rules()));
}

TEST(ComputeDemand, EphemeralVolumesByClass) {
  Pod pod;
  PodVolume scratch{"scratch", PodVolume::Kind::kEphemeral, "", std::string("local-hdd"), std::string("100Gi")};
  PodVolume defaulted{"cache", PodVolume::Kind::kEphemeral, "", std::nullopt, std::string("5Gi")};
  PodVolume foreign{"net", PodVolume::Kind::kEphemeral, "", std::string("ebs-gp3"), std::string("1Ti")};
  PodVolume other{"config", PodVolume::Kind::kOther, "", std::nullopt, std::nullopt};
  pod.volumes = {scratch, defaulted, foreign, other};
  auto d = compute_demand(pod, rules());
  ASSERT_TRUE(d) << d.message();
  ASSERT_EQ(d->volumes.size(), 2u);
  EXPECT_EQ(d->volumes[0].pool, "hdd");
  EXPECT_EQ(d->volumes[0].bytes, std::int64_t{100} << 30);
  EXPECT_EQ(d->volumes[1].pool, "nvme");
  EXPECT_EQ(d->volumes[1].storage_class, "local-nvme");
  EXPECT_EQ(d->volumes[1].bytes, std::int64_t{5} << 30);
}

TEST(ComputeDemand, ClaimsWithoutALookupCountInTheDefaultPool) {
  Pod pod;
  pod.volumes = {PodVolume{"data", PodVolume::Kind::kClaim, "data-0", std::nullopt, std::nullopt}};
  auto d = compute_demand(pod, rules());
  ASSERT_EQ(d->volumes.size(), 1u);
  EXPECT_TRUE(d->volumes[0].assumed);
  EXPECT_EQ(d->volumes[0].pool, "nvme");
  EXPECT_EQ(d->volumes[0].bytes, std::int64_t{10} << 30);
}

TEST(ComputeDemand, ClaimsResolvedThroughTheLookup) {
  Pod pod;
  pod.namespace_name = "ml";
  pod.volumes = {PodVolume{"a", PodVolume::Kind::kClaim, "pending", std::nullopt, std::nullopt},
                 PodVolume{"b", PodVolume::Kind::kClaim, "bound", std::nullopt, std::nullopt},
                 PodVolume{"c", PodVolume::Kind::kClaim, "network", std::nullopt, std::nullopt}};
  ClaimLookup lookup = [](const std::string& ns, const std::string& name) -> std::optional<ClaimInfo> {
    if (ns != "ml") return std::nullopt;
    if (name == "pending") return ClaimInfo{"local-hdd", 7, false, "", 0, false, "", ""};
    if (name == "bound") return ClaimInfo{"local-hdd", 9, true, "", 0, false, "", ""};
    if (name == "network") return ClaimInfo{"ebs", 11, false, "", 0, false, "", ""};
    return std::nullopt;
  };
  auto d = compute_demand(pod, rules(), lookup);
  ASSERT_TRUE(d) << d.message();
  ASSERT_EQ(d->volumes.size(), 1u);
  EXPECT_EQ(d->volumes[0].volume, "a");
  EXPECT_EQ(d->volumes[0].pool, "hdd");
  EXPECT_EQ(d->volumes[0].bytes, 7);

  pod.volumes.push_back(PodVolume{"d", PodVolume::Kind::kClaim, "missing", std::nullopt, std::nullopt});
  auto missing = compute_demand(pod, rules(), lookup);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("ml/missing"), std::string::npos);
}

TEST(ComputeDemand, CsiBaremetalClaimsCarryTheirClassesStorageType) {
  Pod pod;
  pod.namespace_name = "ml";
  pod.volumes = {PodVolume{"data", PodVolume::Kind::kClaim, "data", std::nullopt, std::nullopt},
                 PodVolume{"scratch", PodVolume::Kind::kEphemeral, "", std::string("bm-ssdlvg"), std::string("1Gi")},
                 PodVolume{"logs", PodVolume::Kind::kClaim, "logs", std::nullopt, std::nullopt}};
  DemandRules r = rules();
  r.pool_by_class.insert({{"bm-hdd", "csi-baremetal:HDD"}, {"bm-ssdlvg", "csi-baremetal:SSD"}});
  r.drive_class_by_class = {{"bm-hdd", "HDD"}, {"bm-ssdlvg", "SSDLVG"}};
  ClaimLookup lookup = [](const std::string&, const std::string& name) -> std::optional<ClaimInfo> {
    if (name == "data") return ClaimInfo{"bm-hdd", 7, false, "", 0, false, "", ""};
    return ClaimInfo{"local-hdd", 9, false, "", 0, false, "", ""};
  };
  auto d = compute_demand(pod, r, lookup);
  ASSERT_TRUE(d) << d.message();
  ASSERT_EQ(d->volumes.size(), 3u);
  EXPECT_EQ(d->volumes[0].pool, "csi-baremetal:HDD");
  EXPECT_EQ(d->volumes[0].drive_class, "HDD");
  EXPECT_EQ(d->volumes[1].pool, "csi-baremetal:SSD");
  EXPECT_EQ(d->volumes[1].drive_class, "SSDLVG");
  EXPECT_EQ(d->volumes[2].pool, "hdd");
  EXPECT_EQ(d->volumes[2].drive_class, "") << "a class of another provisioner has no storage type";
}

}  // namespace
}  // namespace extender::model
