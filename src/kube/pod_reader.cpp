#include "extender/kube/pod_reader.h"

#include <nlohmann/json.hpp>

#include <cstdio>

#include "extender/wire/json_text.h"
#include "extender/wire/k8s_objects.h"

namespace extender::kube {

std::string path_segment(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '/' || c == '?' || c == '#' || c == '%' || static_cast<unsigned char>(c) <= 0x20) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

Result<std::optional<model::Pod>> read_pod(ApiClient& client, const std::string& ns, const std::string& name,
                                           std::chrono::milliseconds timeout) {
  auto reply = client.get("/api/v1/namespaces/" + path_segment(ns) + "/pods/" + path_segment(name), timeout);
  if (!reply) return reply.error();
  if (reply->status == 404) return std::optional<model::Pod>{};
  if (reply->status != 200) return Error{"HTTP " + std::to_string(reply->status) + ": " + status_message(*reply)};
  if (!wire::nesting_within(reply->body, 128)) return Error{"the pod's body nests too deep"};
  auto doc = nlohmann::json::parse(reply->body, nullptr, false);
  if (doc.is_discarded()) return Error{"the pod's body is not JSON"};
  auto pod = wire::decode_pod(doc);
  if (!pod) return pod.error();
  return std::optional<model::Pod>{std::move(*pod)};
}

}  // namespace extender::kube
