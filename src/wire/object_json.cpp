#include "extender/wire/object_json.h"

namespace extender::wire {

nlohmann::json parse_object_json(std::string_view text) {
  using Event = nlohmann::json::parse_event_t;
  int metadata_depth = -1;  // the depth of the keys of the "metadata" object being parsed, if any
  auto keep = [&metadata_depth](int depth, Event event, const nlohmann::json& parsed) {
    if (event != Event::key) return true;
    if (depth < metadata_depth) metadata_depth = -1;
    const auto& key = parsed.get_ref<const std::string&>();
    if (depth == metadata_depth && key == "managedFields") return false;
    if (key == "metadata") metadata_depth = depth + 1;
    return true;
  };
  return nlohmann::json::parse(text, keep, /*allow_exceptions=*/false);
}

}  // namespace extender::wire
