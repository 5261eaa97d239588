#include "extender/http/worker_pool.h"

#include <algorithm>

#include "extender/common/clock.h"

namespace extender::http {

std::size_t WorkerPool::default_heavy_limit(std::size_t threads, std::size_t cores) {
  const std::size_t all_but_one = threads > 1 ? threads - 1 : 1;
  const std::size_t cores_but_one = cores > 1 ? cores - 1 : 1;
  return std::min(all_but_one, cores_but_one);
}

class WorkerPool::Observer final : public BlockingObserver {
 public:
  explicit Observer(WorkerPool& pool) : pool_(pool), previous_(set_blocking_observer(this)) {}
  ~Observer() override { set_blocking_observer(previous_); }
  void blocking_begins() override { pool_.blocking_begins(); }
  void blocking_ends() override { pool_.blocking_ends(); }

 private:
  WorkerPool& pool_;
  BlockingObserver* previous_;
};

WorkerPool::WorkerPool(std::size_t threads, std::size_t heavy_limit, const Clock& clock, std::size_t compute_limit)
    : thread_count_(threads),
      heavy_limit_(std::max<std::size_t>(1, heavy_limit)),
      compute_limit_(compute_limit == 0 ? std::max<std::size_t>(1, threads) : compute_limit),
      clock_(clock) {
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

void WorkerPool::post_work(const std::string& key, std::function<void()> task, std::size_t work) {
  {
    std::lock_guard lock(mu_);
    callers_[key].tasks.push_back({seq_++, std::move(task), work});
    ++queued_;
  }
  cv_.notify_one();
}

void WorkerPool::blocking_begins() {
  {
    std::lock_guard lock(mu_);
    --computing_;
  }
  cv_.notify_one();
}

void WorkerPool::blocking_ends() {
  std::lock_guard lock(mu_);
  ++computing_;
}

bool WorkerPool::may_start(std::size_t work) const {
  if (computing_ >= compute_limit_) return false;
  if (work < kWeighedWork) return true;
  if (heavy_running_ >= heavy_limit_) return false;
  return work_running_ == 0 || work_running_ + work <= heavy_limit_ * kHeavyWork;
}

WorkerPool::Callers::iterator WorkerPool::next_caller() {
  auto best = callers_.end();
  Nanos best_tag = 0;
  for (auto it = callers_.begin(); it != callers_.end(); ++it) {
    const Caller& c = it->second;
    if (c.tasks.empty() || !may_start(c.tasks.front().work)) continue;
    const Nanos tag = std::max(c.tag, virtual_time_);
    if (best == callers_.end() || c.running < best->second.running ||
        (c.running == best->second.running &&
         (tag < best_tag || (tag == best_tag && c.tasks.front().seq < best->second.tasks.front().seq)))) {
      best = it;
      best_tag = tag;
    }
  }
  return best;
}

void WorkerPool::forget_settled_callers() {
  std::erase_if(callers_, [this](const auto& entry) {
    const Caller& c = entry.second;
    return c.tasks.empty() && c.running == 0 && c.tag <= virtual_time_;
  });
}

void WorkerPool::run() {
  const Observer observer(*this);
  std::unique_lock lock(mu_);
  for (;;) {
    auto it = callers_.end();
    cv_.wait(lock, [&] {
      it = next_caller();
      return it != callers_.end() || (stopping_ && queued_ == 0);
    });
    if (it == callers_.end()) return;
    Caller& caller = it->second;
    const Nanos start_tag = std::max(caller.tag, virtual_time_);
    virtual_time_ = start_tag;
    caller.tag = start_tag + caller.last_cost;
    const std::size_t work = caller.tasks.front().work;
    const bool heavy = work >= kWeighedWork;
    std::function<void()> task = std::move(caller.tasks.front().task);
    caller.tasks.pop_front();
    --queued_;
    ++caller.running;
    ++computing_;
    if (heavy) {
      ++heavy_running_;
      work_running_ += work;
    }
    const std::string key = it->first;
    forget_settled_callers();
    if (stopping_ && queued_ == 0) cv_.notify_all();  // threads held back by the limits may end
    lock.unlock();
    const auto started = clock_.now();
    task();
    task = nullptr;
    const Nanos cost = std::chrono::duration_cast<std::chrono::nanoseconds>(clock_.now() - started).count();
    lock.lock();
    Caller& done = callers_[key];
    --done.running;
    --computing_;
    done.last_cost = cost;
    done.tag = std::max(done.tag, start_tag + cost);
    if (heavy) {
      --heavy_running_;
      work_running_ -= work;
      cv_.notify_all();
    }
  }
}

}  // namespace extender::http
