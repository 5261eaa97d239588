#include "extender/common/usable_cpus.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

namespace extender {
namespace {

std::optional<std::int64_t> whole_number(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::size_t rounded_up(std::int64_t quota, std::int64_t period) {
  if (quota <= 0 || period <= 0) return 0;
  return static_cast<std::size_t>(quota / period + (quota % period != 0));
}

std::string read_small_file(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (in) std::getline(in, text, '\0');
  return text.substr(0, 256);
}

}  // namespace

std::size_t cpus_from_cpu_max(std::string_view text) {
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

std::size_t usable_cpus() {
  std::size_t cpus = std::max(1u, std::thread::hardware_concurrency());
  std::size_t quota = cpus_from_cpu_max(read_small_file("/sys/fs/cgroup/cpu.max"));
  if (quota == 0) {
    quota = cpus_from_cfs(read_small_file("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),
                          read_small_file("/sys/fs/cgroup/cpu/cpu.cfs_period_us"));
  }
  if (quota > 0) cpus = std::min(cpus, quota);
  return cpus;
}

}  // namespace extender
