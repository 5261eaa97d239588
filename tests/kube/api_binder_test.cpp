// ApiBinder against a fake binding endpoint: what it POSTs, which answers are success (201, 409
// "already assigned" to the same node), which are errors, what is retried (transport errors,
// 429, 5xx) and that it answers within its deadline however the server behaves.
#include "extender/kube/api_binder.h"

#include <gtest/gtest.h>

#include "support/fake_api_server.h"
#include "support/fake_clock.h"

namespace extender::kube {
namespace {

using namespace std::chrono_literals;
using testing::FakeApiServer;
using testing::json;
using testing::status_body;
using Clock = std::chrono::steady_clock;

#if defined(__SANITIZE_THREAD__)
// ThreadSanitizer runs this code several times slower: the deadlines hold, with more slack, and a
// slow first attempt may leave no room for a retry.
constexpr auto kSlack = 1500ms;
constexpr bool kSlowBuild = true;
#else
constexpr auto kSlack = 250ms;
constexpr bool kSlowBuild = false;
#endif

constexpr const char* kBindingPath = "/api/v1/namespaces/team-a/pods/trainer-0/binding";

wire::BindingArgs args(const std::string& node = "gpu-1") {
  wire::BindingArgs a;
  a.pod_namespace = "team-a";
  a.pod_name = "trainer-0";
  a.pod_uid = "6f1c2d3e-uid";
  a.node = node;
  return a;
}

struct Scripted {
  int status;
  json body;
};

// A server whose binding endpoint gives the scripted answers in order (the last one repeats).
class BinderHarness {
 public:
  explicit BinderHarness(std::vector<Scripted> answers, std::chrono::milliseconds deadline = 2000ms)
      : answers_(std::move(answers)) {
    server.route("POST", "/api/v1/namespaces/*/pods/*/binding",
                 [this](const httplib::Request&, httplib::Response& res) {
                   Scripted a;
                   {
                     std::lock_guard lock(mu_);
                     a = answers_[std::min(next_++, answers_.size() - 1)];
                   }
                   if (a.status == 0) {
                     server.hang();
                     return;
                   }
                   FakeApiServer::reply(res, a.status, a.body);
                 });
    ClusterAccess access;
    access.server = server.url();
    access.token = "binder-token";
    auto c = ApiClient::create(access, {});
    if (!c) throw std::runtime_error(c.message());
    client = std::move(*c);
    // The server's first answer (its workers starting, under a sanitizer) is not the binder's to time.
    (void)client->get("/warm-up", 5000ms);
    binder = std::make_unique<ApiBinder>(*client);
    budget = deadline;
  }
  ~BinderHarness() {
    server.release_hangs();
    binder.reset();
    client.reset();
    server.stop();
  }
  std::vector<testing::RecordedRequest> posts() const { return server.requests("POST"); }

  FakeApiServer server;
  std::unique_ptr<ApiClient> client;
  std::unique_ptr<ApiBinder> binder;
  std::chrono::milliseconds budget{};
  // A bind with the harness's budget from now, as the engine gives it.
  std::string bind() { return binder->bind(args(), std::chrono::steady_clock::now() + budget); }

 private:
  std::mutex mu_;
  std::vector<Scripted> answers_;
  std::size_t next_ = 0;
};

const json kCreated = json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Success"}, {"code", 201}};

json conflict(const std::string& message) { return status_body(409, "Conflict", message); }

TEST(ApiBinder, PostsABindingWithThePodUid) {
  BinderHarness h({{201, kCreated}});
  EXPECT_EQ(h.bind(), "");
  const auto posts = h.posts();
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0].path, kBindingPath);
  EXPECT_EQ(posts[0].authorization, "Bearer binder-token");
  const json body = json::parse(posts[0].body);
  EXPECT_EQ(body, (json{{"apiVersion", "v1"},
                        {"kind", "Binding"},
                        {"metadata", {{"name", "trainer-0"}, {"namespace", "team-a"}, {"uid", "6f1c2d3e-uid"}}},
                        {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "gpu-1"}}}}));
}

TEST(ApiBinder, BindingBodyIsValidJsonWhateverTheNames) {
  wire::BindingArgs a = args();
  a.pod_name = "we\"ird\\name\n";
  a.node = "nöde-1";
  const json body = json::parse(binding_body(a));
  EXPECT_EQ(body["metadata"]["name"], "we\"ird\\name\n");
  EXPECT_EQ(body["target"]["name"], "nöde-1");
}

TEST(ApiBinder, Answers) {
  struct Case {
    std::string name;
    std::vector<Scripted> answers;
    std::string error;  // a part of the error; "" for success
    std::size_t posts;
  };
  const std::vector<Case> cases = {
      {"200 also binds", {{200, kCreated}}, "", 1},
      {"already assigned to the same node: an earlier attempt landed",
       {{409, conflict("Operation cannot be fulfilled on pods/binding \"trainer-0\": pod trainer-0 is already assigned "
                       "to node \"gpu-1\"")}},
       "",
       1},
      {"already assigned to another node",
       {{409, conflict("Operation cannot be fulfilled on pods/binding \"trainer-0\": pod trainer-0 is already assigned "
                       "to node \"gpu-2\"")}},
       "API server refused the binding (409): Operation cannot be fulfilled on pods/binding \"trainer-0\": pod "
       "trainer-0 is "
       "already assigned to node \"gpu-2\"",
       1},
      {"a node whose name only starts like ours",
       {{409, conflict("pod trainer-0 is already assigned to node \"gpu-10\"")}},
       "gpu-10",
       1},
      {"recreated pod: the uid precondition fails",
       {{409, conflict("Precondition failed: UID in precondition: 6f1c2d3e-uid, UID in object meta: 0000")}},
       "Precondition failed",
       1},
      {"500 then 201",
       {{500, status_body(500, "InternalError", "etcdserver: leader changed")}, {201, kCreated}},
       "",
       2},
      {"429 then 503 then 201",
       {{429, status_body(429, "TooManyRequests", "slow down")},
        {503, status_body(503, "ServiceUnavailable", "busy")},
        {201, kCreated}},
       "",
       3},
      {"403 is not retried",
       {{403, status_body(403, "Forbidden", "cannot create pods/binding")}, {201, kCreated}},
       "API server refused the binding (403): cannot create pods/binding",
       1},
      {"404 is not retried",
       {{404, status_body(404, "NotFound", "pods \"trainer-0\" not found")}, {201, kCreated}},
       "(404): pods \"trainer-0\" not found",
       1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    BinderHarness h(c.answers);
    const std::string error = h.bind();
    if (c.error.empty()) {
      EXPECT_EQ(error, "");
    } else {
      EXPECT_NE(error.find(c.error), std::string::npos) << error;
    }
    const auto posts = h.posts();
    EXPECT_EQ(posts.size(), c.posts);
    for (const auto& p : posts) EXPECT_EQ(p.body, posts.front().body) << "every attempt asks for the same binding";
  }
}

TEST(ApiBinder, AServerThatNeverAnswersIsAnErrorWithinTheDeadline) {
  const auto deadline = 600ms;
  BinderHarness h({{0, {}}}, deadline);
  const auto started = Clock::now();
  const std::string error = h.bind();
  const auto took = Clock::now() - started;
  EXPECT_NE(error, "");
  EXPECT_LT(took, deadline + kSlack) << "the binder must answer within its deadline (plus scheduling slack)";
  EXPECT_GE(h.posts().size(), 1u);
}

TEST(ApiBinder, RetriesStopAtTheDeadline) {
  // 500 after 500: retries back off (100 ms, 200 ms, ...) but none may sleep past the deadline.
  for (auto deadline : {400ms, 1100ms}) {
    SCOPED_TRACE(deadline.count());
    BinderHarness h({{500, status_body(500, "InternalError", "still broken")}}, deadline);
    const auto started = Clock::now();
    const std::string error = h.bind();
    const auto took = Clock::now() - started;
    EXPECT_NE(error.find("API server refused the binding (500): still broken"), std::string::npos) << error;
    EXPECT_GE(h.posts().size(), kSlowBuild      ? 1u
                                : deadline > 1s ? 3u
                                                : 2u)
        << "the binder stopped retrying before its deadline";
    EXPECT_LT(took, deadline + kSlack) << "answered "
                                       << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                                       << " ms after starting";
  }
}

TEST(ApiBinder, RetriesPauseOnTheInjectedClock) {
  // On a FakeClock the pauses pass at once and exactly: 100 ms, 200 ms, 300 ms, then the next
  // pause (400 ms) would leave under 50 ms of the 1000 ms deadline, so the fourth 500 is the answer.
  BinderHarness h({{500, status_body(500, "InternalError", "still broken")}});
  extender::testing::FakeClock clock;
  h.binder = std::make_unique<ApiBinder>(*h.client, nullptr, clock);
  const auto start = clock.now();
  const auto started = Clock::now();
  const std::string error = h.binder->bind(args(), start + 1000ms);
  EXPECT_NE(error.find("API server refused the binding (500): still broken"), std::string::npos) << error;
  EXPECT_EQ(h.posts().size(), 4u);
  EXPECT_EQ(clock.now() - start, 600ms) << "the pauses did not go by the injected clock";
  EXPECT_LT(Clock::now() - started, 500ms + kSlack) << "the binder slept on the real clock";
}

// Under the client-side write limit: the engine's wait_turn gives the Binding's first attempt its
// turn; patches and retries wait for turns of their own; a turn that cannot come by the deadline
// fails the write at once, and nothing is sent.
TEST(ApiBinder, EveryWriteTakesItsTurnUnderTheWriteLimit) {
  const std::string refused = "the client-side limit of API writes (kubernetes.api_qps 1, api_burst 1) allows none";
  {
    SCOPED_TRACE("the Binding goes on the turn wait_turn took");
    BinderHarness h({{201, kCreated}});
    RateLimiter writes(1, 1);
    h.binder = std::make_unique<ApiBinder>(*h.client, &writes);
    EXPECT_EQ(h.binder->wait_turn(Clock::now() + 500ms), "");
    EXPECT_EQ(h.bind(), "");
    EXPECT_EQ(h.posts().size(), 1u);
    SCOPED_TRACE("the next turn is a second away: a bind due sooner is refused at once");
    const std::string error = h.binder->wait_turn(Clock::now() + 500ms);
    EXPECT_NE(error.find(refused), std::string::npos) << error;
    EXPECT_EQ(h.posts().size(), 1u);
  }
  {
    SCOPED_TRACE("a retry waits for a turn of its own");
    BinderHarness h({{500, status_body(500, "InternalError", "etcdserver: leader changed")}, {201, kCreated}}, 600ms);
    RateLimiter writes(1, 1);
    h.binder = std::make_unique<ApiBinder>(*h.client, &writes);
    ASSERT_EQ(h.binder->wait_turn(Clock::now() + 600ms), "");
    const std::string error = h.bind();
    EXPECT_NE(error.find("API server refused the binding (500): etcdserver: leader changed; no retry: " + refused),
              std::string::npos)
        << error;
    EXPECT_EQ(h.posts().size(), 1u);
  }
  {
    SCOPED_TRACE("the device and GPU records wait for turns too");
    BinderHarness h({{201, kCreated}});
    h.server.route("PATCH", "/api/v1/namespaces/*/*/*", [](const httplib::Request&, httplib::Response& res) {
      FakeApiServer::reply(res, 200, json{{"kind", "Pod"}});
    });
    RateLimiter writes(1, 1);
    h.binder = std::make_unique<ApiBinder>(*h.client, &writes);
    EXPECT_EQ(h.binder->record_gpu_share(args(), {0, 4, 16}, Clock::now() + 500ms), "");
    std::string error = h.binder->record_devices({{"team-a/data", "d0"}}, Clock::now() + 500ms);
    EXPECT_NE(error.find("recording the device of claim team-a/data: " + refused), std::string::npos) << error;
    error = h.binder->record_gpu_share(args(), {0, 4, 16}, Clock::now() + 500ms);
    EXPECT_NE(error.find("recording GPU 0 on pod team-a/trainer-0: " + refused), std::string::npos) << error;
    EXPECT_EQ(h.server.requests("PATCH").size(), 1u);
  }
}

TEST(ApiBinder, AnUnreachableServerIsRetriedThenReported) {
  std::string url;
  {
    FakeApiServer gone;
    url = gone.url();
  }
  ClusterAccess access;
  access.server = url;
  auto client = ApiClient::create(access, {});
  ASSERT_TRUE(client);
  ApiBinder binder(**client);
  const auto started = Clock::now();
  const std::string error = binder.bind(args(), started + 700ms);
  EXPECT_NE(error.find("cannot connect"), std::string::npos) << error;
  EXPECT_LT(Clock::now() - started, 700ms + kSlack);
}

}  // namespace
}  // namespace extender::kube
