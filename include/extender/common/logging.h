#pragma once
// Logging setup: spdlog to stderr as plain text or as JSON lines (one object per line with time,
// level and message, the message escaped). Call once at start, before threads begin logging.
#include <string>
#include <string_view>

#include "extender/common/result.h"

namespace extender {

Status setup_logging(const std::string& level, bool json);

// Control characters replaced, length capped: for putting untrusted text (names, reasons taken
// from requests) into a log line.
std::string printable(std::string_view text, std::size_t max = 512);

}  // namespace extender
