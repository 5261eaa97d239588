// Kubernetes quantities ("100Gi", "1.5", "2e3", "500m") and GPU counts.
#include <cstdint>
#include <string_view>

#include "extender/common/quantity.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto q = extender::Quantity::parse(text);
  (void)q.ok();
  auto n = extender::parse_count(text, "nvidia.com/gpu");
  (void)n.ok();
  return 0;
}
