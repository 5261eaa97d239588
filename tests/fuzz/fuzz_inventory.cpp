// The standalone mode's inventory YAML, with the default GPU rules.
#include <cstdint>
#include <string>

#include "extender/config/config.h"
#include "extender/sources/inventory.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const extender::config::Config defaults;
  static const auto rules = defaults.supply_rules();
  auto nodes = extender::sources::parse_inventory(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml",
                                                  rules.gpus);
  (void)nodes.ok();
  return 0;
}
