#include "extender/model/usage.h"

#include <algorithm>
#include <cstdint>

namespace extender::model {
namespace {

std::int64_t lookup(const std::map<std::string, std::int64_t, std::less<>>& m, std::string_view key) {
  auto it = m.find(key);
  return it == m.end() ? 0 : it->second;
}

void bump(std::map<std::string, std::int64_t, std::less<>>& m, std::string_view key, __int128 delta) {
  auto it = m.find(key);
  if (it == m.end()) it = m.emplace(std::string(key), 0).first;
  __int128 sum = static_cast<__int128>(it->second) + delta;
  it->second = static_cast<std::int64_t>(std::clamp<__int128>(sum, INT64_MIN, INT64_MAX));
  if (it->second == 0) m.erase(it);
}

}  // namespace

std::string device_key(std::string_view pool, std::string_view device) {
  std::string key(pool);
  key += '/';
  key += device;
  return key;
}

void NodeUsage::apply(const Allocation& a, int sign) {
  for (const auto& [resource, n] : a.gpus) bump(gpus, resource, static_cast<__int128>(sign) * n);
  for (const auto& v : a.volumes) {
    const __int128 delta = static_cast<__int128>(sign) * v.bytes;
    bump(pool_bytes, v.pool, delta);
    if (!v.freed_with.empty()) bump(pool_freeable, v.pool, delta);
    if (!v.device.empty()) {
      bump(device_bytes, device_key(v.pool, v.device), delta);
      if (!v.freed_with.empty()) bump(device_freeable, device_key(v.pool, v.device), delta);
    }
  }
  volumes += sign * static_cast<std::int64_t>(a.volumes.size());
  cpu_milli = static_cast<std::int64_t>(
      std::clamp<__int128>(cpu_milli + static_cast<__int128>(sign) * a.cpu_milli, INT64_MIN, INT64_MAX));
  memory_bytes = static_cast<std::int64_t>(
      std::clamp<__int128>(memory_bytes + static_cast<__int128>(sign) * a.memory_bytes, INT64_MIN, INT64_MAX));
  pods += sign * a.pods;
  for (const auto& h : a.gpu_devices) {
    GpuDeviceUse& u = gpu_devices[h.index];
    if (h.whole) {
      u.whole += sign;
    } else {
      u.bytes += sign * h.bytes;
      u.shares += sign;
    }
    if (u == GpuDeviceUse{}) gpu_devices.erase(h.index);
  }
}

std::int64_t NodeUsage::whole_gpu_holds() const {
  std::int64_t n = 0;
  for (const auto& [index, u] : gpu_devices) n += u.whole;
  return n;
}

std::int64_t NodeUsage::gpus_used(std::string_view resource) const { return lookup(gpus, resource); }
std::int64_t NodeUsage::pool_used(std::string_view pool) const { return lookup(pool_bytes, pool); }
std::int64_t NodeUsage::device_used(std::string_view pool, std::string_view device) const {
  return lookup(device_bytes, device_key(pool, device));
}
PoolDeviceUse::PoolDeviceUse(const NodeUsage& usage, std::string_view pool) {
  const std::string prefix = device_key(pool, "");
  for (auto it = usage.device_bytes.lower_bound(prefix);
       it != usage.device_bytes.end() && std::string_view(it->first).starts_with(prefix); ++it) {
    used_.emplace_back(std::string_view(it->first).substr(prefix.size()), it->second);
  }
}

std::int64_t PoolDeviceUse::used(std::string_view device) const {
  auto it = std::lower_bound(used_.begin(), used_.end(), device,
                             [](const auto& entry, std::string_view name) { return entry.first < name; });
  return it != used_.end() && it->first == device ? it->second : 0;
}

std::int64_t NodeUsage::pool_freeable_bytes(std::string_view pool) const { return lookup(pool_freeable, pool); }
std::int64_t NodeUsage::device_freeable_bytes(std::string_view pool, std::string_view device) const {
  return lookup(device_freeable, device_key(pool, device));
}

std::vector<std::optional<std::size_t>> best_fit_devices(std::vector<std::int64_t>& free,
                                                         const std::vector<std::int64_t>& sizes) {
  std::vector<std::optional<std::size_t>> out;
  out.reserve(sizes.size());
  for (std::int64_t size : sizes) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < free.size(); ++i) {
      if (free[i] >= size && (!best || free[i] < free[*best])) best = i;
    }
    if (best) free[*best] -= size;
    out.push_back(best);
  }
  return out;
}

}  // namespace extender::model
