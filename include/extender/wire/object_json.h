#pragma once
// The JSON of Kubernetes objects as the daemon keeps it: parsed whole but for each object's
// metadata.managedFields (a "managedFields" key directly inside a "metadata" object), the record
// of server-side apply that no part of the daemon reads and often the largest part of a pod or a
// node: leaving it out of the parsed tree spares building and freeing most of it. Pure;
// thread-safe. The caller bounds the text's nesting first (nesting_within in json_text.h).
#include <string_view>

#include <nlohmann/json.hpp>

namespace extender::wire {

// `text` parsed; a discarded value when it is not JSON.
nlohmann::json parse_object_json(std::string_view text);

}  // namespace extender::wire
