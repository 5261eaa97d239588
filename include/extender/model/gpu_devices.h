#pragma once
// GPU devices: a node's GPUs as devices of equal memory, indexed 0..count-1, and what is held on
// each (whole, or shares given as memory). The devices come from the gpushare supply
// (`aliyun.com/gpu-count` devices, memory = `aliyun.com/gpu-mem` total / count, in the share unit)
// when the node reports it, else from the first managed whole-GPU resource the node offers (memory
// from its label; 0 when not reported). Value types; thread-safe once built.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace extender::model {

struct GpuShareRule {
  std::string memory_resource = "aliyun.com/gpu-mem";   // a pod's share and a node's total memory
  std::string count_resource = "aliyun.com/gpu-count";  // a node's device count
  std::int64_t unit_bytes = std::int64_t{1} << 30;      // bytes per unit of memory_resource
};

struct GpuDevices {
  std::string resource;  // the resource they were read from; empty: the node has none
  std::int64_t count = 0;
  std::int64_t memory_bytes = 0;  // per device; 0 when unknown (shares cannot be placed)
  bool operator==(const GpuDevices&) const = default;
};

// One device a claim holds: all of it (a whole GPU) or `bytes` of it (a share). A share read from
// a pod that records no device has index kUnrecordedGpu until the state places it.
inline constexpr std::int64_t kUnrecordedGpu = -1;
struct GpuHold {
  std::int64_t index = 0;
  std::int64_t bytes = 0;  // shares only
  bool whole = false;
  bool operator==(const GpuHold&) const = default;
};

// What the claims on a node hold of one device.
struct GpuDeviceUse {
  std::int64_t whole = 0;   // claims holding it whole
  std::int64_t bytes = 0;   // memory held by shares
  std::int64_t shares = 0;  // claims holding a share
  bool operator==(const GpuDeviceUse&) const = default;
};

using GpuDeviceUsage = std::map<std::int64_t, GpuDeviceUse>;  // by device index

// Free memory of each device (0 for a device held whole), given what claims hold and how many
// whole GPUs of `devices.resource` are counted without a recorded device (`unplaced_whole`):
// those take the highest-indexed devices with nothing on them. With unknown memory a free device
// has free memory 1 and a used one 0.
std::vector<std::int64_t> device_free_bytes(const GpuDevices& devices, const GpuDeviceUsage& use,
                                            std::int64_t unplaced_whole);
// The same into `free` (replacing its contents; its capacity is reused).
void device_free_bytes(const GpuDevices& devices, const GpuDeviceUsage& use, std::int64_t unplaced_whole,
                       std::vector<std::int64_t>& free);
// How many devices device_free_bytes() leaves wholly free (at full capacity), without building
// the list: what a filter asks of every node.
std::int64_t whole_free_devices(const GpuDevices& devices, const GpuDeviceUsage& use, std::int64_t unplaced_whole);

}  // namespace extender::model
