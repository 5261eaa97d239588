#pragma once
// Private to config: the check of a log level, shared by the file (logging.level) and the flag
// (--log-level). Pure.
#include <string>

#include "extender/common/result.h"

namespace extender::config {

// Ok for trace, debug, info, warn and error; else an error naming the known levels.
Status check_log_level(const std::string& level);

}  // namespace extender::config
