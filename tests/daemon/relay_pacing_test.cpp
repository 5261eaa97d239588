// The relay in front of the built daemon: pacing never holds an answer past the relay's upstream
// timeout, so a caller repeating one pod through the relay cannot open its breaker.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "daemon/daemon_process.h"
#include "extender/relay/relay.h"

namespace extender::testing {
namespace {

using namespace std::chrono_literals;

TEST(RelayPacing, OnePodRepeatedThroughTheRelayIsHeldWithinItsUpstreamTimeout) {
  // Holds of 100 ms against a relay that waits 300 ms: a third hold would reach it.
  DaemonProcess daemon({}, "server:\n  pacing: {hold: 100ms}\n");
  relay::RelayOptions options;
  options.listen_host = "127.0.0.1";
  options.listen_port = 0;
  options.upstream = "http://127.0.0.1:" + std::to_string(daemon.port());
  options.upstream_timeout = 300ms;
  auto relay = relay::Relay::create(options);
  ASSERT_TRUE(relay.ok()) << relay.message();
  (*relay)->start();
  const std::string body =
      R"({"Pod":{"metadata":{"name":"p","namespace":"t","uid":"uid-p"},"spec":{"containers":[{}]}},)"
      R"("NodeNames":["n1"]})";
  // 8 connections, 5 calls each: the pod's calls pass 30 within its second, where an uncapped
  // hold would be three times 100 ms.
  std::atomic<int> ok{0};
  std::vector<std::thread> callers;
  const auto started = std::chrono::steady_clock::now();
  for (int t = 0; t < 8; ++t) {
    callers.emplace_back([&] {
      httplib::Client client("127.0.0.1", (*relay)->port());
      client.set_read_timeout(10s);
      for (int i = 0; i < 5; ++i) {
        auto r = client.Post("/scheduler/prioritize-unmanaged", body, "application/json");
        if (r && r->status == 200) ++ok;
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(ok.load(), 40);
  EXPECT_EQ((*relay)->breaker_state(), relay::BreakerState::kClosed);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 180ms) << "no call was held";
}

}  // namespace
}  // namespace extender::testing
