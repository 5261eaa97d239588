// ExtenderArgs (/filter, /prioritize bodies) in both forms. The first byte picks the node field
// filter: keep everything, or only a few labels, resources and annotations.
#include <string_view>

#include <cstdint>
#include <string>

#include "extender/wire/extender_args.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  extender::wire::NodeFieldFilter filter;
  if (data[0] & 1) {
    filter.keep_all = false;
    filter.labels = {"nvidia.com/gpu.memory", "topology.kubernetes.io/zone"};
    filter.resources = {"nvidia.com/gpu", "memory"};
    filter.annotation_prefix = "scheduler-extender.io/";
  }
  extender::wire::PaddedBody body(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  auto args = extender::wire::decode_extender_args(body, filter);
  if (args) {
    std::size_t total = 0;
    for (auto name : args->candidate_names()) total += name.size();
    (void)total;
  }
  return 0;
}
