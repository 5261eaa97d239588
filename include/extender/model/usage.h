#pragma once
// Allocation: what one pod holds on one node (GPUs, and where each of its volumes was carved).
// NodeUsage: the sum of the allocations on a node. Value types; thread-safe once built.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace extender::model {

struct VolumePlacement {
  std::string volume;
  std::string pool;
  std::string device;  // empty when the pool has no devices
  std::int64_t bytes = 0;
  bool operator==(const VolumePlacement&) const = default;
};

struct Allocation {
  std::map<std::string, std::int64_t, std::less<>> gpus;
  std::vector<VolumePlacement> volumes;
  bool operator==(const Allocation&) const = default;
};

struct NodeUsage {
  std::map<std::string, std::int64_t, std::less<>> gpus;
  std::map<std::string, std::int64_t, std::less<>> pool_bytes;
  std::map<std::string, std::int64_t, std::less<>> device_bytes;  // key: pool + "/" + device
  std::int64_t volumes = 0;

  void add(const Allocation& a) { apply(a, 1); }
  void subtract(const Allocation& a) { apply(a, -1); }
  std::int64_t gpus_used(std::string_view resource) const;
  std::int64_t pool_used(std::string_view pool) const;
  std::int64_t device_used(std::string_view pool, std::string_view device) const;
  bool operator==(const NodeUsage&) const = default;

 private:
  void apply(const Allocation& a, int sign);
};

std::string device_key(std::string_view pool, std::string_view device);

}  // namespace extender::model
