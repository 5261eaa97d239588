#pragma once
// The CPUs this process may use: the host's (std::thread::hardware_concurrency), no more than its
// cgroup's CPU quota rounded up when one is set (cgroup v2 `cpu.max`, else v1 `cpu.cfs_quota_us`
// over `cpu.cfs_period_us`), so that a container limited to 2 CPUs on a 64-core host counts 2.
// At least 1. usable_cpus() reads /sys/fs/cgroup; the parsers are pure. Thread-safe.
#include <cstddef>
#include <string_view>

namespace extender {

std::size_t usable_cpus();

// CPUs (rounded up) from the text of cgroup v2's cpu.max ("150000 100000"); 0 when it sets no
// quota ("max 100000") or cannot be read.
std::size_t cpus_from_cpu_max(std::string_view text);
// The same from cgroup v1's cpu.cfs_quota_us ("-1": none) and cpu.cfs_period_us.
std::size_t cpus_from_cfs(std::string_view quota, std::string_view period);

}  // namespace extender
