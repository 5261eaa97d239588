#include "extender/server/lanes.h"

#include <spdlog/spdlog.h>

#include "extender/server/content_decoding.h"
#include "extender/wire/results.h"

namespace extender::server {

void Lanes::serve(Lane lane, const Dispatch& dispatch, HttpRequest request, Deliver deliver) {
  constexpr std::size_t kTrimAbove = 1 << 20;
  WorkerPool& pool = lane == Lane::kBind ? bind_ : lane == Lane::kLight ? light_ : decide_;
  constexpr std::size_t kHeavyBody = 1 << 20;
  const std::string caller = request.peer_ip;
  const bool heavy = request.body.size() >= kHeavyBody || request.decoded_bound >= kHeavyBody;
  pool.post(caller, [this, &dispatch, req = std::move(request), deliver = std::move(deliver)]() mutable {
    HttpResponse res;
    try {
      if (!req.content_coding.empty()) {
        DecodedBody decoded = decode_body(req.content_coding, req.body, max_body_bytes_, bodies_);
        bodies_->release(std::move(req.body));
        req.body = std::move(decoded.body);
        req.content_coding.clear();
        if (decoded.status != 200) {
          res.status = decoded.status;
          res.body = wire::encode_request_error(decoded.error);
        }
      }
      if (res.status == 200) res = dispatch(req);
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
  }, heavy);
}

}  // namespace extender::server
