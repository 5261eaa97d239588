#include "extender/kube/api_binder.h"

#include <spdlog/spdlog.h>

#include "extender/kube/gpushare.h"
#include "extender/kube/pod_reader.h"
#include "extender/wire/json_text.h"
#include "extender/wire/k8s_objects.h"

namespace extender::kube {
namespace {

// What is left until `deadline`, for one request (at least 1 ms: a request that cannot finish in
// time fails by its own timeout rather than not being sent).
std::chrono::milliseconds time_left(engine::Deadline deadline, TimePoint now) {
  return std::max(std::chrono::milliseconds(1), std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now));
}

// The node named in a conflict such as: pod p is already assigned to node "n".
std::string assigned_node(const std::string& message) {
  constexpr std::string_view kMarker = "already assigned to node \"";
  auto at = message.find(kMarker);
  if (at == std::string::npos) return {};
  auto start = at + kMarker.size();
  auto end = message.find('"', start);
  return end == std::string::npos ? std::string() : message.substr(start, end - start);
}

}  // namespace

std::string binding_body(const wire::BindingArgs& args) {
  std::string body = R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":)";
  wire::append_json_string(body, args.pod_name);
  body += R"(,"namespace":)";
  wire::append_json_string(body, args.pod_namespace);
  body += R"(,"uid":)";
  wire::append_json_string(body, args.pod_uid);
  body += R"(},"target":{"apiVersion":"v1","kind":"Node","name":)";
  wire::append_json_string(body, args.node);
  body += "}}";
  return body;
}

std::string ApiBinder::refused_permission() const {
  std::lock_guard lock(mu_);
  if (clock_.now() - refused_at_ > std::chrono::seconds(30)) return {};
  return refused_;
}

std::string ApiBinder::wait_turn(engine::Deadline deadline) {
  if (!writes_) return {};
  auto turn = writes_->wait(deadline);
  return turn ? std::string() : turn.message();
}

void ApiBinder::refuse(std::string why) {
  spdlog::error("{}; add it to the daemon's ClusterRole", why);
  std::lock_guard lock(mu_);
  refused_ = std::move(why);
  refused_at_ = clock_.now();
}

std::string ApiBinder::record_devices(const std::vector<std::pair<std::string, std::string>>& claim_devices,
                                      engine::Deadline deadline) {
  for (const auto& [claim, device] : claim_devices) {
    const auto slash = claim.find('/');
    const std::string path = "/api/v1/namespaces/" + path_segment(claim.substr(0, slash)) + "/persistentvolumeclaims/" +
                             path_segment(claim.substr(slash + 1));
    std::string body = R"({"metadata":{"annotations":{)";
    wire::append_json_string(body, wire::kDeviceAnnotation);
    body += ":";
    wire::append_json_string(body, device);
    body += "}}}";
    if (std::string late = wait_turn(deadline); !late.empty()) {
      return "recording the device of claim " + claim + ": " + late;
    }
    auto reply = client_.merge_patch(path, body, time_left(deadline, clock_.now()));
    if (!reply) return "recording the device of claim " + claim + ": " + reply.message();
    if (reply->status == 403) refuse("patch persistentvolumeclaims is forbidden (HTTP 403): " + status_message(*reply));
    if (reply->status != 200) {
      return "recording the device of claim " + claim + " (" + std::to_string(reply->status) +
             "): " + status_message(*reply);
    }
  }
  std::lock_guard lock(mu_);
  refused_.clear();
  return {};
}

std::string ApiBinder::record_gpu_share(const wire::BindingArgs& args, const engine::GpuShareAssignment& share,
                                        engine::Deadline deadline) {
  const std::string path =
      "/api/v1/namespaces/" + path_segment(args.pod_namespace) + "/pods/" + path_segment(args.pod_name);
  const auto now = clock_.wall_now().time_since_epoch();
  const std::string body =
      gpu_share_patch(args.pod_uid, share, std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
  const std::string what =
      "recording GPU " + std::to_string(share.index) + " on pod " + args.pod_namespace + "/" + args.pod_name;
  if (std::string late = wait_turn(deadline); !late.empty()) return what + ": " + late;
  auto reply = client_.merge_patch(path, body, time_left(deadline, clock_.now()));
  if (!reply) return what + ": " + reply.message();
  if (reply->status == 403) refuse("patch pods is forbidden (HTTP 403): " + status_message(*reply));
  if (reply->status != 200) return what + " (" + std::to_string(reply->status) + "): " + status_message(*reply);
  return {};
}

std::string ApiBinder::bind(const wire::BindingArgs& args, engine::Deadline deadline) {
  const std::string path =
      "/api/v1/namespaces/" + path_segment(args.pod_namespace) + "/pods/" + path_segment(args.pod_name) + "/binding";
  const std::string body = binding_body(args);
  std::string last_error;
  for (int attempt = 1;; ++attempt) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_.now());
    if (left.count() <= 50) {
      return last_error.empty()
                 ? "no time left to bind within kubernetes.bind_timeout and this replica's leadership term"
                 : last_error;
    }
    auto reply = client_.post(path, body, left);
    bool retry = false;
    if (!reply) {
      last_error = reply.message();
      retry = true;
    } else if (reply->status == 201 || reply->status == 200) {
      std::lock_guard lock(mu_);
      refused_.clear();
      return {};
    } else if (reply->status == 409) {
      const std::string message = status_message(*reply);
      if (assigned_node(message) == args.node) {
        spdlog::info("bind {}/{}: already bound to {} (an earlier attempt landed)", args.pod_namespace, args.pod_name,
                     args.node);
        return {};
      }
      return "API server refused the binding (409): " + message;
    } else {
      last_error = "API server refused the binding (" + std::to_string(reply->status) + "): " + status_message(*reply);
      if (reply->status == 403) refuse("create pods/binding is forbidden (HTTP 403): " + status_message(*reply));
      retry = reply->status == 429 || reply->status >= 500;
    }
    if (!retry) return last_error;
    spdlog::warn("bind {}/{} to {}: attempt {} failed: {}", args.pod_namespace, args.pod_name, args.node, attempt,
                 last_error);
    // Never sleep past the deadline: with no time left for another attempt after the pause, answer now.
    const auto pause = std::chrono::milliseconds(100 * attempt);
    if (deadline - clock_.now() - pause <= std::chrono::milliseconds(50)) return last_error;
    clock_.sleep_for(pause);
    if (std::string late = wait_turn(deadline); !late.empty()) return last_error + "; no retry: " + late;
  }
}

}  // namespace extender::kube
