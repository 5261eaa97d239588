#include "extender/server/router.h"

namespace extender::server {
namespace {

enum class Role { kAll, kVerb, kMetrics, kAdmin };

struct Fixed {
  std::string_view path;
  std::string_view method;
  Endpoint endpoint;
  Role role;
  bool prefixable;
};

constexpr Fixed kFixed[] = {
    {"/filter", "POST", Endpoint::kFilter, Role::kVerb, true},
    {"/prioritize", "POST", Endpoint::kPrioritize, Role::kVerb, true},
    {"/filter-unmanaged", "POST", Endpoint::kFilterUnmanaged, Role::kVerb, true},
    {"/prioritize-unmanaged", "POST", Endpoint::kPrioritizeUnmanaged, Role::kVerb, true},
    {"/bind", "POST", Endpoint::kBind, Role::kVerb, true},
    {"/preempt", "POST", Endpoint::kPreempt, Role::kVerb, true},
    {"/healthz", "GET", Endpoint::kHealthz, Role::kAll, false},
    {"/readyz", "GET", Endpoint::kReadyz, Role::kAll, false},
    {"/version", "GET", Endpoint::kVersion, Role::kAll, false},
    {"/metrics", "GET", Endpoint::kMetrics, Role::kMetrics, false},
    {"/debug/state", "GET", Endpoint::kDebugState, Role::kAdmin, false},
    {"/debug/dra", "GET", Endpoint::kDebugDra, Role::kAdmin, false},
    {"/ui", "GET", Endpoint::kUi, Role::kAdmin, false},
    {"/debug/groups", "GET", Endpoint::kDebugGroups, Role::kAdmin, false},
};

bool serves(Role role, const RouterOptions& o) {
  switch (role) {
    case Role::kVerb: return o.verbs;
    case Role::kMetrics: return o.metrics;
    case Role::kAdmin: return o.admin_routes;
    default: return true;
  }
}

bool method_is(std::string_view method, std::string_view expected) {
  return method == expected || (expected == "GET" && method == "HEAD");
}

RouteResult found(Endpoint e, std::string arg = {}) { return {Route{e, std::move(arg)}, 200, {}}; }
RouteResult wrong_method(std::string_view allow) { return {std::nullopt, 405, std::string(allow)}; }

}  // namespace

std::string normalise_path(std::string_view path) {
  std::string out;
  out.reserve(path.size() + 1);
  for (char c : path) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out.push_back(c);
  }
  if (out.empty() || out[0] != '/') out.insert(out.begin(), '/');
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

bool loopback_only(Endpoint endpoint) {
  return endpoint == Endpoint::kDebugState || endpoint == Endpoint::kDebugDra || endpoint == Endpoint::kDebugGroups ||
         endpoint == Endpoint::kDebugNode || endpoint == Endpoint::kDebugPod || endpoint == Endpoint::kUi ||
         endpoint == Endpoint::kAdminPod;
}

RouteResult route(std::string_view method, std::string_view raw_path, const RouterOptions& options) {
  const std::string path = normalise_path(raw_path);
  std::string_view p = path;
  for (const auto& f : kFixed) {
    if (!serves(f.role, options)) continue;
    bool match = p == f.path;
    if (!match && f.prefixable && !options.path_prefix.empty() &&
        p.size() == options.path_prefix.size() + f.path.size() &&
        p.substr(0, options.path_prefix.size()) == options.path_prefix &&
        p.substr(options.path_prefix.size()) == f.path) {
      match = true;
    }
    if (!match) continue;
    if (!method_is(method, f.method)) return wrong_method(f.method);
    return found(f.endpoint);
  }
  if (options.admin_routes) {
    constexpr std::string_view kNode = "/debug/nodes/";
    constexpr std::string_view kPod = "/admin/pods/";
    constexpr std::string_view kPending = "/debug/pods/";
    if (p.substr(0, kPending.size()) == kPending && p.size() > kPending.size()) {
      if (!method_is(method, "GET")) return wrong_method("GET");
      return found(Endpoint::kDebugPod, std::string(p.substr(kPending.size())));
    }
    if (p.substr(0, kNode.size()) == kNode && p.size() > kNode.size()) {
      if (!method_is(method, "GET")) return wrong_method("GET");
      return found(Endpoint::kDebugNode, std::string(p.substr(kNode.size())));
    }
    if (p.substr(0, kPod.size()) == kPod && p.size() > kPod.size()) {
      if (method != "DELETE") return wrong_method("DELETE");
      return found(Endpoint::kAdminPod, std::string(p.substr(kPod.size())));
    }
  }
  return {std::nullopt, 404, {}};
}

}  // namespace extender::server
