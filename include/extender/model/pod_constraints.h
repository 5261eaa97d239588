#pragma once
// PodConstraints: where a pod may run, as its spec says: spec.nodeSelector, the required node
// affinity (affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution) and
// spec.tolerations. Decoded by `wire`, judged by policy/node_eligibility.h. Operators and effects
// stay as text: values Kubernetes does not define match nothing there. Plain value types;
// thread-safe to share once built.
#include <optional>
#include <string>
#include <vector>

#include "extender/model/string_map.h"

namespace extender::model {

struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
  bool operator==(const NodeSelectorRequirement&) const = default;
};

// A term holds when all its requirements do; a term with none holds for no node.
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;  // on the node's labels
  std::vector<NodeSelectorRequirement> match_fields;       // on the node's fields (metadata.name)
  bool operator==(const NodeSelectorTerm&) const = default;
};

struct Toleration {
  std::string key;  // empty (with Exists): every key
  std::string op;   // Equal (also when empty) or Exists
  std::string value;
  std::string effect;  // empty: every effect
  bool operator==(const Toleration&) const = default;
};

struct PodConstraints {
  StringMap node_selector;
  // The terms, any one of which the node must meet; nullopt when the pod requires no node
  // affinity. An empty list is met by no node (kube-scheduler reads it so).
  std::optional<std::vector<NodeSelectorTerm>> required_node_affinity;
  std::vector<Toleration> tolerations;
  bool operator==(const PodConstraints&) const = default;
};

}  // namespace extender::model
