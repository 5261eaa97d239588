#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "extender/server/body_pool.h"
#include "extender/server/lanes.h"
#include "support/gzip.h"

namespace extender::server {
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
    lanes.serve(Lane::kDecide, dispatch, std::move(large), deliver);
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
      lanes.serve(Lane::kDecide, dispatch, std::move(r), [&, name = c.name](HttpResponse res) {
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
}  // namespace extender::server
