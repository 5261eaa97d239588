#include "extender/http/body_pool.h"

#include <malloc.h>

#include <algorithm>

namespace extender::http {

BodyPool::BodyPool(std::size_t max_buffers, std::size_t max_bytes)
    : max_buffers_(max_buffers), max_bytes_(max_bytes), trimmer_([this] { trim_loop(); }) {}

BodyPool::~BodyPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  trim_cv_.notify_all();
  trimmer_.join();
}

std::string BodyPool::acquire(std::size_t wanted, std::size_t fresh_capacity) {
  {
    std::lock_guard lock(mu_);
    auto best = kept_.end();
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->capacity() >= wanted && (best == kept_.end() || it->capacity() < best->capacity())) best = it;
    }
    if (best != kept_.end()) {
      std::string out = std::move(*best);
      kept_.erase(best);
      kept_bytes_ -= out.capacity();
      out.clear();
      return out;
    }
  }
  std::string fresh;
  fresh.reserve(fresh_capacity);
  return fresh;
}

void BodyPool::release(std::string&& buffer) {
  std::string mine = std::move(buffer);
  const std::size_t capacity = mine.capacity();
  if (capacity < kMinPooled) return;
  std::lock_guard lock(mu_);
  if (kept_.size() >= max_buffers_ || kept_bytes_ + capacity > max_bytes_) return;
  mine.clear();
  kept_bytes_ += capacity;
  kept_.push_back(std::move(mine));
}

void BodyPool::trim_soon() {
  {
    std::lock_guard lock(mu_);
    trim_due_ = true;
  }
  trim_cv_.notify_one();
}

void BodyPool::trim_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    trim_cv_.wait(lock, [this] { return trim_due_ || stopping_; });
    if (stopping_) return;
    trim_due_ = false;
    lock.unlock();
    malloc_trim(0);
    lock.lock();
    ++trims_;
  }
}

std::size_t BodyPool::kept() const {
  std::lock_guard lock(mu_);
  return kept_.size();
}

std::size_t BodyPool::kept_bytes() const {
  std::lock_guard lock(mu_);
  return kept_bytes_;
}

std::uint64_t BodyPool::trims() const {
  std::lock_guard lock(mu_);
  return trims_;
}

}  // namespace extender::http
