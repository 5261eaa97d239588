#pragma once
// Binder: makes a placement official in the cluster (kubernetes mode: a Binding through the API
// server). Called by the engine with no lock held, after the node's capacity was reserved.
// Implementations must be thread-safe and answer within their configured deadline.
#include <string>
#include <utility>
#include <vector>

#include "extender/wire/verb_args.h"

namespace extender::engine {

class Binder {
 public:
  virtual ~Binder() = default;
  // "" when the pod is bound to args.node (also when it already was), otherwise why not.
  virtual std::string bind(const wire::BindingArgs& args) = 0;
  // Records on each claim (namespace/name -> device) the device of its pool that holds its volume,
  // where every replica reads it back; "" when done, otherwise why not.
  virtual std::string record_devices(const std::vector<std::pair<std::string, std::string>>& claim_devices) = 0;
};

}  // namespace extender::engine
