#include "extender/http/lanes.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>

#include "extender/http/content_decoding.h"

namespace extender::http {

struct Lanes::Job {
  HttpRequest req;
  Deliver deliver;
  const Dispatch* dispatch = nullptr;
  std::size_t charged = 0;  // of the body budget, for what was inflated
};

void Lanes::serve(Lane lane, const Dispatch& dispatch, HttpRequest request, Deliver deliver) {
  WorkerPool& pool = lane == Lane::kBlocking ? blocking_ : lane == Lane::kLight ? light_ : compute_;
  const std::string caller = request.peer_ip;
  // A coded body is weighed by the most its inflating may cost (content_decoding.h).
  std::size_t work = request.body.size();
  if (decode_ && !request.content_coding.empty()) {
    work = std::max(work, decode_work_bound(request.content_coding, request.body, max_body_bytes_));
  }
  auto job = std::make_shared<Job>(Job{std::move(request), std::move(deliver), &dispatch, 0});
  pool.post_work(
      caller, [this, job] { decode_then_handle(job); }, work);
}

void Lanes::decode_then_handle(const std::shared_ptr<Job>& job) {
  HttpRequest& req = job->req;
  if (decode_ && !req.content_coding.empty()) {
    const std::size_t wire = req.body.size();
    // With what the loop holds for the wire bytes, the request is charged as a body of the
    // larger of `bytes` and its wire bytes: both exist while it inflates (at most twice the
    // larger), the wire is released before decoding builds its 1.5 times, so one request that
    // decodes to max_body_bytes stays within a peer's share however well it compressed.
    const DecodeGrowth grow = [&](std::size_t bytes) {
      if (!budget_) return true;
      const std::size_t charge = budget_->charge_for(std::max(bytes, wire)) - budget_->charge_for(wire);
      return budget_->set(req.peer_ip, job->charged, charge) == BodyBudget::Fit::kFits;
    };
    DecodedBody decoded;
    try {
      decoded = decode_body(req.content_coding, req.body, max_body_bytes_, bodies_, grow);
    } catch (const std::exception& e) {
      spdlog::error("{} listener: decoding a body from {} failed: {}", name_, req.remote, e.what());
      decoded = DecodedBody{500, "internal error; see the daemon's log", {}};
    }
    bodies_->release(std::move(req.body));
    req.body = std::move(decoded.body);
    req.content_coding.clear();
    if (decoded.status != 200) {
      finish(job, error_response(decoded.status, decoded.error));
      return;
    }
  }
  handle(job);
}

void Lanes::handle(const std::shared_ptr<Job>& job) {
  HttpResponse res;
  try {
    res = (*job->dispatch)(job->req);
  } catch (const std::exception& e) {
    spdlog::error("{} listener: internal error serving {} {}: {}", name_, job->req.method, job->req.path, e.what());
    res = error_response(500, "internal error; see the daemon's log");
  }
  finish(job, std::move(res));
}

void Lanes::finish(const std::shared_ptr<Job>& job, HttpResponse res) {
  constexpr std::size_t kTrimAbove = 1 << 20;
  HttpRequest& req = job->req;
  const bool large = req.body.capacity() > kTrimAbove;
  std::shared_ptr<const void> spent = std::move(res.spent);
  // Released before the answer goes out, so that a client's next request never meets its last.
  if (budget_) budget_->force(req.peer_ip, job->charged, 0);
  job->deliver(std::move(res));
  spent.reset();
  bodies_->release(std::move(req.body));
  std::string().swap(req.body);
  if (large) bodies_->trim_soon();
}

}  // namespace extender::http
