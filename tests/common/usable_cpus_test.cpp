#include "extender/common/usable_cpus.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace extender {
namespace {

TEST(UsableCpus, CgroupV2CpuMax) {
  struct Row {
    std::string text;
    std::size_t cpus;
  };
  const std::vector<Row> rows = {
      {"max 100000\n", 0},       {"200000 100000\n", 2}, {"150000 100000", 2}, {"50000 100000\n", 1},
      {"100000 100000\n", 1},    {"", 0},                {"garbage", 0},       {"-1 100000", 0},
      {"200000 0", 0},           {"2e5 100000", 0},      {"200000 100000 7", 0},
  };
  for (const Row& r : rows) EXPECT_EQ(cpus_from_cpu_max(r.text), r.cpus) << r.text;
}

TEST(UsableCpus, CgroupV1Cfs) {
  EXPECT_EQ(cpus_from_cfs("-1\n", "100000\n"), 0u) << "no quota";
  EXPECT_EQ(cpus_from_cfs("400000\n", "100000\n"), 4u);
  EXPECT_EQ(cpus_from_cfs("250000", "100000"), 3u) << "rounded up";
  EXPECT_EQ(cpus_from_cfs("", ""), 0u) << "files missing";
}

TEST(UsableCpus, NeverMoreThanTheHostNorLessThanOne) {
  const std::size_t cpus = usable_cpus();
  EXPECT_GE(cpus, 1u);
  EXPECT_LE(cpus, std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace
}  // namespace extender
