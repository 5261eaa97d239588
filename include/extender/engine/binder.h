#pragma once
// Binder: makes a placement official in the cluster (kubernetes mode: a Binding through the API
// server). Called by the engine with no lock held, after the node's capacity was reserved: first
// the records every replica reads back (devices of volumes on their claims, the GPU of a share on
// the pod), then the Binding, all by one deadline (the bind's start plus kubernetes.bind_timeout,
// below the scheduler's own timeout). Before the Binding the engine waits for its turn under the
// client-side limit of API writes (wait_turn), then checks its leadership a last time, then binds.
// Implementations must be thread-safe and answer by the deadline.
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "extender/common/clock.h"
#include "extender/wire/verb_args.h"

namespace extender::engine {

// The GPU a share pod was given on its node, in the units of the share resource (GiB by default).
struct GpuShareAssignment {
  std::int64_t index = 0;         // the device
  std::int64_t pod_units = 0;     // what the pod asks of it
  std::int64_t device_units = 0;  // the device's memory
  bool operator==(const GpuShareAssignment&) const = default;
};

using Deadline = TimePoint;

class Binder {
 public:
  virtual ~Binder() = default;
  // Waits until the Binding may be sent under the client-side limit of API writes; "" when it
  // may (bind's first attempt then goes out at once), otherwise why not, answered without waiting
  // when the turn would come after `deadline`. No limit: "" at once.
  virtual std::string wait_turn(Deadline deadline) {
    (void)deadline;
    return {};
  }
  // "" when the pod is bound to args.node (also when it already was), otherwise why not.
  virtual std::string bind(const wire::BindingArgs& args, Deadline deadline) = 0;
  // Records on each claim (namespace/name -> device) the device of its pool that holds its volume,
  // where every replica reads it back; "" when done, otherwise why not.
  virtual std::string record_devices(const std::vector<std::pair<std::string, std::string>>& claim_devices,
                                     Deadline deadline) = 0;
  // Records on the pod (args names it and its uid) the GPU its share was given, where the node's
  // device plugin and every replica read it; "" when done, otherwise why not.
  virtual std::string record_gpu_share(const wire::BindingArgs& args, const GpuShareAssignment& share,
                                       Deadline deadline) = 0;
};

}  // namespace extender::engine
