#include "extender/server/worker_pool.h"

#include <spdlog/spdlog.h>

#include "extender/wire/results.h"

namespace extender::server {

WorkerPool::WorkerPool(std::size_t threads) {
  threads_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::post(std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void WorkerPool::run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

void Lanes::serve(Lane lane, const Dispatch& dispatch, HttpRequest request, Deliver deliver) {
  constexpr std::size_t kTrimAbove = 1 << 20;
  WorkerPool& pool = lane == Lane::kBind ? bind_ : lane == Lane::kLight ? light_ : decide_;
  pool.post([this, &dispatch, req = std::move(request), deliver = std::move(deliver)]() mutable {
    HttpResponse res;
    try {
      res = dispatch(req);
    } catch (const std::exception& e) {
      spdlog::error("{} listener: internal error serving {} {}: {}", name_, req.method, req.path, e.what());
      res = HttpResponse{};
      res.status = 500;
      res.body = wire::encode_request_error("internal error; see the daemon's log");
    }
    const bool large = req.body.capacity() > kTrimAbove;
    std::shared_ptr<const void> spent = std::move(res.spent);
    deliver(std::move(res));
    spent.reset();
    bodies_->release(std::move(req.body));
    std::string().swap(req.body);
    if (large) bodies_->trim_soon();
  });
}

}  // namespace extender::server
