#include "extender/kube/gpushare.h"

#include <charconv>

#include "extender/wire/json_text.h"

namespace extender::kube {
namespace {

void append_annotation(std::string& body, const char* key, const std::string& value, bool first = false) {
  if (!first) body += ',';
  wire::append_json_string(body, key);
  body += ':';
  wire::append_json_string(body, value);
}

}  // namespace

std::string gpu_share_patch(const std::string& uid, const engine::GpuShareAssignment& share,
                            std::int64_t assume_time_ns) {
  std::string body = R"({"metadata":{"uid":)";
  wire::append_json_string(body, uid);
  body += R"(,"annotations":{)";
  append_annotation(body, kGpuShareIndex, std::to_string(share.index), true);
  append_annotation(body, kGpuSharePod, std::to_string(share.pod_units));
  append_annotation(body, kGpuShareDevice, std::to_string(share.device_units));
  append_annotation(body, kGpuShareAssigned, "false");
  append_annotation(body, kGpuShareAssumeTime, std::to_string(assume_time_ns));
  body += "}}}";
  return body;
}

std::optional<std::int64_t> recorded_gpu_share_index(const model::Pod& pod) {
  auto it = pod.annotations.find(kGpuShareIndex);
  if (it == pod.annotations.end()) return std::nullopt;
  const std::string& text = it->second;
  std::int64_t index = -1;
  const char* end = text.data() + text.size();
  auto [at, ec] = std::from_chars(text.data(), end, index);
  if (ec != std::errc() || at != end || text.empty() || index < 0) return std::nullopt;
  return index;
}

}  // namespace extender::kube
