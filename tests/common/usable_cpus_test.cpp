#include "extender/common/usable_cpus.h"

#include <gtest/gtest.h>

#include <map>
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
      {"max 100000\n", 0},   {"200000 100000\n", 2}, {"150000 100000", 2},
      {"50000 100000\n", 1}, {"100000 100000\n", 1}, {"", 0},
      {"garbage", 0},        {"-1 100000", 0},       {"200000 0", 0},
      {"2e5 100000", 0},     {"200000 100000 7", 0},
  };
  for (const Row& r : rows) EXPECT_EQ(cpus_from_cpu_max(r.text), r.cpus) << r.text;
}

TEST(UsableCpus, CgroupV1Cfs) {
  EXPECT_EQ(cpus_from_cfs("-1\n", "100000\n"), 0u) << "no quota";
  EXPECT_EQ(cpus_from_cfs("400000\n", "100000\n"), 4u);
  EXPECT_EQ(cpus_from_cfs("250000", "100000"), 3u) << "rounded up";
  EXPECT_EQ(cpus_from_cfs("", ""), 0u) << "files missing";
}

TEST(UsableCpus, CpusetLists) {
  const std::vector<std::pair<std::string, std::size_t>> rows = {
      {"0-3\n", 4}, {"0-3,8,10-11", 7}, {"5", 1}, {"", 0}, {"3-1", 0}, {"a-b", 0}, {"0-3,,4", 0}, {"-1", 0},
  };
  for (const auto& [text, cpus] : rows) EXPECT_EQ(cpus_in_list(text), cpus) << text;
}

TEST(UsableCpus, TheProcessOwnCgroupAffinityAndHostOverFakeFileTrees) {
  using Tree = std::map<std::string, std::string>;
  struct Row {
    const char* name;
    Tree files;
    std::size_t host, affinity, cpus;
  };
  const std::string pod = "/kubepods.slice/kubepods-pod1.slice/cri-abc.scope";
  const std::vector<Row> rows = {
      {"no cgroup files: the host", {}, 64, 0, 64},
      {"affinity (taskset) under the host", {}, 64, 3, 3},
      {"v2: the process's own cgroup, not the root's",
       {{"/proc/self/cgroup", "0::" + pod + "\n"},
        {"/sys/fs/cgroup/cpu.max", "max 100000\n"},
        {"/sys/fs/cgroup" + pod + "/cpu.max", "200000 100000\n"}},
       64,
       64,
       2},
      {"v2: a parent's quota binds a child without one",
       {{"/proc/self/cgroup", "0::" + pod + "\n"},
        {"/sys/fs/cgroup" + pod + "/cpu.max", "max 100000\n"},
        {"/sys/fs/cgroup/kubepods.slice/kubepods-pod1.slice/cpu.max", "350000 100000\n"}},
       64,
       64,
       4},
      {"v2: the cpuset",
       {{"/proc/self/cgroup", "0::/a\n"}, {"/sys/fs/cgroup/a/cpuset.cpus.effective", "2-4\n"}},
       64,
       64,
       3},
      {"v2 in a cgroup namespace (the path is /)",
       {{"/proc/self/cgroup", "0::/\n"}, {"/sys/fs/cgroup/cpu.max", "100000 100000\n"}},
       8,
       8,
       1},
      {"v2: a path not visible here falls back to its parents",
       {{"/proc/self/cgroup", "0::/gone/deeper\n"}, {"/sys/fs/cgroup/cpu.max", "300000 100000\n"}},
       8,
       8,
       3},
      {"v1: the cpu controller of the process's cgroup",
       {{"/proc/self/cgroup", "12:cpuset:/docker/x\n4:cpu,cpuacct:/docker/x\n1:name=systemd:/docker/x\n"},
        {"/sys/fs/cgroup/cpu,cpuacct/docker/x/cpu.cfs_quota_us", "150000\n"},
        {"/sys/fs/cgroup/cpu,cpuacct/docker/x/cpu.cfs_period_us", "100000\n"},
        {"/sys/fs/cgroup/cpuset/docker/x/cpuset.cpus", "0-7\n"}},
       64,
       64,
       2},
      {"v1: the cpuset binds where the quota does not",
       {{"/proc/self/cgroup", "12:cpuset:/x\n4:cpu,cpuacct:/x\n"},
        {"/sys/fs/cgroup/cpu,cpuacct/x/cpu.cfs_quota_us", "-1\n"},
        {"/sys/fs/cgroup/cpu,cpuacct/x/cpu.cfs_period_us", "100000\n"},
        {"/sys/fs/cgroup/cpuset/x/cpuset.effective_cpus", "0,2\n"}},
       64,
       64,
       2},
      {"hybrid: v1's cpu controller with an empty unified hierarchy",
       {{"/proc/self/cgroup", "4:cpu,cpuacct:/y\n0::/y\n"},
        {"/sys/fs/cgroup/cpu,cpuacct/y/cpu.cfs_quota_us", "100000\n"},
        {"/sys/fs/cgroup/cpu,cpuacct/y/cpu.cfs_period_us", "100000\n"}},
       64,
       64,
       1},
      {"affinity below the quota",
       {{"/proc/self/cgroup", "0::/a\n"}, {"/sys/fs/cgroup/a/cpu.max", "800000 100000"}},
       64,
       2,
       2},
      {"garbage files: the host",
       {{"/proc/self/cgroup", "garbage\n::\n"}, {"/sys/fs/cgroup/cpu.max", "x y"}},
       16,
       0,
       16},
      {"nothing known: at least one", {}, 0, 0, 1},
  };
  for (const Row& r : rows) {
    const auto read = [&](const std::string& path) {
      auto it = r.files.find(path);
      return it == r.files.end() ? std::string() : it->second;
    };
    EXPECT_EQ(usable_cpus_of(read, r.host, r.affinity), r.cpus) << r.name;
  }
}

TEST(UsableCpus, NeverMoreThanTheHostNorLessThanOne) {
  const std::size_t cpus = usable_cpus();
  EXPECT_GE(cpus, 1u);
  EXPECT_LE(cpus, std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace
}  // namespace extender
