// Measures how fast binds reach the API server through ApiBinder, without and with the
// client-side write limit (kubernetes.api_qps / api_burst): 16 threads (as server.bind_threads
// would run them) each wait for a turn and POST a Binding to an in-process server on loopback
// that answers 201 at once. Prints, per setting, the Bindings/s of the first second, of the whole
// run and the run's length.
//
// usage: api_write_bench [BINDS] [QPS BURST ...]   (default: 400 binds; off, 50/100)
#include <httplib.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "extender/kube/api_binder.h"

namespace {

using Clock = std::chrono::steady_clock;

void run(int port, int binds, std::int64_t qps, std::int64_t burst) {
  extender::kube::ClusterAccess access;
  access.server = "http://127.0.0.1:" + std::to_string(port);
  auto client = extender::kube::ApiClient::create(access, {});
  if (!client) {
    std::fprintf(stderr, "%s\n", client.message().c_str());
    std::exit(1);
  }
  extender::kube::RateLimiter writes(qps, burst);
  extender::kube::ApiBinder binder(**client, &writes);
  std::atomic<int> next{0}, failed{0}, first_second{0};
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&] {
      for (int i; (i = next++) < binds;) {
        extender::wire::BindingArgs args{"pod-" + std::to_string(i), "bench", "uid-" + std::to_string(i), "node-1"};
        const auto deadline = Clock::now() + std::chrono::seconds(60);
        std::string error = binder.wait_turn(deadline);
        if (error.empty()) error = binder.bind(args, deadline);
        if (!error.empty()) ++failed;
        if (Clock::now() - start < std::chrono::seconds(1)) ++first_second;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double secs = std::chrono::duration<double>(Clock::now() - start).count();
  const std::string setting =
      qps > 0 ? "api_qps " + std::to_string(qps) + ", api_burst " + std::to_string(burst) : "no limit";
  std::printf("%-28s %5d binds in %6.2f s: %7.1f Bindings/s overall, %5d in the first second, %d failed\n",
              setting.c_str(), binds, secs, binds / secs, first_second.load(), failed.load());
}

}  // namespace

int main(int argc, char** argv) {
  const int binds = argc > 1 ? std::atoi(argv[1]) : 400;
  std::vector<std::pair<std::int64_t, std::int64_t>> settings;
  for (int i = 2; i + 1 < argc; i += 2) settings.emplace_back(std::atoll(argv[i]), std::atoll(argv[i + 1]));
  if (settings.empty()) settings = {{0, 1}, {50, 100}};
  httplib::Server server;
  server.new_task_queue = [] { return new httplib::ThreadPool(64); };  // a worker per kept-alive connection
  server.Post(".*", [](const httplib::Request&, httplib::Response& res) {
    res.status = 201;
    res.set_content(R"({"kind":"Status","apiVersion":"v1","status":"Success","code":201})", "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (auto [qps, burst] : settings) run(port, binds, qps, burst);
  server.stop();
  serving.join();
}
