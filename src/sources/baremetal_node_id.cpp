#include "extender/sources/baremetal_node_id.h"

namespace extender::sources {

BaremetalNodeId baremetal_node_id(const model::Node& node, const BaremetalOptions& options) {
  for (const auto& [key, value] : options.node_selector) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) return {{}, "none: outside storage.baremetal.node_selector"};
  }
  const bool overridden = !options.node_id_annotation.empty();
  const std::string key = overridden ? options.node_id_annotation : std::string(kNodeUuidAnnotation);
  if (auto it = node.annotations.find(key); it != node.annotations.end() && !it->second.empty()) {
    return {it->second, "annotation " + key};
  }
  if (overridden) return {{}, "none: no annotation " + key + " (storage.baremetal.node_id_annotation)"};
  return {node.uid, "UID"};
}

}  // namespace extender::sources
