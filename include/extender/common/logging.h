#pragma once
// Logging setup: spdlog to stderr as plain text (control characters in messages shown as '?') or
// as JSON lines (one object per line with time, level and message, the message escaped), so text
// taken from requests cannot forge a line. Call once at start, before threads begin logging.
#include <string>
#include <string_view>

#include "extender/common/result.h"

namespace extender {

Status setup_logging(const std::string& level, bool json);

// Untrusted text (names, reasons taken from requests) capped in length for a log line; the
// formatters above take care of control characters.
std::string printable(std::string_view text, std::size_t max = 512);

}  // namespace extender
