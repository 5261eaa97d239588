#pragma once
// DeadlineWatch: one thread that acts on calls that run past their deadline. A call registers its
// deadline and an action (ApiClient: stop the call's connection, which makes its blocked read or
// write fail at once); once the deadline has passed the action runs, and again every `repeat`
// while the registration lasts (a connection opened after the first stop is stopped too). A
// Registration ends when destroyed; its destructor waits for a running action of its, so the
// action never touches what the caller frees next. Thread-safe; the thread starts with the first
// registration and ends with the watch.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "extender/common/clock.h"

namespace extender::kube {

class DeadlineWatch {
 public:
  class [[nodiscard]] Registration {
   public:
    Registration(Registration&& other) noexcept : watch_(std::exchange(other.watch_, nullptr)), id_(other.id_) {}
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    Registration& operator=(Registration&&) = delete;
    ~Registration();
    // Whether the action has run (the call was stopped for its deadline).
    bool expired() const;

   private:
    friend class DeadlineWatch;
    Registration(DeadlineWatch* watch, std::uint64_t id) : watch_(watch), id_(id) {}
    DeadlineWatch* watch_;
    std::uint64_t id_;
  };

  // `clock`: the deadlines' clock.
  explicit DeadlineWatch(std::chrono::milliseconds repeat = std::chrono::milliseconds(50),
                         const Clock& clock = steady_clock())
      : repeat_(repeat), clock_(clock) {}
  ~DeadlineWatch();
  DeadlineWatch(const DeadlineWatch&) = delete;
  DeadlineWatch& operator=(const DeadlineWatch&) = delete;

  Registration watch(TimePoint deadline, std::function<void()> action);

 private:
  struct Entry {
    TimePoint due;
    std::function<void()> action;
    bool running = false;
    bool expired = false;
  };
  void run();
  void end(std::uint64_t id);

  const std::chrono::milliseconds repeat_;
  const Clock& clock_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::uint64_t, Entry> entries_;
  std::uint64_t next_id_ = 0;
  std::uint64_t changes_ = 0;  // registrations made or ended, to wake the thread
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace extender::kube
