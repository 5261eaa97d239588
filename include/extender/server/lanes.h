#pragma once
// Lanes: the worker pools requests run on (light reads, decisions, binds; kInline runs on the
// caller's thread), each fair between peers (WorkerPool, keyed by the request's peer address); a
// request with a body of a MiB or more (or one that may decode to a MiB or more) is heavy (it
// leaves one thread of its lane to the others). serve() decodes a coded body on the worker
// (content_decoding.h: 400 or 413 without calling the handler when it cannot), runs the handler, hands its answer to `deliver` (an exception becomes a 500), then frees
// what the answer no longer needs (`spent`, then the body, which goes back to the BodyPool) and,
// after a large body, asks the pool's thread to trim the heap. Thread-safe; the destructor
// finishes the requests already posted. The pool must outlive the lanes.
#include <cstddef>
#include <functional>
#include <string>
#include <utility>

#include "extender/server/body_pool.h"
#include "extender/server/http_message.h"
#include "extender/server/worker_pool.h"

namespace extender::server {

class Lanes {
 public:
  using Deliver = std::function<void(HttpResponse)>;
  Lanes(std::string name, std::size_t light, std::size_t decide, std::size_t bind, std::size_t max_body_bytes,
        BodyPool* bodies)
      : name_(std::move(name)),
        max_body_bytes_(max_body_bytes),
        bodies_(bodies),
        light_(light),
        decide_(decide),
        bind_(bind) {}

  void serve(Lane lane, const Dispatch& dispatch, HttpRequest request, Deliver deliver);

 private:
  std::string name_;
  std::size_t max_body_bytes_;
  BodyPool* bodies_;
  WorkerPool light_, decide_, bind_;
};

}  // namespace extender::server
