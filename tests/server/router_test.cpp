#include "extender/server/router.h"

#include <gtest/gtest.h>

namespace extender::server {
namespace {

struct Case {
  const char* method;
  const char* path;
  int status;
  std::optional<Endpoint> endpoint;
  const char* argument;
};

TEST(Router, Table) {
  RouterOptions opts{"/scheduler", true, true, true};
  const Case cases[] = {
      {"POST", "/filter", 200, Endpoint::kFilter, ""},
      {"POST", "/scheduler/filter", 200, Endpoint::kFilter, ""},
      {"POST", "/scheduler//filter", 200, Endpoint::kFilter, ""},  // a verb with a leading slash
      {"POST", "/scheduler/filter/", 200, Endpoint::kFilter, ""},
      {"POST", "/prioritize", 200, Endpoint::kPrioritize, ""},
      {"POST", "/scheduler/prioritize-unmanaged", 200, Endpoint::kPrioritizeUnmanaged, ""},
      {"GET", "/scheduler/prioritize-unmanaged", 405, std::nullopt, ""},
      {"POST", "/scheduler/filter-unmanaged", 200, Endpoint::kFilterUnmanaged, ""},
      {"GET", "/scheduler/filter-unmanaged", 405, std::nullopt, ""},
      {"POST", "/scheduler/bind", 200, Endpoint::kBind, ""},
      {"POST", "/scheduler/preempt", 200, Endpoint::kPreempt, ""},
      {"GET", "/filter", 405, std::nullopt, ""},
      {"PUT", "/scheduler/bind", 405, std::nullopt, ""},
      {"GET", "/healthz", 200, Endpoint::kHealthz, ""},
      {"HEAD", "/healthz", 200, Endpoint::kHealthz, ""},
      {"POST", "/healthz", 405, std::nullopt, ""},
      {"GET", "/readyz", 200, Endpoint::kReadyz, ""},
      {"GET", "/version", 200, Endpoint::kVersion, ""},
      {"GET", "/metrics", 200, Endpoint::kMetrics, ""},
      {"GET", "/scheduler/healthz", 404, std::nullopt, ""},
      {"POST", "/other/filter", 404, std::nullopt, ""},
      {"POST", "/filterx", 404, std::nullopt, ""},
      {"GET", "/", 404, std::nullopt, ""},
      {"GET", "/debug/state", 200, Endpoint::kDebugState, ""},
      {"GET", "/debug/dra", 200, Endpoint::kDebugDra, ""},
      {"GET", "/debug/groups", 200, Endpoint::kDebugGroups, ""},
      {"GET", "/debug/nodes/gpu-a100-1", 200, Endpoint::kDebugNode, "gpu-a100-1"},
      {"GET", "/debug/nodes/", 404, std::nullopt, ""},
      {"GET", "/ui", 200, Endpoint::kUi, ""},
      {"POST", "/ui", 405, std::nullopt, ""},
      {"GET", "/debug/pods/ml/trainer-1", 200, Endpoint::kDebugPod, "ml/trainer-1"},
      {"GET", "/debug/pods/", 404, std::nullopt, ""},
      {"DELETE", "/admin/pods/6f9d4c1e", 200, Endpoint::kAdminPod, "6f9d4c1e"},
      {"GET", "/admin/pods/6f9d4c1e", 405, std::nullopt, ""},
  };
  for (const auto& c : cases) {
    RouteResult r = route(c.method, c.path, opts);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.path;
    if (c.endpoint) {
      ASSERT_TRUE(r.route) << c.method << " " << c.path;
      EXPECT_EQ(r.route->endpoint, *c.endpoint) << c.path;
      EXPECT_EQ(r.route->argument, c.argument) << c.path;
    } else {
      EXPECT_FALSE(r.route) << c.method << " " << c.path;
    }
  }
  EXPECT_EQ(route("GET", "/scheduler/bind", opts).allow, "POST");
}

TEST(Router, EachListenerServesItsRole) {
  RouterOptions scheduler{"/scheduler", true, false, false};
  EXPECT_EQ(route("GET", "/debug/state", scheduler).status, 404);
  EXPECT_EQ(route("DELETE", "/admin/pods/x", scheduler).status, 404);
  EXPECT_EQ(route("GET", "/metrics", scheduler).status, 404);
  EXPECT_EQ(route("POST", "/filter", scheduler).status, 200);
  EXPECT_EQ(route("GET", "/healthz", scheduler).status, 200);
  RouterOptions admin{"/scheduler", false, true, true};
  for (const char* verb : {"/filter", "/prioritize", "/bind", "/preempt", "/scheduler/bind"}) {
    EXPECT_EQ(route("POST", verb, admin).status, 404) << verb << ": verbs are on the scheduler listener only";
  }
  EXPECT_EQ(route("GET", "/metrics", admin).status, 200);
  EXPECT_EQ(route("GET", "/readyz", admin).status, 200);
  EXPECT_EQ(route("GET", "/debug/state", admin).status, 200);
  RouterOptions no_prefix{"", true, true, true};
  EXPECT_EQ(route("POST", "/scheduler/filter", no_prefix).status, 404);
  EXPECT_EQ(route("POST", "/filter", no_prefix).status, 200);
}

TEST(Router, DebugAndAdminAreForLoopbackPeersOnly) {
  EXPECT_TRUE(loopback_only(Endpoint::kDebugState));
  EXPECT_TRUE(loopback_only(Endpoint::kDebugDra));
  EXPECT_TRUE(loopback_only(Endpoint::kDebugGroups));
  EXPECT_TRUE(loopback_only(Endpoint::kDebugNode));
  EXPECT_TRUE(loopback_only(Endpoint::kAdminPod));
  EXPECT_TRUE(loopback_only(Endpoint::kDebugPod));
  EXPECT_TRUE(loopback_only(Endpoint::kUi));
  for (Endpoint e : {Endpoint::kFilter, Endpoint::kBind, Endpoint::kHealthz, Endpoint::kReadyz, Endpoint::kMetrics}) {
    EXPECT_FALSE(loopback_only(e));
  }
}

TEST(NormalisePath, FoldsSlashes) {
  EXPECT_EQ(normalise_path("//a///b/"), "/a/b");
  EXPECT_EQ(normalise_path(""), "/");
  EXPECT_EQ(normalise_path("a"), "/a");
  EXPECT_EQ(normalise_path("/"), "/");
}

}  // namespace
}  // namespace extender::server
