// ExtenderPreemptionArgs (/preempt bodies), both forms.
#include <cstdint>
#include <string_view>

#include "extender/wire/verb_args.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto args = extender::wire::decode_preemption_args(std::string_view(reinterpret_cast<const char*>(data), size));
  (void)args.ok();
  return 0;
}
