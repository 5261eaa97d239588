#pragma once
// The gpushare protocol: pod annotations through which the extender that binds a GPU share pod
// tells the gpushare device plugin on the node which GPU the pod was given. The plugin, asked by
// kubelet for a share, takes the oldest pending pod on its node that has an assume time, is not
// yet assigned and asks that much memory, gives it the GPU of the index annotation, and marks it
// assigned. Every value is a decimal integer in text: the index from 0, the memory values in the
// units of the share resource (GiB for aliyun.com/gpu-mem), the assume time in Unix nanoseconds.
// Written as one merge patch of the pod before its Binding; read back from bound pods by the watch.
// Pure functions over value types; thread-safe.
#include <cstdint>
#include <optional>
#include <string>

#include "extender/engine/binder.h"
#include "extender/model/pod.h"

namespace extender::kube {

inline constexpr const char* kGpuShareIndex = "ALIYUN_COM_GPU_MEM_IDX";               // the device
inline constexpr const char* kGpuSharePod = "ALIYUN_COM_GPU_MEM_POD";                 // the pod's request
inline constexpr const char* kGpuShareDevice = "ALIYUN_COM_GPU_MEM_DEV";              // the device's memory
inline constexpr const char* kGpuShareAssigned = "ALIYUN_COM_GPU_MEM_ASSIGNED";       // "false"; the plugin sets "true"
inline constexpr const char* kGpuShareAssumeTime = "ALIYUN_COM_GPU_MEM_ASSUME_TIME";  // Unix nanoseconds

// The merge patch recording `share` on the pod of uid `uid` at `assume_time_ns`. It carries the
// uid, which the API server refuses to change, so a pod recreated under the same name is not
// patched.
std::string gpu_share_patch(const std::string& uid, const engine::GpuShareAssignment& share,
                            std::int64_t assume_time_ns);

// The device index recorded on the pod; nullopt when there is none or it is not an integer from 0.
std::optional<std::int64_t> recorded_gpu_share_index(const model::Pod& pod);

}  // namespace extender::kube
