#include "extender/daemon/simulator_config.h"

#include "extender/config/config.h"

namespace extender::daemon {

Result<sim::SimulatorConfig> simulator_config(const std::string& file) {
  auto cfg = file.empty() ? config::parse_config("", "<defaults>") : config::load_config_file(file);
  if (!cfg) return cfg.error();
  return sim::SimulatorConfig{cfg->extender_options(), cfg->gpu.resources, cfg->gpu.share};
}

}  // namespace extender::daemon
