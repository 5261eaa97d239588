#pragma once
// ApiBinder: binds a pod through the API server: POST .../pods/{name}/binding carrying the pod's
// UID (a recreated pod of the same name is refused with 409), within a deadline below the
// scheduler's timeout. 201 is success; 409 "already assigned to node X" with X the requested node
// is success too (an earlier attempt landed); transport errors, 429 and 5xx are retried while the
// deadline allows. Thread-safe.
#include <chrono>

#include "extender/engine/binder.h"
#include "extender/kube/api_client.h"

namespace extender::kube {

class ApiBinder : public engine::Binder {
 public:
  ApiBinder(ApiClient& client, std::chrono::milliseconds deadline) : client_(client), deadline_(deadline) {}
  std::string bind(const wire::BindingArgs& args) override;

 private:
  ApiClient& client_;
  std::chrono::milliseconds deadline_;
};

// The body of a v1 Binding.
std::string binding_body(const wire::BindingArgs& args);

}  // namespace extender::kube
