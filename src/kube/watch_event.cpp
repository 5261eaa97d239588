#include "extender/kube/watch_event.h"

#include "extender/wire/json_text.h"

namespace extender::kube {

Result<WatchEvent> parse_watch_event(std::string_view line) {
  if (!wire::nesting_within(line, kMaxJsonNesting)) {
    return Error{"an event nested deeper than " + std::to_string(kMaxJsonNesting) + " levels"};
  }
  nlohmann::json event = nlohmann::json::parse(line, nullptr, false);
  if (!event.is_object()) return Error{"a line that is not a JSON event"};
  WatchEvent out;
  if (auto it = event.find("type"); it != event.end() && it->is_string()) out.type = it->get<std::string>();
  if (auto it = event.find("object"); it != event.end()) out.object = std::move(*it);
  return out;
}

nlohmann::json parse_bounded(std::string_view text) {
  if (!wire::nesting_within(text, kMaxJsonNesting)) return nlohmann::json::value_t::discarded;
  return nlohmann::json::parse(text, nullptr, false);
}

}  // namespace extender::kube
