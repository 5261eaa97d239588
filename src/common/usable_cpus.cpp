#include "extender/common/usable_cpus.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace extender {
namespace {

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  return text;
}

std::optional<std::int64_t> whole_number(std::string_view text) {
  text = trimmed(text);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::size_t rounded_up(std::int64_t quota, std::int64_t period) {
  if (quota <= 0 || period <= 0) return 0;
  return static_cast<std::size_t>(quota / period + (quota % period != 0));
}

std::string read_small_file(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (in) std::getline(in, text, '\0');
  return text.substr(0, 4096);
}

// The fewer of two counts where 0 means "no limit".
std::size_t fewer(std::size_t a, std::size_t b) {
  if (a == 0) return b;
  if (b == 0) return a;
  return std::min(a, b);
}

// A cgroup's path for a controller from /proc/self/cgroup: "0::/a/b" (v2, controller "") or
// "4:cpu,cpuacct:/a/b" (v1); the controller list as written goes to `mount_name`.
std::optional<std::string> cgroup_path(std::string_view proc_cgroup, std::string_view controller,
                                       std::string* mount_name = nullptr) {
  while (!proc_cgroup.empty()) {
    const std::size_t eol = proc_cgroup.find('\n');
    const std::string_view line = proc_cgroup.substr(0, eol);
    proc_cgroup = eol == std::string_view::npos ? std::string_view() : proc_cgroup.substr(eol + 1);
    const std::size_t a = line.find(':');
    const std::size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    const std::string_view names = line.substr(a + 1, b - a - 1);
    const std::string_view path = line.substr(b + 1);
    bool match = controller.empty() ? (names.empty() && line.substr(0, a) == "0") : false;
    for (std::size_t at = 0; !controller.empty() && at <= names.size();) {
      const std::size_t comma = std::min(names.find(',', at), names.size());
      match = match || names.substr(at, comma - at) == controller;
      at = comma + 1;
    }
    if (!match || path.empty() || path.front() != '/') continue;
    if (mount_name) *mount_name = std::string(names);
    return std::string(path);
  }
  return std::nullopt;
}

// The cgroup's directory and each parent up to the mount, nearest first.
std::vector<std::string> dirs_up(const std::string& mount, std::string path) {
  std::vector<std::string> out;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  for (;;) {
    out.push_back(mount + (path == "/" ? "" : path));
    if (path == "/" || path.empty()) return out;
    const std::size_t slash = path.rfind('/');
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
}

// cgroup v2: the smallest cpu.max along the path, and the leaf's (or nearest readable) cpuset.
std::size_t v2_cpus(const ReadFile& read, const std::string& path) {
  std::size_t cpus = 0;
  bool cpuset_seen = false;
  for (const std::string& dir : dirs_up("/sys/fs/cgroup", path)) {
    cpus = fewer(cpus, cpus_from_cpu_max(read(dir + "/cpu.max")));
    if (cpuset_seen) continue;
    if (const std::size_t set = cpus_in_list(read(dir + "/cpuset.cpus.effective")); set > 0) {
      cpus = fewer(cpus, set);
      cpuset_seen = true;
    }
  }
  return cpus;
}

// cgroup v1: the nearest quota set along the path of the cpu controller, and the cpuset's.
std::size_t v1_cpus(const ReadFile& read, std::string_view proc_cgroup) {
  std::size_t cpus = 0;
  std::string mount_name;
  if (auto path = cgroup_path(proc_cgroup, "cpu", &mount_name)) {
    for (const std::string& mount : {"/sys/fs/cgroup/" + mount_name, std::string("/sys/fs/cgroup/cpu")}) {
      for (const std::string& dir : dirs_up(mount, *path)) {
        cpus = fewer(cpus, cpus_from_cfs(read(dir + "/cpu.cfs_quota_us"), read(dir + "/cpu.cfs_period_us")));
      }
    }
  }
  if (auto path = cgroup_path(proc_cgroup, "cpuset", &mount_name)) {
    for (const std::string& dir : dirs_up("/sys/fs/cgroup/" + mount_name, *path)) {
      std::size_t set = cpus_in_list(read(dir + "/cpuset.effective_cpus"));
      if (set == 0) set = cpus_in_list(read(dir + "/cpuset.cpus"));
      if (set > 0) return fewer(cpus, set);
    }
  }
  return cpus;
}

std::size_t affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  return static_cast<std::size_t>(CPU_COUNT(&set));
}

}  // namespace

std::size_t cpus_from_cpu_max(std::string_view text) {
  text = trimmed(text);
  const std::size_t space = text.find(' ');
  if (space == std::string_view::npos) return 0;
  const auto quota = whole_number(text.substr(0, space));
  const auto period = whole_number(text.substr(space + 1));
  return quota && period ? rounded_up(*quota, *period) : 0;
}

std::size_t cpus_from_cfs(std::string_view quota, std::string_view period) {
  const auto q = whole_number(quota);
  const auto p = whole_number(period);
  return q && p ? rounded_up(*q, *p) : 0;
}

std::size_t cpus_in_list(std::string_view list) {
  list = trimmed(list);
  std::size_t count = 0;
  for (std::size_t at = 0; at < list.size();) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    const std::string_view item = list.substr(at, comma - at);
    const std::size_t dash = item.find('-');
    const auto first = whole_number(item.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : whole_number(item.substr(dash + 1));
    if (!first || !last || *first < 0 || *last < *first) return 0;
    count += static_cast<std::size_t>(*last - *first + 1);
    at = comma + 1;
  }
  return count;
}

std::size_t usable_cpus_of(const ReadFile& read, std::size_t host_cpus, std::size_t affinity) {
  std::size_t cpus = fewer(host_cpus, affinity);
  const std::string proc_cgroup = read("/proc/self/cgroup");
  if (auto v2 = cgroup_path(proc_cgroup, "")) cpus = fewer(cpus, v2_cpus(read, *v2));
  cpus = fewer(cpus, v1_cpus(read, proc_cgroup));
  return std::max<std::size_t>(1, cpus);
}

std::size_t usable_cpus() {
  return usable_cpus_of(read_small_file, std::thread::hardware_concurrency(), affinity_cpus());
}

}  // namespace extender
