#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "extender/server/body_pool.h"
#include "extender/server/lanes.h"

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
    Lanes lanes("test", 1, 1, 1, &pool);
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

}  // namespace
}  // namespace extender::server
