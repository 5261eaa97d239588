#pragma once
// ApiBinder: binds a pod through the API server: POST .../pods/{name}/binding carrying the pod's
// UID (a recreated pod of the same name is refused with 409), by the deadline the engine gives
// (below the scheduler's timeout). 201 is success; 409 "already assigned to node X" with X the requested node
// is success too (an earlier attempt landed); transport errors, 429 and 5xx are retried while the
// deadline allows. Before the Binding it records the devices chosen for the pod's volumes on their
// claims (annotation scheduler-extender.io/device) and the GPU of a share on the pod (the gpushare
// annotations, kube/gpushare.h). A 403 on any of them is remembered for /readyz. Every write
// (patch, Binding attempt) waits for its turn under `writes`, the client-side limit of API writes
// (none when null), within the same deadline; the Binding's first attempt goes on the turn the
// engine waited for with wait_turn. Thread-safe.
#include <chrono>
#include <mutex>
#include <string>

#include "extender/common/clock.h"
#include "extender/engine/binder.h"
#include "extender/kube/api_client.h"
#include "extender/kube/token_bucket.h"

namespace extender::kube {

class ApiBinder : public engine::Binder {
 public:
  // `clock`: the deadlines' clock, and the retries' pauses.
  explicit ApiBinder(ApiClient& client, RateLimiter* writes = nullptr, const Clock& clock = steady_clock())
      : client_(client), writes_(writes), clock_(clock) {}
  std::string wait_turn(engine::Deadline deadline) override;
  std::string bind(const wire::BindingArgs& args, engine::Deadline deadline) override;
  // A merge patch of the device annotation on each claim, within the same deadline.
  std::string record_devices(const std::vector<std::pair<std::string, std::string>>& claim_devices,
                             engine::Deadline deadline) override;
  // A merge patch of the gpushare annotations on the pod (assumed now), within the same deadline.
  std::string record_gpu_share(const wire::BindingArgs& args, const engine::GpuShareAssignment& share,
                               engine::Deadline deadline) override;
  // The permission the API server refused to this binder (HTTP 403) within the last 30 s, for
  // /readyz; empty when none (after that the next bind tries again, so a fixed RBAC heals).
  std::string refused_permission() const;

 private:
  ApiClient& client_;
  RateLimiter* writes_;
  const Clock& clock_;
  void refuse(std::string why);
  mutable std::mutex mu_;
  std::string refused_;
  TimePoint refused_at_{};
};

// The body of a v1 Binding.
std::string binding_body(const wire::BindingArgs& args);

}  // namespace extender::kube
