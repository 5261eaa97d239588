#include "extender/kube/pod_reader.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <cstdio>

#include "extender/common/logging.h"
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

std::optional<model::Pod> read_pod(ApiClient& client, const std::string& ns, const std::string& name,
                                   std::chrono::milliseconds timeout) {
  auto reply = client.get("/api/v1/namespaces/" + path_segment(ns) + "/pods/" + path_segment(name), timeout);
  if (!reply) {
    spdlog::warn("reading pod {}/{}: {}", printable(ns, 256), printable(name, 256), reply.message());
    return std::nullopt;
  }
  if (reply->status != 200) {
    if (reply->status != 404) {
      spdlog::warn("reading pod {}/{}: HTTP {}: {}", printable(ns, 256), printable(name, 256), reply->status,
                   status_message(*reply));
    }
    return std::nullopt;
  }
  if (!wire::nesting_within(reply->body, 128)) return std::nullopt;
  auto doc = nlohmann::json::parse(reply->body, nullptr, false);
  if (doc.is_discarded()) return std::nullopt;
  auto pod = wire::decode_pod(doc);
  if (!pod) {
    spdlog::warn("reading pod {}/{}: {}", printable(ns, 256), printable(name, 256), pod.message());
    return std::nullopt;
  }
  return std::move(*pod);
}

}  // namespace extender::kube
