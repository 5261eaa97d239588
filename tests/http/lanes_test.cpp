#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "extender/http/body_pool.h"
#include "extender/http/lanes.h"
#include "support/gzip.h"

namespace extender::http {
namespace {

TEST(Lanes, AHandlerThatThrowsIsAnswered500AndALargeBodyGoesBackToThePoolThenTheHeapIsTrimmed) {
  BodyPool pool;
  std::mutex mu;
  std::vector<HttpResponse> answers;
  const Dispatch dispatch = [](const HttpRequest& r) -> HttpResponse {
    if (r.path == "/throw") throw std::runtime_error("boom");
    HttpResponse res;
    res.body = std::to_string(r.body.size());
    return res;
  };
  const auto deliver = [&](HttpResponse res) {
    std::lock_guard lock(mu);
    answers.push_back(std::move(res));
  };
  {
    Lanes lanes("test", 1, 1, 1, std::size_t{64} << 20, &pool);
    HttpRequest thrower;
    thrower.path = "/throw";
    lanes.serve(Lane::kLight, dispatch, thrower, deliver);
    HttpRequest large;
    large.path = "/filter";
    large.body.reserve(2 << 20);
    large.body.assign(2 << 20, 'x');
    lanes.serve(Lane::kCompute, dispatch, std::move(large), deliver);
  }  // the destructor finishes what was posted
  ASSERT_EQ(answers.size(), 2u);
  const auto thrown = answers[0].status == 500 ? answers[0] : answers[1];
  const auto served = answers[0].status == 500 ? answers[1] : answers[0];
  EXPECT_EQ(thrown.status, 500);
  EXPECT_NE(thrown.body.find("internal error"), std::string::npos) << thrown.body;
  EXPECT_EQ(served.status, 200);
  EXPECT_EQ(served.body, std::to_string(2 << 20));
  EXPECT_EQ(pool.kept(), 1u);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (pool.trims() == 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_GE(pool.trims(), 1u);
}

TEST(Lanes, ACodedBodyIsDecodedOnTheWorkerAndOneThatCannotBeIsAnsweredWithoutTheHandler) {
  BodyPool pool;
  std::mutex mu;
  std::vector<std::pair<std::string, HttpResponse>> answers;
  int handled = 0;
  const Dispatch dispatch = [&](const HttpRequest& r) -> HttpResponse {
    ++handled;
    HttpResponse res;
    res.body = r.content_coding + "|" + r.body;
    return res;
  };
  struct Case {
    std::string name, coding, wire;
    int status;
    std::string body;  // the handler's answer, or a part of the error
  };
  const std::string zipped = extender::testing::gzip("{\"a\":1}");
  const std::string bomb = extender::testing::gzip(std::string(1 << 20, ' '));
  const std::vector<Case> cases = {
      {"gzip", "gzip", zipped, 200, "|{\"a\":1}"},
      {"identity", "", "plain", 200, "|plain"},
      {"not gzip at all", "gzip", "plain text that is not gzip", 400, "cannot be decompressed"},
      {"over the limit once decompressed", "gzip", bomb, 413, "max_body_bytes"},
  };
  {
    Lanes lanes("test", 1, 1, 1, 1000, &pool);
    for (const Case& c : cases) {
      HttpRequest r;
      r.path = c.name;
      r.body = c.wire;
      r.content_coding = c.coding;
      lanes.serve(Lane::kCompute, dispatch, std::move(r), [&, name = c.name](HttpResponse res) {
        std::lock_guard lock(mu);
        answers.emplace_back(name, std::move(res));
      });
    }
  }
  ASSERT_EQ(answers.size(), cases.size());
  for (const Case& c : cases) {
    const auto it = std::find_if(answers.begin(), answers.end(), [&](const auto& a) { return a.first == c.name; });
    ASSERT_NE(it, answers.end()) << c.name;
    EXPECT_EQ(it->second.status, c.status) << c.name << ": " << it->second.body;
    if (c.status == 200) {
      EXPECT_EQ(it->second.body, c.body) << c.name;
    } else {
      EXPECT_NE(it->second.body.find(c.body), std::string::npos) << c.name << ": " << it->second.body;
    }
  }
  EXPECT_EQ(handled, 2);
}

}  // namespace
}  // namespace extender::http

namespace extender::http {
namespace {

TEST(Lanes, WhatIsInflatedIsChargedToItsPeerWhileItIsHandledAndAPeerPastItsShareIs503) {
  BodyPool pool;
  BodyBudget budget(std::size_t{8} << 20, std::size_t{4} << 20);
  std::mutex mu;
  std::vector<std::pair<std::string, int>> answers;
  std::size_t seen_while_handled = 0;
  const Dispatch dispatch = [&](const HttpRequest& r) -> HttpResponse {
    seen_while_handled = budget.used_by(r.peer_ip);
    return HttpResponse{};
  };
  const std::string small = extender::testing::gzip(std::string(100 << 10, 'a'));
  const std::string big = extender::testing::gzip(std::string(3 << 20, 'a'));
  {
    Lanes lanes("test", 1, 1, 1, std::size_t{64} << 20, &pool, &budget);
    for (const auto& [peer, wire] : {std::pair{"10.0.0.1", small}, std::pair{"10.0.0.2", big}}) {
      HttpRequest r;
      r.path = "/filter";
      r.peer_ip = peer;
      r.body = wire;
      r.content_coding = "gzip";
      lanes.serve(Lane::kCompute, dispatch, std::move(r), [&, p = std::string(peer)](HttpResponse res) {
        std::lock_guard lock(mu);
        answers.emplace_back(p, res.status);
      });
    }
  }
  ASSERT_EQ(answers.size(), 2u);
  for (const auto& [peer, status] : answers) {
    EXPECT_EQ(status, peer == "10.0.0.1" ? 200 : 503) << peer;
  }
  EXPECT_GE(seen_while_handled, std::size_t{100} << 10) << "the inflated bytes are charged while the handler runs";
  EXPECT_LT(seen_while_handled, std::size_t{1} << 20) << "charged for what was inflated, not for the limit";
  EXPECT_EQ(budget.used(), 0u) << "released once answered";
}

}  // namespace
}  // namespace extender::http

namespace extender::http {
namespace {

TEST(Lanes, ACodedBodyIsWeighedByWhatItMayDecodeTo) {
  BodyPool pool;
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  std::atomic<int> answered{0};
  const Dispatch dispatch = [&](const HttpRequest&) -> HttpResponse {
    const int now = ++running;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    --running;
    return HttpResponse{};
  };
  // 900 KB of names in a few KB of gzip: light as sent, medium once decoded.
  std::string names = "{\"NodeNames\":[";
  while (names.size() < (900 << 10)) names += "\"node-name\",";
  names += "\"n\"]}";
  const std::string wire = extender::testing::gzip(names);
  ASSERT_LT(wire.size(), WorkerPool::kWeighedWork);
  {
    Lanes lanes("test", 1, 8, 1, std::size_t{64} << 20, &pool);
    for (int i = 0; i < 6; ++i) {
      HttpRequest r;
      r.path = "/filter";
      r.peer_ip = "10.0.0." + std::to_string(i);
      r.body = wire;
      r.content_coding = "gzip";
      lanes.serve(Lane::kCompute, dispatch, std::move(r), [&](HttpResponse res) {
        EXPECT_EQ(res.status, 200);
        ++answered;
      });
    }
  }
  EXPECT_EQ(answered, 6);
  EXPECT_LE(most.load(), static_cast<int>(WorkerPool::default_heavy_limit(8, usable_cpus())))
      << "medium decoded bodies ran on more threads than the weighed ones may take";
}

}  // namespace
}  // namespace extender::http
