#pragma once
// One line of a watch stream ({"type":"ADDED","object":{...}}) decoded into its type and object,
// and the nesting bound every API-server body is held to before a recursive JSON parser (or a
// copy or destruction of what it built) sees it. Pure functions; thread-safe.
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "extender/common/result.h"

namespace extender::kube {

// Deeper than this, an API-server body is refused unparsed. Real objects nest about 20 deep.
inline constexpr std::size_t kMaxJsonNesting = 128;

struct WatchEvent {
  std::string type;       // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR, or one unknown here; may be empty
  nlohmann::json object;  // the event's object (a Status for ERROR); null when absent
};

// Errors: the line nests deeper than kMaxJsonNesting, is not JSON, or is not a JSON object.
Result<WatchEvent> parse_watch_event(std::string_view line);

// `text` parsed as JSON, or a discarded value when it is not JSON or nests deeper than
// kMaxJsonNesting (for bodies whose fields are only looked at, such as a Status).
nlohmann::json parse_bounded(std::string_view text);

}  // namespace extender::kube
