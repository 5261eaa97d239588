#include "extender/policy/drive_plan.h"

#include <gtest/gtest.h>

namespace extender::policy {
namespace {

constexpr std::int64_t MiB = std::int64_t{1} << 20;
constexpr std::int64_t GiB = std::int64_t{1} << 30;

TEST(DrivePlan, ClassesAndExtents) {
  EXPECT_EQ(volume_group_media("SSDLVG"), "SSD");
  EXPECT_EQ(volume_group_media("SYSLVG"), "SYS");
  EXPECT_EQ(volume_group_media("SSD"), std::nullopt);
  EXPECT_EQ(volume_group_media("LVG"), std::nullopt);
  EXPECT_TRUE(drive_class_known("NVME"));
  EXPECT_TRUE(drive_class_known("HDDLVG"));
  EXPECT_FALSE(drive_class_known("ssd"));
  EXPECT_EQ(extent_aligned(1), 4 * MiB);
  EXPECT_EQ(extent_aligned(4 * MiB), 4 * MiB);
  EXPECT_EQ(extent_aligned(4 * MiB + 1), 8 * MiB);
  EXPECT_EQ(extent_aligned(0), 0);
  EXPECT_FALSE(drive_class_known("ANY")) << "no AC has class ANY: it is a request's class";
  EXPECT_EQ(extent_aligned(std::numeric_limits<std::int64_t>::max()), std::numeric_limits<std::int64_t>::max());
}

// A StorageClass's storageType as csi-baremetal's util.ConvertStorageClass reads it.
TEST(DrivePlan, StorageTypesAreReadAsCsiBaremetalReadsThem) {
  const std::pair<const char*, const char*> rows[] = {
      {"HDD", "HDD"}, {"ssd", "SSD"}, {"NVMe", "NVME"}, {"ssdlvg", "SSDLVG"}, {"SysLvg", "SYSLVG"},
      {"ANY", "ANY"}, {"any", "ANY"}, {"", "ANY"},      {"tape", "ANY"},      {"SSD ", "ANY"},
  };
  for (const auto& [parameter, type] : rows) EXPECT_EQ(storage_type_of(parameter), type) << "'" << parameter << "'";
}

TEST(DrivePlan, AnAnyPoolStandsForTheMediaPoolsInCsiBaremetalsOrder) {
  EXPECT_EQ(any_class_pools("csi-baremetal:ANY"),
            (std::vector<std::string>{"csi-baremetal:HDD", "csi-baremetal:SSD", "csi-baremetal:NVME"}));
  EXPECT_EQ(any_class_pools("csi-baremetal:ANY/fast"),
            (std::vector<std::string>{"csi-baremetal:HDD/fast", "csi-baremetal:SSD/fast", "csi-baremetal:NVME/fast"}));
  EXPECT_TRUE(any_class_pools("csi-baremetal:SSD").empty());
  EXPECT_TRUE(any_class_pools("csi-baremetal:ANYTHING").empty());
  EXPECT_TRUE(any_class_pools("ANY").empty());
  EXPECT_TRUE(any_class_pools("local").empty());
}

struct Row {
  const char* what;
  std::vector<DriveOffer> offers;
  std::vector<DriveAsk> asks;
  std::vector<std::optional<std::size_t>> taken;  // empty: does not fit
  const char* reason = "";
};

TEST(DrivePlan, Table) {
  const std::vector<Row> rows = {
      {"a drive request takes the smallest drive of its class that holds it",
       {{"ac-big", "HDD", 8 * GiB}, {"ac-ssd", "SSD", 2 * GiB}, {"ac-small", "HDD", 2 * GiB}, {"ac-tiny", "HDD", GiB}},
       {{"HDD", 2 * GiB}},
       {2}},
      {"no drive serves two requests",
       {{"ac-1", "HDD", 4 * GiB}, {"ac-2", "HDD", 4 * GiB}},
       {{"HDD", GiB}, {"HDD", GiB}},
       {0, 1}},
      {"a third drive request finds no drive",
       {{"ac-1", "HDD", 4 * GiB}, {"ac-2", "HDD", 4 * GiB}},
       {{"HDD", GiB}, {"HDD", GiB}, {"HDD", GiB}},
       {},
       "no HDD capacity of 1 GiB"},
      {"larger requests after smaller: the small one does not take the only large drive",
       {{"ac-large", "NVME", 10 * GiB}, {"ac-small", "NVME", GiB}},
       {{"NVME", 5 * GiB}, {"NVME", GiB}},
       {0, 1}},
      {"a group request takes the fullest group that holds its extents",
       {{"lvg-roomy", "SSDLVG", 100 * GiB}, {"lvg-full", "SSDLVG", 3 * GiB}, {"drive", "SSD", 2 * GiB}},
       {{"SSDLVG", 2 * GiB}},
       {1}},
      {"extents count: 2 GiB + 1 byte does not fit in 2 GiB of a group",
       {{"lvg", "HDDLVG", 2 * GiB}},
       {{"HDDLVG", 2 * GiB + 1}},
       {},
       "no HDDLVG capacity of 2.00 GiB"},
      {"without a group, a group request takes a drive of its media, and the next shares it",
       {{"drive-big", "SSD", 100 * GiB}, {"drive-small", "SSD", 10 * GiB}},
       {{"SSDLVG", 4 * GiB}, {"SSDLVG", 4 * GiB}},
       {1, 1}},
      {"a drive turned into a group serves no drive request",
       {{"drive", "SSD", 10 * GiB}},
       {{"SSDLVG", 4 * GiB}, {"SSD", GiB}},
       {},
       "no SSD capacity of 1 GiB"},
      {"a drive taken whole serves no group request; group requests are planned first",
       {{"drive-1", "SSD", 10 * GiB}, {"drive-2", "SSD", 10 * GiB}},
       {{"SSD", GiB}, {"SSDLVG", 4 * GiB}, {"SSDLVG", 6 * GiB}},
       {1, 0, 0}},
      {"a group's space runs out",
       {{"drive", "HDD", 10 * GiB}},
       {{"HDDLVG", 6 * GiB}, {"HDDLVG", 6 * GiB}},
       {},
       "no HDDLVG capacity of 6 GiB"},
      {"SYSLVG has no drive to grow from",
       {{"sys", "SYSLVG", 5 * GiB}, {"drive", "SSD", 50 * GiB}},
       {{"SYSLVG", 4 * GiB}, {"SYSLVG", 4 * GiB}},
       {},
       "no SYSLVG capacity of 4 GiB"},
      {"a class the plans do not know",
       {{"drive", "SSD", 50 * GiB}},
       {{"ssd", GiB}},
       {},
       "no ssd capacity of 1 GiB (not a class of drives or volume groups)"},
      {"a drive carved before serves group requests of its media, not drive requests",
       {{"carved", "SSD", 6 * GiB, true}, {"free", "SSD", 10 * GiB}},
       {{"SSD", GiB}, {"SSDLVG", 4 * GiB}},
       {1, 0}},
      {"a drive carved before is no HDD group",
       {{"carved", "SSD", 6 * GiB, true}},
       {{"HDDLVG", GiB}},
       {},
       "no HDDLVG capacity of 1 GiB"},
      {"no request: fits", {{"drive", "SSD", GiB}}, {}, {}},
      {"ANY takes an HDD before any SSD or NVME, the smallest HDD that holds it",
       {{"nvme", "NVME", 2 * GiB},
        {"ssd", "SSD", 2 * GiB},
        {"hdd-big", "HDD", 8 * GiB},
        {"hdd", "HDD", 4 * GiB},
        {"hdd-tiny", "HDD", GiB}},
       {{"ANY", 2 * GiB}},
       {3}},
      {"ANY: no HDD holds it, then SSD before NVME, whatever their sizes",
       {{"nvme", "NVME", 2 * GiB}, {"ssd-big", "SSD", 50 * GiB}, {"hdd-tiny", "HDD", GiB}},
       {{"ANY", 2 * GiB}},
       {1}},
      {"ANY: NVME last",
       {{"nvme", "NVME", 2 * GiB}, {"hdd", "HDD", 2 * GiB}},
       {{"ANY", 2 * GiB}, {"ANY", 2 * GiB}},
       {1, 0}},
      {"ANY never takes a volume group, nor a drive carved as one",
       {{"lvg", "HDDLVG", 100 * GiB}, {"carved", "SSD", 50 * GiB, true}, {"sys", "SYSLVG", 100 * GiB}},
       {{"ANY", GiB}},
       {},
       "no ANY capacity of 1 GiB (a free HDD, SSD or NVME drive)"},
      {"ANY and HDD requests share the HDD drives: no drive twice",
       {{"hdd-1", "HDD", 4 * GiB}, {"hdd-2", "HDD", 4 * GiB}},
       {{"ANY", GiB}, {"HDD", 2 * GiB}, {"ANY", 3 * GiB}},
       {},
       "no ANY capacity of 3 GiB (a free HDD, SSD or NVME drive)"},
      {"ANY is planned after the requests of one class, even when smaller: it may take another media",
       {{"hdd", "HDD", 4 * GiB}, {"ssd", "SSD", 4 * GiB}},
       {{"ANY", GiB}, {"HDD", 2 * GiB}},
       {1, 0}},
      {"a group request's drive is not ANY's; group requests first",
       {{"hdd-1", "HDD", 4 * GiB}, {"hdd-2", "HDD", 4 * GiB}},
       {{"ANY", GiB}, {"HDDLVG", GiB}},
       {1, 0}},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    const DrivePlan plan = plan_drives(row.asks, row.offers);
    const bool want_fit = !row.taken.empty() || row.asks.empty();
    EXPECT_EQ(plan.fits, want_fit);
    if (want_fit) {
      EXPECT_EQ(plan.taken, row.taken);
    } else {
      EXPECT_EQ(plan.reason, row.reason);
    }
  }
}

}  // namespace
}  // namespace extender::policy
