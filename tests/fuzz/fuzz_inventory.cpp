// The inventory YAML, with the default GPU rules: as standalone mode reads it, and as the simulator
// reads it (with DRA nodes).
#include <cstdint>
#include <string>

#include "extender/config/config.h"
#include "extender/sources/inventory.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const extender::config::Config defaults;
  static const auto rules = defaults.supply_rules();
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto nodes = extender::sources::parse_inventory(text, "fuzz.yaml", rules.gpus);
  (void)nodes.ok();
  auto simulated = extender::sources::parse_inventory_with_dra(text, "fuzz.yaml", rules.gpus);
  (void)simulated.ok();
  return 0;
}
