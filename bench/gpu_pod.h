#pragma once
// The pod the DRA benches filter: ml/bench (uid bench-pod), one container asking `gpus` of
// nvidia.com/gpu, with `nodes` as the NodeNames it is offered.
#include <string>
#include <vector>

#include "extender/wire/extender_args.h"

namespace extender::bench {

inline wire::ExtenderArgs gpu_pod_args(const std::string& gpus, const std::vector<std::string>& nodes) {
  wire::ExtenderArgs args;
  args.pod.uid = "bench-pod";
  args.pod.name = "bench";
  args.pod.namespace_name = "ml";
  model::Container container;
  container.name = "main";
  container.requests["nvidia.com/gpu"] = gpus;
  args.pod.containers.push_back(container);
  args.set_node_names(nodes);
  return args;
}

}  // namespace extender::bench
