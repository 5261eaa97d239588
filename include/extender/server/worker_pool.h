#pragma once
// WorkerPool: a fixed number of threads running posted tasks in order of arrival. The destructor
// runs every task already posted, then joins. Thread-safe.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "extender/server/body_pool.h"
#include "extender/server/http_message.h"

namespace extender::server {

class WorkerPool {
 public:
  explicit WorkerPool(std::size_t threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void post(std::function<void()> task);

 private:
  void run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// Lanes: the worker pools requests run on (light reads, decisions, binds; kInline runs on the
// caller's thread). serve() runs the handler, hands its answer to `deliver` (an exception becomes
// a 500), then frees what the answer no longer needs (`spent`, then the body, which goes back to
// the BodyPool) and, after a large body, asks the pool's thread to trim the heap. Thread-safe;
// the destructor finishes the requests already posted. The pool must outlive the lanes.
class Lanes {
 public:
  using Deliver = std::function<void(HttpResponse)>;
  Lanes(std::string name, std::size_t light, std::size_t decide, std::size_t bind, BodyPool* bodies)
      : name_(std::move(name)), bodies_(bodies), light_(light), decide_(decide), bind_(bind) {}

  void serve(Lane lane, const Dispatch& dispatch, HttpRequest request, Deliver deliver);

 private:
  std::string name_;
  BodyPool* bodies_;
  WorkerPool light_, decide_, bind_;
};

}  // namespace extender::server
