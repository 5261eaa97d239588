#pragma once
// The settings `scheduler-extender simulate` runs with, read from the daemon's own config file, so
// that the simulator judges with the policy the daemon would. Pure function of the file.
#include <string>

#include "extender/common/result.h"
#include "extender/sim/simulator.h"

namespace extender::daemon {

// From a config file ("" for the defaults); fails with the config's own error.
Result<sim::SimulatorConfig> simulator_config(const std::string& file);

}  // namespace extender::daemon
