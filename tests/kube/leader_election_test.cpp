#include "extender/kube/leader_election.h"

#include <gtest/gtest.h>

#include "extender/kube/leader_label.h"
#include "extender/kube/lease.h"
#include "support/fake_api_server.h"

namespace extender::kube {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::FakeApiServer;
using testing::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kLeasePath = "/apis/coordination.k8s.io/v1/namespaces/ns/leases/extender";

// The Lease endpoints of an API server: create, read, and update guarded by resourceVersion.
// While `down`, every call answers 503.
class FakeLease {
 public:
  explicit FakeLease(FakeApiServer& server) {
    server.route("GET", kLeasePath, [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(mu_);
      if (down_) return FakeApiServer::reply(res, 503, testing::status_body(503, "ServiceUnavailable", "down"));
      if (lease_.is_null()) return FakeApiServer::reply(res, 404, testing::status_body(404, "NotFound", "no lease"));
      FakeApiServer::reply(res, 200, lease_);
    });
    server.route("POST", "/apis/coordination.k8s.io/v1/namespaces/ns/leases",
                 [this](const httplib::Request& req, httplib::Response& res) { write(req, res, true); });
    server.route("PUT", kLeasePath,
                 [this](const httplib::Request& req, httplib::Response& res) { write(req, res, false); });
  }

  void set_down(bool down) {
    std::lock_guard lock(mu_);
    down_ = down;
  }
  std::string holder() {
    std::lock_guard lock(mu_);
    return lease_.is_null() ? std::string() : lease_["spec"].value("holderIdentity", std::string());
  }
  Clock::time_point last_write() {
    std::lock_guard lock(mu_);
    return last_write_;
  }

 private:
  void write(const httplib::Request& req, httplib::Response& res, bool create) {
    std::lock_guard lock(mu_);
    if (down_) return FakeApiServer::reply(res, 503, testing::status_body(503, "ServiceUnavailable", "down"));
    json body = json::parse(req.body);
    if (create && !lease_.is_null())
      return FakeApiServer::reply(res, 409, testing::status_body(409, "AlreadyExists", "exists"));
    if (!create && (lease_.is_null() || body["metadata"].value("resourceVersion", "") !=
                                            lease_["metadata"]["resourceVersion"].get<std::string>())) {
      return FakeApiServer::reply(res, 409, testing::status_body(409, "Conflict", "the object has been modified"));
    }
    body["metadata"]["resourceVersion"] = std::to_string(++version_);
    lease_ = body;
    last_write_ = Clock::now();
    FakeApiServer::reply(res, create ? 201 : 200, lease_);
  }

  std::mutex mu_;
  json lease_;
  bool down_ = false;
  int version_ = 7;
  Clock::time_point last_write_{};
};

struct Replica {
  Replica(FakeApiServer& server, const std::string& identity, ElectionTiming timing) {
    ClusterAccess access;
    access.server = server.url();
    client = std::move(ApiClient::create(access, {}).value());
    store = std::make_unique<ApiLeaseStore>(*client, "ns", "extender", 1s);
    LeaderElection::Hooks hooks;
    hooks.on_transition = [this](const Leadership& l) {
      std::lock_guard lock(mu);
      transitions.push_back(l.leading);
    };
    hooks.on_release = [this](const Leadership& l) {
      std::lock_guard lock(mu);
      releases.push_back(l);
    };
    hooks.after_step = [this](bool leading) { last_step_leading = leading; };
    election = std::make_unique<LeaderElection>(*store, identity, timing, std::move(hooks));
  }
  std::vector<bool> heard() {
    std::lock_guard lock(mu);
    return transitions;
  }
  std::vector<Leadership> released() {
    std::lock_guard lock(mu);
    return releases;
  }
  std::unique_ptr<ApiClient> client;
  std::unique_ptr<ApiLeaseStore> store;
  std::unique_ptr<LeaderElection> election;
  std::mutex mu;
  std::vector<bool> transitions;
  std::vector<Leadership> releases;
  std::atomic<bool> last_step_leading{false};
};

const ElectionTiming kFast{3000ms, 2000ms, 200ms};

TEST(LeaderElection, OneOfTwoReplicasLeadsAndAReleaseHandsOver) {
  FakeApiServer server;
  FakeLease lease(server);
  Replica a(server, "a", kFast);
  Replica b(server, "b", kFast);
  a.election->start();
  ASSERT_TRUE(eventually([&] { return !a.election->not_leading(); }));
  b.election->start();
  ASSERT_TRUE(eventually([&] { return b.election->view().holder == "a"; }));
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(200ms);
    EXPECT_TRUE(b.election->not_leading()) << "a live lease is never taken";
    EXPECT_FALSE(a.election->not_leading());
  }
  const auto released = Clock::now();
  a.election->stop();
  EXPECT_TRUE(a.election->not_leading());
  EXPECT_EQ(a.heard(), (std::vector<bool>{true})) << "a hand-over is not heard as a loss of leadership";
  ASSERT_EQ(a.released().size(), 1u);
  EXPECT_FALSE(a.released()[0].leading);
  EXPECT_EQ(a.released()[0].last_error, "") << "the lease was released";
  EXPECT_FALSE(a.last_step_leading) << "the label follows a stop too";
  ASSERT_TRUE(eventually([&] { return !b.election->not_leading(); }));
  EXPECT_LT(Clock::now() - released, kFast.lease_duration) << "a released lease is taken before it would expire";
  EXPECT_EQ(lease.holder(), "b");
  EXPECT_EQ(b.heard(), (std::vector<bool>{true}));
  b.election->stop();
}

TEST(LeaderElection, ALeaderCutOffFromTheApiServerStopsDecidingBeforeItsLeaseCouldPass) {
  FakeApiServer server;
  FakeLease lease(server);
  Replica a(server, "a", kFast);
  a.election->start();
  ASSERT_TRUE(eventually([&] { return !a.election->not_leading(); }));
  lease.set_down(true);
  const auto cut = Clock::now();
  ASSERT_TRUE(eventually([&] { return a.election->not_leading().has_value(); }, 10s));
  const auto stopped = Clock::now();
  EXPECT_LT(stopped, lease.last_write() + kFast.lease_duration)
      << "stopped " << std::chrono::duration_cast<std::chrono::milliseconds>(stopped - lease.last_write()).count()
      << " ms after its last renewal";
  EXPECT_GE(stopped - cut, kFast.renew_deadline / 2) << "a failed renewal keeps the term until the renew deadline";
  EXPECT_NE(a.election->not_leading()->find("renew deadline"), std::string::npos) << *a.election->not_leading();
  ASSERT_TRUE(eventually([&] { return a.heard() == std::vector<bool>{true, false}; }));
  EXPECT_TRUE(a.released().empty()) << "a lapsed term is a loss, not a hand-over";
  EXPECT_TRUE(eventually([&] { return !a.last_step_leading; }));
  lease.set_down(false);
  EXPECT_TRUE(eventually([&] { return !a.election->not_leading(); }, 5s)) << "it leads again once it can renew";
  a.election->stop();
  EXPECT_EQ(a.released().size(), 1u);
}

TEST(LeaderElection, AReplicaThatMayNotCampaignNeverTakesTheLease) {
  FakeApiServer server;
  FakeLease lease(server);
  Replica a(server, "a", kFast);
  std::atomic<bool> synced{false};
  std::atomic<int> steps{0};
  LeaderElection::Hooks hooks;
  hooks.may_campaign = [&] { return synced.load(); };
  hooks.after_step = [&](bool) { ++steps; };
  LeaderElection cold(*a.store, "cold", kFast, std::move(hooks));
  cold.start();
  std::this_thread::sleep_for(600ms);
  EXPECT_EQ(lease.holder(), "") << "caches not synced: no campaign";
  EXPECT_EQ(steps, 0) << "nor any work after it (the leader label would be patched every 100 ms)";
  synced = true;
  EXPECT_TRUE(eventually([&] { return !cold.not_leading(); }));
  cold.stop();
}

TEST(LeaderLabel, TheLeaderLabelsItsPodAndTakesTheLabelOffOthers) {
  FakeApiServer server;
  server.route("PATCH", "/api/v1/namespaces/ns/pods/*", [](const httplib::Request&, httplib::Response& res) {
    FakeApiServer::reply(res, 200, json{{"kind", "Pod"}});
  });
  server.route("GET", "/api/v1/namespaces/ns/pods", [](const httplib::Request& req, httplib::Response& res) {
    EXPECT_EQ(req.get_param_value("labelSelector"), "scheduler-extender.io/leader=true");
    json items = json::array({json{{"metadata", {{"name", "ext-0"}}}}, json{{"metadata", {{"name", "ext-1"}}}}});
    FakeApiServer::reply(res, 200, json{{"kind", "PodList"}, {"items", items}});
  });
  ClusterAccess access;
  access.server = server.url();
  auto client = std::move(ApiClient::create(access, {}).value());
  LeaderLabel label(*client, "ns", "ext-1", "scheduler-extender.io/leader", 1s);

  label.reconcile(true);
  auto patches = server.requests("PATCH");
  ASSERT_EQ(patches.size(), 2u);
  EXPECT_EQ(patches[0].path, "/api/v1/namespaces/ns/pods/ext-1");
  EXPECT_EQ(json::parse(patches[0].body),
            json::parse(R"({"metadata":{"labels":{"scheduler-extender.io/leader":"true"}}})"));
  EXPECT_EQ(patches[1].path, "/api/v1/namespaces/ns/pods/ext-0") << "the predecessor keeps no label";
  EXPECT_EQ(json::parse(patches[1].body),
            json::parse(R"({"metadata":{"labels":{"scheduler-extender.io/leader":null}}})"));
  EXPECT_TRUE(label.marked());

  label.reconcile(true);
  EXPECT_EQ(server.requests("PATCH").size(), 2u) << "nothing to do while it stays the leader";

  label.reconcile(false);
  patches = server.requests("PATCH");
  ASSERT_EQ(patches.size(), 3u);
  EXPECT_EQ(patches[2].path, "/api/v1/namespaces/ns/pods/ext-1");
  EXPECT_EQ(json::parse(patches[2].body),
            json::parse(R"({"metadata":{"labels":{"scheduler-extender.io/leader":null}}})"));
  EXPECT_FALSE(label.marked());
}

TEST(LeaderLabel, AFailedPatchIsRetriedAtTheNextStep) {
  FakeApiServer server;
  std::atomic<int> status{403};
  server.route("PATCH", "/api/v1/namespaces/ns/pods/*", [&](const httplib::Request&, httplib::Response& res) {
    FakeApiServer::reply(res, status, json{{"kind", "Status"}, {"message", "pods is forbidden"}});
  });
  server.route("GET", "/api/v1/namespaces/ns/pods", [](const httplib::Request&, httplib::Response& res) {
    FakeApiServer::reply(res, 200, json{{"kind", "PodList"}, {"items", json::array()}});
  });
  ClusterAccess access;
  access.server = server.url();
  auto client = std::move(ApiClient::create(access, {}).value());
  LeaderLabel label(*client, "ns", "ext-1", "scheduler-extender.io/leader", 1s);
  label.reconcile(true);
  EXPECT_FALSE(label.marked());
  status = 200;
  label.reconcile(true);
  EXPECT_TRUE(label.marked());
}

TEST(LeaderLabel, WithoutAPodNameItDoesNothing) {
  FakeApiServer server;
  ClusterAccess access;
  access.server = server.url();
  auto client = std::move(ApiClient::create(access, {}).value());
  LeaderLabel label(*client, "ns", "", "scheduler-extender.io/leader", 1s);
  label.reconcile(true);
  label.reconcile(false);
  EXPECT_TRUE(server.requests().empty());
}

TEST(Lease, ParsesWhatTheApiServerWritesAndWritesWhatItParses) {
  LeaseRecord r;
  r.holder = "ext-0_5d1c";
  r.lease_duration_seconds = 15;
  r.acquire_time = micro_time(std::chrono::system_clock::time_point(std::chrono::seconds(1764547200)));
  r.renew_time = micro_time(std::chrono::system_clock::time_point(std::chrono::microseconds(1764547212345678)));
  r.transitions = 3;
  r.resource_version = "4711";
  EXPECT_EQ(r.acquire_time, "2025-12-01T00:00:00.000000Z");
  EXPECT_EQ(r.renew_time, "2025-12-01T00:00:12.345678Z");
  const json body = json::parse(lease_body("kube-system", "extender", r));
  EXPECT_EQ(body["apiVersion"], "coordination.k8s.io/v1");
  EXPECT_EQ(body["kind"], "Lease");
  EXPECT_EQ(body["metadata"]["namespace"], "kube-system");
  EXPECT_EQ(body["metadata"]["resourceVersion"], "4711");
  EXPECT_EQ(body["spec"]["holderIdentity"], "ext-0_5d1c");
  EXPECT_EQ(body["spec"]["leaseDurationSeconds"], 15);
  auto back = parse_lease(body.dump());
  ASSERT_TRUE(back) << back.message();
  EXPECT_TRUE(back->same_spec(r));
  EXPECT_EQ(back->resource_version, "4711");
}

TEST(Lease, RefusesWhatIsNotALease) {
  const char* bad[] = {"",
                       "[]",
                       "nope",
                       R"({"spec":[]})",
                       R"({"spec":{"holderIdentity":7}})",
                       R"({"spec":{"leaseDurationSeconds":"15"}})",
                       R"({"metadata":{"resourceVersion":1}})"};
  for (const char* text : bad) EXPECT_FALSE(parse_lease(text)) << text;
  std::string deep(100'000, '[');
  EXPECT_FALSE(parse_lease(deep));
  auto empty_spec = parse_lease(R"({"metadata":{"resourceVersion":"9"}})");
  ASSERT_TRUE(empty_spec) << "a Lease without spec is a released one";
  EXPECT_EQ(empty_spec->holder, "");
}

}  // namespace
}  // namespace extender::kube
