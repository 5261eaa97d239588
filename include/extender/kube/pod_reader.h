#pragma once
// Reads single objects from the API server where the watch has not caught up yet: a pod by
// namespace and name. Path segments are escaped. Thread-safe (ApiClient is).
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "extender/common/result.h"
#include "extender/kube/api_client.h"
#include "extender/model/pod.h"

namespace extender::kube {

// The pod; nullopt when the API server says it does not exist (404); an error when it cannot be
// read (the request failed, another status, a body that cannot be decoded).
Result<std::optional<model::Pod>> read_pod(ApiClient& client, const std::string& ns, const std::string& name,
                                           std::chrono::milliseconds timeout);

// `s` escaped for use as one segment of a URL path.
std::string path_segment(std::string_view s);

}  // namespace extender::kube
