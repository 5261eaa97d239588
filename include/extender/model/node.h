#pragma once
// Node: the fields of a Kubernetes Node that scheduling decisions read (name, labels, annotations,
// capacity, allocatable, unschedulable, taints). Quantities stay as text; `supply.h` interprets them.
// A value type; thread-safe to share once built.
#include <string>
#include <vector>

#include "extender/model/pod.h"

namespace extender::model {

struct Taint {
  std::string key;
  std::string value;
  std::string effect;
  bool operator==(const Taint&) const = default;
};

struct Node {
  std::string name;
  std::string uid;  // metadata.uid (read from the API server's objects only)
  StringMap labels;
  StringMap annotations;
  StringMap capacity;
  StringMap allocatable;
  bool unschedulable = false;
  std::vector<Taint> taints;
  bool labels_complete = true;  // false when a decoder kept only some of the node's labels
  bool operator==(const Node&) const = default;
};

}  // namespace extender::model
