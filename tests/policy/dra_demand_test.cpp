#include "extender/policy/dra_demand.h"

#include <gtest/gtest.h>

namespace extender::policy {
namespace {

using model::DraAttribute;

const char* kGpuClass = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'";
const char* kMigClass = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'";

model::DraDevice device(std::string name, std::string type, std::string memory) {
  model::DraDevice d;
  d.name = std::move(name);
  d.attributes["gpu.nvidia.com/type"] = {DraAttribute::Kind::kString, 0, false, std::move(type)};
  d.capacity["gpu.nvidia.com/memory"] = *Quantity::parse(memory);
  return d;
}

model::ResourceSlice slice(std::string node, std::vector<model::DraDevice> devices, std::int64_t count = 1) {
  model::ResourceSlice s;
  s.name = node + "-slice";
  s.driver = model::kNvidiaGpuDriver;
  s.node_name = node;
  s.pool = node;
  s.pool_generation = 1;
  s.pool_slice_count = count;
  s.devices = std::move(devices);
  return s;
}

// n1: two 80 GB GPUs and a MIG device; n2: one 40 GB GPU; n3: an incomplete pool.
model::DraInventory inventory() {
  return model::build_dra_inventory(
      {slice("n1",
             {device("gpu-0", "gpu", "80Gi"), device("gpu-1", "gpu", "80Gi"), device("gpu-1-mig", "mig", "20Gi")}),
       slice("n2", {device("gpu-0", "gpu", "40Gi")}), slice("n3", {device("gpu-0", "gpu", "80Gi")}, 2)},
      {});
}

DraClasses classes() {
  return DraClasses(
      {{"gpu.nvidia.com", {kGpuClass}, "nvidia.com/gpu"},
       {"mig.nvidia.com", {kMigClass}, ""},
       {"odd", {"device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA')"}, "example.com/odd"},
       {"amd", {"device.driver == 'gpu.amd.com'"}, "amd.com/gpu"}});
}

model::ResourceClaim claim(std::vector<model::DeviceRequest> requests) {
  model::ResourceClaim c;
  c.namespace_name = "ml";
  c.name = "c";
  c.requests = std::move(requests);
  return c;
}

model::DeviceRequest exactly(std::string cls, std::int64_t count, std::vector<std::string> selectors = {},
                             bool all = false) {
  model::DeviceRequest r;
  r.name = "r";
  r.exactly = model::DeviceRequestSpec{"r", std::move(cls), all, count, false, std::move(selectors)};
  return r;
}

TEST(DraClasses, FindTheClassBackingAnExtendedResource) {
  DraClasses c = classes();
  ASSERT_NE(c.for_extended_resource("nvidia.com/gpu"), nullptr);
  EXPECT_EQ(c.for_extended_resource("nvidia.com/gpu")->name, "gpu.nvidia.com");
  ASSERT_NE(c.for_extended_resource("deviceclass.resource.kubernetes.io/mig.nvidia.com"), nullptr);
  EXPECT_EQ(c.for_extended_resource("deviceclass.resource.kubernetes.io/mig.nvidia.com")->name, "mig.nvidia.com");
  EXPECT_EQ(c.for_extended_resource("deviceclass.resource.kubernetes.io/none"), nullptr);
  EXPECT_EQ(c.for_extended_resource("aliyun.com/gpu-mem"), nullptr);
  EXPECT_FALSE(need_for_extended_resource(c, "aliyun.com/gpu-mem", 1));
  EXPECT_FALSE(need_for_extended_resource(c, "nvidia.com/gpu", 0));
}

struct Case {
  const char* what;
  std::vector<DraNeed> needs;
  bool n1, n2, n3;
  bool unjudged_on_n1;
};

TEST(DraJudge, RefusesANodeOnlyWhenItHasTooFewMatchingDevicesInTotal) {
  const DraClasses c = classes();
  const model::DraInventory inv = inventory();
  auto gpus = [&](std::int64_t n) { return *need_for_extended_resource(c, "nvidia.com/gpu", n); };
  const std::vector<Case> table = {
      {"one GPU", {gpus(1)}, true, true, true, false},
      {"two GPUs", {gpus(2)}, true, false, true, false},
      {"three GPUs", {gpus(3)}, false, false, true, false},
      {"two needs of one class are summed", {gpus(1), gpus(1)}, true, false, true, false},
      {"a MIG device", needs_for_claim(claim({exactly("mig.nvidia.com", 1)})), true, false, true, false},
      {"memory selector",
       needs_for_claim(claim({exactly("gpu.nvidia.com", 1,
                                      {"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('60Gi')) >= 0"})})),
       true, false, true, false},
      {"All mode needs one", needs_for_claim(claim({exactly("gpu.nvidia.com", 1, {}, true)})), true, true, true, false},
      {"unsupported class selector passes",
       {*need_for_extended_resource(c, "example.com/odd", 5)},
       true,
       true,
       true,
       true},
      {"unsupported request selector passes",
       needs_for_claim(
           claim({exactly("gpu.nvidia.com", 9, {"device.attributes['gpu.nvidia.com'].uuid.matches('x')"})})),
       true, true, true, true},
      {"unknown class passes", needs_for_claim(claim({exactly("nope", 9)})), true, true, true, true},
      {"a class of an unwatched driver passes",
       {*need_for_extended_resource(c, "amd.com/gpu", 1)},
       true,
       true,
       true,
       true},
      {"a selector error passes",
       needs_for_claim(claim({exactly("gpu.nvidia.com", 9, {"device.attributes['gpu.nvidia.com'].index == 0"})})), true,
       true, true, true},
  };
  for (const auto& t : table) {
    DraJudge judge(c, inv, t.needs);
    DraVerdict v1 = judge.judge(*inv.node("n1"));
    EXPECT_EQ(v1.fits, t.n1) << t.what << " on n1: " << v1.reason;
    EXPECT_EQ(judge.judge(*inv.node("n2")).fits, t.n2) << t.what << " on n2";
    DraVerdict v3 = judge.judge(*inv.node("n3"));
    EXPECT_EQ(v3.fits, t.n3) << t.what << " on n3 (incomplete pool)";
    EXPECT_EQ(!v1.unjudged.empty(), t.unjudged_on_n1) << t.what;
  }
}

TEST(DraJudge, ReasonNamesTheNeedAndTheCounts) {
  const DraClasses c = classes();
  const model::DraInventory inv = inventory();
  DraJudge judge(c, inv, {*need_for_extended_resource(c, "nvidia.com/gpu", 2)});
  DraVerdict v = judge.judge(*inv.node("n2"));
  EXPECT_FALSE(v.fits);
  EXPECT_EQ(v.reason, "nvidia.com/gpu: pod needs 2 gpu.nvidia.com, node has 1 matching devices");
  EXPECT_FALSE(judge.judge(*inv.node("n3")).unjudged.empty()) << "an incomplete pool is named";
}

TEST(DraJudge, FirstAvailableIsMetByAnyAlternative) {
  const DraClasses c = classes();
  const model::DraInventory inv = inventory();
  model::DeviceRequest r;
  r.name = "any";
  r.first_available = {{"big", "gpu.nvidia.com", false, 2, false, {}},
                       {"small", "mig.nvidia.com", false, 1, false, {}}};
  DraJudge judge(c, inv, needs_for_claim(claim({r})));
  EXPECT_TRUE(judge.judge(*inv.node("n1")).fits);
  DraVerdict v2 = judge.judge(*inv.node("n2"));
  EXPECT_FALSE(v2.fits) << "n2 has one GPU and no MIG device";
  EXPECT_NE(v2.reason.find("ml/c request any"), std::string::npos) << v2.reason;
}

TEST(DraJudge, AnAllocatedClaimAsksNothingMore) {
  model::ResourceClaim allocated = claim({exactly("gpu.nvidia.com", 8)});
  allocated.allocated = true;
  EXPECT_TRUE(needs_for_claim(allocated).empty());
  EXPECT_EQ(needs_for_claim(claim({exactly("gpu.nvidia.com", 8)})).size(), 1u);
}

}  // namespace
}  // namespace extender::policy
