#include "extender/server/router.h"

namespace extender::server {
namespace {

struct Fixed {
  std::string_view path;
  std::string_view method;
  Endpoint endpoint;
  bool admin;
  bool prefixable;
};

constexpr Fixed kFixed[] = {
    {"/filter", "POST", Endpoint::kFilter, false, true},
    {"/prioritize", "POST", Endpoint::kPrioritize, false, true},
    {"/bind", "POST", Endpoint::kBind, false, true},
    {"/preempt", "POST", Endpoint::kPreempt, false, true},
    {"/healthz", "GET", Endpoint::kHealthz, false, false},
    {"/readyz", "GET", Endpoint::kReadyz, false, false},
    {"/version", "GET", Endpoint::kVersion, false, false},
    {"/metrics", "GET", Endpoint::kMetrics, false, false},
    {"/debug/state", "GET", Endpoint::kDebugState, true, false},
};

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

RouteResult route(std::string_view method, std::string_view raw_path, const RouterOptions& options) {
  const std::string path = normalise_path(raw_path);
  std::string_view p = path;
  for (const auto& f : kFixed) {
    if (f.admin ? !options.admin_routes : !options.scheduler_routes) continue;
    bool match = p == f.path;
    if (!match && f.prefixable && !options.path_prefix.empty() && p.size() == options.path_prefix.size() + f.path.size() &&
        p.substr(0, options.path_prefix.size()) == options.path_prefix && p.substr(options.path_prefix.size()) == f.path) {
      match = true;
    }
    if (!match) continue;
    if (!method_is(method, f.method)) return wrong_method(f.method);
    return found(f.endpoint);
  }
  if (options.admin_routes) {
    constexpr std::string_view kNode = "/debug/nodes/";
    constexpr std::string_view kPod = "/admin/pods/";
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
