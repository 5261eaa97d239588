#pragma once
// Router: maps a method and path to an endpoint, or to 404/405. kube-scheduler calls
// <urlPrefix>/<verb> after trimming the prefix's trailing slashes, and a verb may start with a
// slash, so repeated and trailing slashes are folded before matching. Pure; thread-safe.
#include <optional>
#include <string>
#include <string_view>

namespace extender::server {

enum class Endpoint {
  kFilter,
  kPrioritize,
  kFilterUnmanaged,      // filter and prioritize for the pods the managed entry does not see:
  kPrioritizeUnmanaged,  // those that need no GPU (the every-pod entry; engine::PodScope)
  kBind,
  kPreempt,
  kHealthz,
  kReadyz,
  kVersion,
  kMetrics,
  kDebugState,
  kDebugDra,
  kDebugGroups,
  kDebugNode,  // argument: node name
  kDebugPod,   // argument: namespace/name (why the pod waits)
  kUi,         // the status page (status_page.h)
  kAdminPod,   // argument: pod uid
};

struct Route {
  Endpoint endpoint;
  std::string argument;
};

struct RouteResult {
  std::optional<Route> route;
  int status = 200;   // 404 or 405 when there is no route
  std::string allow;  // the Allow header for 405
};

// What a listener serves besides /healthz, /readyz and /version, which every listener serves.
struct RouterOptions {
  std::string path_prefix;   // verbs answer at /<verb> and <path_prefix>/<verb>
  bool verbs = true;         // filter, prioritize, bind, preempt
  bool metrics = true;       // /metrics
  bool admin_routes = true;  // /debug/*, /admin/* (answered to loopback peers only, see Api)
};

RouteResult route(std::string_view method, std::string_view path, const RouterOptions& options);

// True for the endpoints only loopback peers may call.
bool loopback_only(Endpoint endpoint);

// "//a///b/" -> "/a/b"
std::string normalise_path(std::string_view path);

}  // namespace extender::server
