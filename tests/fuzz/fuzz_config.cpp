// The daemon's YAML configuration.
#include <cstdint>
#include <string>

#include "extender/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto cfg = extender::config::parse_config(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
  (void)cfg.ok();
  return 0;
}
