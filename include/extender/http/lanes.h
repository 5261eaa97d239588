#pragma once
// Lanes: the worker pools requests run on (Lane: kLight, kCompute, kBlocking; kInline runs on the
// caller's thread), each fair between peers (WorkerPool, keyed by the request's peer address). A
// request's work is its body as sent, or for a coded body the most it may decode to (its gzip size
// field, which decoding enforces, else deflate's largest ratio), so what a request costs follows
// its decoded size (WorkerPool weighs work from kWeighedWork up). serve() decodes a coded body on the worker
// (content_decoding.h: 400, 413 or 503 without calling the handler when it cannot), charging what it has inflated so
// far to the request's peer in `budget` (when given) until the answer is delivered (`decode` false: the handler gets
// the body as sent, its coding named), runs the handler, hands its answer to `deliver` (an exception becomes a 500),
// then frees what the answer no longer needs (`spent`, then the body, which goes back to the BodyPool) and, after a
// large body, asks the pool's thread to trim the heap. Thread-safe; the destructor finishes the requests already
// posted. The pool and `clock` (which times each job's cost) must outlive the lanes.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "extender/common/clock.h"
#include "extender/http/body_budget.h"
#include "extender/http/body_pool.h"
#include "extender/http/http_message.h"
#include "extender/http/worker_pool.h"

namespace extender::http {

class Lanes {
 public:
  using Deliver = std::function<void(HttpResponse)>;
  // `computing`: how many kCompute tasks compute at once (WorkerPool's compute limit; 0: all).
  Lanes(std::string name, std::size_t light, std::size_t compute, std::size_t blocking, std::size_t max_body_bytes,
        BodyPool* bodies, BodyBudget* budget = nullptr, bool decode = true, const Clock& clock = steady_clock(),
        std::size_t computing = 0)
      : name_(std::move(name)),
        max_body_bytes_(max_body_bytes),
        bodies_(bodies),
        budget_(budget),
        decode_(decode),
        light_(light, clock),
        compute_(compute, WorkerPool::default_heavy_limit(compute, usable_cpus()), clock, computing),
        blocking_(blocking, clock) {}

  void serve(Lane lane, const Dispatch& dispatch, HttpRequest request, Deliver deliver);

 private:
  struct Job;
  void decode_then_handle(const std::shared_ptr<Job>& job);  // on a worker
  void handle(const std::shared_ptr<Job>& job);
  void finish(const std::shared_ptr<Job>& job, HttpResponse response);

  std::string name_;
  std::size_t max_body_bytes_;
  BodyPool* bodies_;
  BodyBudget* budget_;
  bool decode_;
  WorkerPool light_, compute_, blocking_;
};

}  // namespace extender::http
