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
    bump(pool_bytes, v.pool, static_cast<__int128>(sign) * v.bytes);
    if (!v.device.empty()) bump(device_bytes, device_key(v.pool, v.device), static_cast<__int128>(sign) * v.bytes);
  }
  volumes += sign * static_cast<std::int64_t>(a.volumes.size());
}

std::int64_t NodeUsage::gpus_used(std::string_view resource) const { return lookup(gpus, resource); }
std::int64_t NodeUsage::pool_used(std::string_view pool) const { return lookup(pool_bytes, pool); }
std::int64_t NodeUsage::device_used(std::string_view pool, std::string_view device) const {
  return lookup(device_bytes, device_key(pool, device));
}

}  // namespace extender::model
