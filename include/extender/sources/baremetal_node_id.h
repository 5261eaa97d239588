#pragma once
// A node's id for csi-baremetal, resolved as csi-baremetal resolves it: its Drives,
// AvailableCapacities and reservations name a node by this id. Pure; thread-safe.
#include <string>

#include "extender/model/node.h"
#include "extender/sources/kube_cluster_options.h"

namespace extender::sources {

// The annotation csi-baremetal's node controller writes on every node (its chart's default
// feature.usenodeannotation: true; also the CSI topology key on the node): a fresh uuid.
inline constexpr const char* kNodeUuidAnnotation = "nodes.csi-baremetal.dell.com/uuid";

struct BaremetalNodeId {
  std::string id;      // empty: the node has no drives
  std::string source;  // "annotation <key>", "UID", or why it has none
  bool operator==(const BaremetalNodeId&) const = default;
};

// Outside options.node_selector: none. With options.node_id_annotation set (an override), that
// annotation's value, none without it. Else the annotation kNodeUuidAnnotation when the node
// carries it with a value, else the node's UID.
BaremetalNodeId baremetal_node_id(const model::Node& node, const BaremetalOptions& options);

}  // namespace extender::sources
