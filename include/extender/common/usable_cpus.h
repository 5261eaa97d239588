#pragma once
// The CPUs this process may use: the fewest of the host's (std::thread::hardware_concurrency),
// its CPU affinity (sched_getaffinity: taskset, a CPU manager's static policy), its own cgroup's
// cpuset and its own cgroup's CPU quota rounded up, so that a container limited to 2 CPUs on a
// 64-core host counts 2. The cgroup is the process's (from /proc/self/cgroup), v2 (`cpu.max` of
// it and each parent, `cpuset.cpus.effective`) or v1 (the `cpu` controller's `cpu.cfs_quota_us`
// over `cpu.cfs_period_us`, the `cpuset` controller's `cpuset.effective_cpus` or
// `cpuset.cpus`); a path not visible in this mount namespace falls back to its nearest visible
// parent. At least 1. usable_cpus() reads the system; the rest is pure or reads under a root
// given. Thread-safe.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace extender {

std::size_t usable_cpus();

// Reads a small file under the tree being inspected ("" when missing).
using ReadFile = std::function<std::string(const std::string& path)>;

// What usable_cpus() computes, with the files read through `read` ("/proc/self/cgroup",
// "/sys/fs/cgroup/...") and the host and affinity counts given (0: unknown).
std::size_t usable_cpus_of(const ReadFile& read, std::size_t host_cpus, std::size_t affinity_cpus);

// CPUs (rounded up) from the text of cgroup v2's cpu.max ("150000 100000"); 0 when it sets no
// quota ("max 100000") or cannot be read.
std::size_t cpus_from_cpu_max(std::string_view text);
// The same from cgroup v1's cpu.cfs_quota_us ("-1": none) and cpu.cfs_period_us.
std::size_t cpus_from_cfs(std::string_view quota, std::string_view period);
// The CPUs of a cpuset list ("0-3,8,10-11" is 7); 0 when empty or malformed.
std::size_t cpus_in_list(std::string_view list);

}  // namespace extender
