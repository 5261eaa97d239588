#pragma once
// Logging setup: spdlog to stderr as plain text or as JSON lines (one object per line with time,
// level and message), so that text taken from requests can neither forge a line nor break the
// format. Call setup_logging once at start, before threads begin logging; the other functions
// are pure and thread-safe.
#include <string>
#include <string_view>

#include "extender/common/result.h"

namespace extender {

Status setup_logging(const std::string& level, bool json);

// Untrusted text (names, reasons taken from requests) capped at `max` bytes for a log line, cut
// on a UTF-8 character boundary, "..." added when cut; the formatters take care of the rest.
std::string printable(std::string_view text, std::size_t max = 512);

// A message as the text format shows it: C0 controls, DEL, C1 controls (U+0080..U+009F), U+2028,
// U+2029 and each byte that is not part of valid UTF-8 become '?'.
std::string log_text(std::string_view message);

// A message as the JSON format writes it inside its quotes: `"` and `\` escaped, C0 controls, DEL,
// C1 controls, U+2028 and U+2029 as \uXXXX, each byte not part of valid UTF-8 as \ufffd.
std::string log_json_string(std::string_view message);

}  // namespace extender
