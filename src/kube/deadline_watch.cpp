#include "extender/kube/deadline_watch.h"

#include <utility>

namespace extender::kube {

DeadlineWatch::Registration::~Registration() {
  if (watch_) watch_->end(id_);
}

bool DeadlineWatch::Registration::expired() const {
  if (!watch_) return false;
  std::lock_guard lock(watch_->mu_);
  auto it = watch_->entries_.find(id_);
  return it != watch_->entries_.end() && it->second.expired;
}

DeadlineWatch::~DeadlineWatch() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

DeadlineWatch::Registration DeadlineWatch::watch(TimePoint deadline, std::function<void()> action) {
  std::lock_guard lock(mu_);
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  const std::uint64_t id = next_id_++;
  entries_.emplace(id, Entry{deadline, std::move(action)});
  ++changes_;
  cv_.notify_all();
  return Registration(this, id);
}

void DeadlineWatch::end(std::uint64_t id) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !entries_.at(id).running; });
  entries_.erase(id);
  ++changes_;
  cv_.notify_all();
}

void DeadlineWatch::run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    const TimePoint now = clock_.now();
    TimePoint next = TimePoint::max();
    std::uint64_t due_id = 0;
    bool due = false;
    for (auto& [id, e] : entries_) {
      if (e.due <= now && !due) {
        due = true;
        due_id = id;
      }
      next = std::min(next, e.due);
    }
    if (!due) {
      const std::uint64_t seen = changes_;
      auto woken = [&] { return stop_ || changes_ != seen; };
      if (entries_.empty()) {
        cv_.wait(lock, woken);
      } else {
        clock_.wait(lock, cv_, next, woken);
      }
      continue;
    }
    Entry& e = entries_.at(due_id);
    e.running = true;
    lock.unlock();
    e.action();
    lock.lock();
    e.running = false;
    e.expired = true;
    e.due = clock_.now() + repeat_;
    cv_.notify_all();
  }
}

}  // namespace extender::kube
