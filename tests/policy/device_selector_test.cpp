#include "extender/policy/device_selector.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace extender::policy {
namespace {

model::DraAttribute str(std::string s) { return {model::DraAttribute::Kind::kString, 0, false, std::move(s)}; }
model::DraAttribute num(std::int64_t i) { return {model::DraAttribute::Kind::kInt, i, false, {}}; }
model::DraAttribute flag(bool b) { return {model::DraAttribute::Kind::kBool, 0, b, {}}; }
model::DraAttribute ver(std::string s) { return {model::DraAttribute::Kind::kVersion, 0, false, std::move(s)}; }

// An H100 as NVIDIA's driver publishes it.
model::DraDevice h100() {
  model::DraDevice d;
  d.name = "gpu-0";
  d.attributes["gpu.nvidia.com/type"] = str("gpu");
  d.attributes["gpu.nvidia.com/index"] = num(0);
  d.attributes["gpu.nvidia.com/productName"] = str("NVIDIA H100 80GB HBM3");
  d.attributes["gpu.nvidia.com/architecture"] = str("Hopper");
  d.attributes["gpu.nvidia.com/driverVersion"] = ver("570.86.15");
  d.attributes["gpu.nvidia.com/migCapable"] = flag(true);
  d.capacity["gpu.nvidia.com/memory"] = *Quantity::parse("81559Mi");
  return d;
}

model::DraDevice mig() {
  model::DraDevice d;
  d.name = "gpu-1-mig-9-4-2";
  d.attributes["gpu.nvidia.com/type"] = str("mig");
  d.attributes["gpu.nvidia.com/profile"] = str("3g.40gb");
  d.capacity["gpu.nvidia.com/memory"] = *Quantity::parse("40Gi");
  return d;
}

struct Case {
  const char* expression;
  MatchKind on_gpu;
  MatchKind on_mig;
};

TEST(DeviceSelector, EvaluatesTheSubset) {
  using M = MatchKind;
  const std::vector<Case> table = {
      // The NVIDIA driver's DeviceClasses.
      {"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'", M::kMatch,
       M::kNoMatch},
      {"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'", M::kNoMatch,
       M::kMatch},
      {"device.driver == \"other.example.com\"", M::kNoMatch, M::kNoMatch},
      // Capacity comparisons.
      {"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0", M::kMatch, M::kMatch},
      {"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('41Gi')) >= 0", M::kMatch, M::kNoMatch},
      {"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) > 0", M::kNoMatch, M::kNoMatch},
      {"device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('40Gi'))", M::kMatch, M::kNoMatch},
      {"device.capacity['gpu.nvidia.com'].memory.isLessThan(quantity('80Gi'))", M::kMatch, M::kMatch},
      // Kubernetes' CEL has no ordering operators on quantities or versions: its methods only.
      {"device.capacity['gpu.nvidia.com'].memory >= quantity('80Gi')", M::kError, M::kError},
      {"device.capacity['gpu.nvidia.com'].memory <= quantity('40Gi')", M::kError, M::kError},
      {"device.capacity['gpu.nvidia.com'].memory == quantity('40Gi')", M::kNoMatch, M::kMatch},
      {"device.capacity['gpu.nvidia.com'].memory != quantity('40960Mi')", M::kMatch, M::kNoMatch},
      // Attribute comparisons on ints, strings, bools, versions.
      {"device.attributes['gpu.nvidia.com'].index < 2", M::kMatch, M::kError},
      {"device.attributes['gpu.nvidia.com'].index >= -1", M::kMatch, M::kError},
      {"device.attributes['gpu.nvidia.com'].index != 0", M::kNoMatch, M::kError},
      {"device.attributes['gpu.nvidia.com'].productName > 'NVIDIA A100'", M::kMatch, M::kError},
      {"device.attributes['gpu.nvidia.com']['productName'] == 'NVIDIA H100 80GB HBM3'", M::kMatch, M::kError},
      {"device.attributes['gpu.nvidia.com'].migCapable == true", M::kMatch, M::kError},
      {"device.attributes['gpu.nvidia.com'].driverVersion.compareTo(semver('550.0.0')) >= 0", M::kMatch, M::kError},
      {"device.attributes['gpu.nvidia.com'].driverVersion.isLessThan(semver('570.86.15'))", M::kNoMatch, M::kError},
      {"device.attributes['gpu.nvidia.com'].productName in ['NVIDIA A100-SXM4-40GB', 'NVIDIA H100 80GB HBM3']",
       M::kMatch, M::kError},
      // Presence tests, and errors absorbed by && and || where the other side decides.
      {"'index' in device.attributes['gpu.nvidia.com'] && device.attributes['gpu.nvidia.com'].index == 0", M::kMatch,
       M::kNoMatch},
      {"'memory' in device.capacity['gpu.nvidia.com']", M::kMatch, M::kMatch},
      {"device.attributes['gpu.nvidia.com'].type == 'mig' && device.attributes['gpu.nvidia.com'].index == 0",
       M::kNoMatch, M::kError},
      {"device.attributes['gpu.nvidia.com'].index == 0 && device.attributes['gpu.nvidia.com'].type == 'gpu'", M::kMatch,
       M::kNoMatch},
      {"device.attributes['gpu.nvidia.com'].index == 0 || device.attributes['gpu.nvidia.com'].type == 'mig'", M::kMatch,
       M::kMatch},
      // Negation, parentheses, precedence (&& binds tighter than ||).
      {"!(device.attributes['gpu.nvidia.com'].type == 'gpu')", M::kNoMatch, M::kMatch},
      {"!(device.attributes['gpu.nvidia.com'].type == 'gpu') || device.driver == 'gpu.nvidia.com'", M::kMatch,
       M::kMatch},
      {"device.driver == 'x' && device.driver == 'y' || device.attributes['gpu.nvidia.com'].type == 'gpu'", M::kMatch,
       M::kNoMatch},
      {"device.driver == 'x' && (device.driver == 'y' || device.attributes['gpu.nvidia.com'].type == 'gpu')",
       M::kNoMatch, M::kNoMatch},
      {"true", M::kMatch, M::kMatch},
      // Runtime errors: type mismatches, a missing key, a non-bool result.
      {"device.attributes['gpu.nvidia.com'].index == '0'", M::kError, M::kError},
      {"device.attributes['gpu.nvidia.com'].type == 1", M::kError, M::kError},
      {"device.attributes['other.example.com'].type == 'gpu'", M::kError, M::kError},
      {"device.capacity['gpu.nvidia.com'].memory.compareTo(semver('1.0.0')) >= 0", M::kError, M::kError},
      {"device.driver", M::kError, M::kError},
      {"!device.driver", M::kError, M::kError},
      // Outside the subset.
      {"device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA')", M::kUnsupported, M::kUnsupported},
      {"has(device.attributes['gpu.nvidia.com'].index)", M::kUnsupported, M::kUnsupported},
      {"device.attributes['gpu.nvidia.com'].index + 1 == 1", M::kUnsupported, M::kUnsupported},
      {"device.attributes['gpu.nvidia.com'].index == 0 ? true : false", M::kUnsupported, M::kUnsupported},
      {"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('forty')) >= 0", M::kUnsupported, M::kUnsupported},
      {"device.attributes['gpu.nvidia.com'].type == 'gpu", M::kUnsupported, M::kUnsupported},
      {"device.attributes['gpu.nvidia.com'].type == 'gpu')", M::kUnsupported, M::kUnsupported},
      {"device.name == 'gpu-0'", M::kUnsupported, M::kUnsupported},
      {"1.5 > 1", M::kUnsupported, M::kUnsupported},
      {"", M::kUnsupported, M::kUnsupported},
      {"a == b == c", M::kUnsupported, M::kUnsupported},
  };
  for (const auto& c : table) {
    DeviceSelector s = DeviceSelector::parse(c.expression);
    EXPECT_EQ(s.evaluate("gpu.nvidia.com", h100()).kind, c.on_gpu) << c.expression << " on the GPU";
    EXPECT_EQ(s.evaluate("gpu.nvidia.com", mig()).kind, c.on_mig) << c.expression << " on the MIG device";
  }
}

TEST(DeviceSelector, UnsupportedNamesTheExpression) {
  DeviceSelector s = DeviceSelector::parse("device.attributes['gpu.nvidia.com'].productName.matches('H100')");
  EXPECT_FALSE(s.supported());
  EXPECT_FALSE(s.unsupported_reason().empty());
  SelectorMatch m = s.evaluate("gpu.nvidia.com", h100());
  EXPECT_EQ(m.kind, MatchKind::kUnsupported);
  EXPECT_NE(m.detail.find("productName.matches('H100')"), std::string::npos) << m.detail;
  EXPECT_TRUE(DeviceSelector::parse("device.driver == 'gpu.nvidia.com'").supported());
}

TEST(DeviceSelector, ErrorsSayWhatFailed) {
  SelectorMatch m =
      DeviceSelector::parse("device.attributes['gpu.nvidia.com'].uuid == 'x'").evaluate("gpu.nvidia.com", h100());
  EXPECT_EQ(m.kind, MatchKind::kError);
  EXPECT_NE(m.detail.find("gpu.nvidia.com/uuid"), std::string::npos) << m.detail;
}

TEST(DeviceSelector, TheDriverIsTheDevicesDriver) {
  DeviceSelector s = DeviceSelector::parse("device.driver == 'gpu.nvidia.com'");
  EXPECT_EQ(s.evaluate("gpu.nvidia.com", h100()).kind, MatchKind::kMatch);
  EXPECT_EQ(s.evaluate("gpu.amd.com", h100()).kind, MatchKind::kNoMatch);
}

TEST(DeviceSelector, HostileExpressionsAreUnsupportedNotACrash) {
  EXPECT_FALSE(DeviceSelector::parse(std::string(100000, '(') + "true" + std::string(100000, ')')).supported());
  EXPECT_FALSE(DeviceSelector::parse(std::string(100000, '!') + "true").supported());
  std::string chain = "true";
  for (int i = 0; i < 2000; ++i) chain += " && true";
  EXPECT_FALSE(DeviceSelector::parse(chain).supported()) << "too many tokens";
  std::string shorter = "true";
  for (int i = 0; i < 300; ++i) shorter += " && true";
  EXPECT_EQ(DeviceSelector::parse(shorter).evaluate("d", h100()).kind, MatchKind::kMatch);
  EXPECT_FALSE(DeviceSelector::parse("99999999999999999999999 > 1").supported());
  EXPECT_FALSE(DeviceSelector::parse("'\\q' == 'x'").supported());
  EXPECT_FALSE(DeviceSelector::parse(std::string("device.driver == '\xff\xfe'") + "\x01").supported());
  EXPECT_EQ(DeviceSelector::parse("-9223372036854775807 - 1 < 0").supported(), false);
}

TEST(DeviceSelector, VersionsCompareAsSemver) {
  model::DraDevice d;
  d.attributes["gpu.nvidia.com/driverVersion"] = ver("550.54.15");
  auto at_least = [&](const char* v) {
    return DeviceSelector::parse(std::string("device.attributes['gpu.nvidia.com'].driverVersion.compareTo(semver('") +
                                 v + "')) >= 0")
        .evaluate("gpu.nvidia.com", d)
        .kind;
  };
  EXPECT_EQ(at_least("550.54.15"), MatchKind::kMatch);
  EXPECT_EQ(at_least("550.9.0"), MatchKind::kMatch) << "numeric, not text, order";
  EXPECT_EQ(at_least("550.54.16"), MatchKind::kNoMatch);
  EXPECT_EQ(at_least("550.54.15-rc.1"), MatchKind::kMatch) << "a pre-release is lower";
  EXPECT_EQ(at_least("550.54"), MatchKind::kUnsupported);
  d.attributes["gpu.nvidia.com/driverVersion"] = ver("not-a-version");
  EXPECT_EQ(at_least("1.0.0"), MatchKind::kError);
}

TEST(DeviceSelector, OrderingOperatorsOnQuantitiesAndVersionsAreNoSuchOverloadAsInKubernetes) {
  model::DraDevice d;
  d.attributes["gpu.nvidia.com/driverVersion"] = ver("550.54.15");
  d.capacity["gpu.nvidia.com/memory"] = *Quantity::parse("40Gi");
  struct Row {
    std::string expression;
    MatchKind kind;
  };
  const std::string mem = "device.capacity['gpu.nvidia.com'].memory";
  const std::string drv = "device.attributes['gpu.nvidia.com'].driverVersion";
  const std::vector<Row> rows = {
      {mem + " < quantity('80Gi')", MatchKind::kError},
      {mem + " <= quantity('80Gi')", MatchKind::kError},
      {mem + " > quantity('1Gi')", MatchKind::kError},
      {mem + " >= quantity('1Gi')", MatchKind::kError},
      {"quantity('1') < quantity('2')", MatchKind::kError},
      {mem + " == quantity('40960Mi')", MatchKind::kMatch},
      {mem + ".isLessThan(quantity('80Gi'))", MatchKind::kMatch},
      {mem + ".compareTo(quantity('40960Mi')) == 0", MatchKind::kMatch},
      {drv + " >= semver('1.0.0')", MatchKind::kError},
      {drv + " < semver('999.0.0')", MatchKind::kError},
      {drv + " == semver('550.54.15')", MatchKind::kMatch},
      {drv + ".isGreaterThan(semver('550.9.0'))", MatchKind::kMatch},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(DeviceSelector::parse(r.expression).evaluate("gpu.nvidia.com", d).kind, r.kind) << r.expression;
  }
}

TEST(DeviceSelector, PreReleasesOrderAsSemver2) {
  auto order = [](const std::string& a, const std::string& b) {
    model::DraDevice d;
    d.attributes["x.example.com/v"] = ver(a);
    const auto is = [&](const char* method) {
      return DeviceSelector::parse("device.attributes['x.example.com'].v." + std::string(method) + "(semver('" + b +
                                   "'))")
          .evaluate("x.example.com", d)
          .kind;
    };
    if (is("isLessThan") == MatchKind::kMatch) return -1;
    if (is("isGreaterThan") == MatchKind::kMatch) return 1;
    if (is("isLessThan") == MatchKind::kNoMatch) return 0;
    return 9;  // not comparable (an invalid version)
  };
  struct Row {
    std::string a, b;
    int order;
  };
  const std::vector<Row> rows = {
      {"1.0.0-rc.9", "1.0.0-rc.10", -1},  // numeric identifiers numerically
      {"1.0.0-alpha", "1.0.0-alpha.1", -1},
      {"1.0.0-alpha.1", "1.0.0-alpha.beta", -1},  // numeric below alphanumeric
      {"1.0.0-alpha.beta", "1.0.0-beta", -1},
      {"1.0.0-beta", "1.0.0-beta.2", -1},
      {"1.0.0-beta.2", "1.0.0-beta.11", -1},
      {"1.0.0-beta.11", "1.0.0-rc.1", -1},
      {"1.0.0-rc.1", "1.0.0", -1},
      {"1.0.0-RC.1", "1.0.0-rc.1", -1},         // ASCII order
      {"1.0.0-rc.1+build.5", "1.0.0-rc.1", 0},  // build metadata does not order
      {"2.0.0-1a", "2.0.0-2", 1},               // "1a" is alphanumeric
      {"1.0.0-rc.01", "1.0.0-rc.1", 9},         // a leading zero is no version
      {"1.0.0-rc..1", "1.0.0-rc.1", 9},
      {"1.0.0+", "1.0.0", 9},
      {"1.0.0-rc_1", "1.0.0", 9},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(order(r.a, r.b), r.order) << r.a << " vs " << r.b;
    if (r.order == -1 || r.order == 1) {
      EXPECT_EQ(order(r.b, r.a), -r.order) << r.b << " vs " << r.a;
    }
  }
}

}  // namespace
}  // namespace extender::policy
