#include "extender/http/http_connection.h"

#include <algorithm>

namespace extender::http {
namespace {

constexpr std::chrono::milliseconds kBodyGrace{1000};
constexpr std::size_t kLingerBytes = 1 << 20;
constexpr std::chrono::seconds kLingerTime{1};
constexpr std::string_view kRefusedCertificate =
    "this client certificate is not allowed to call (server.tls.client_names)";

const char* reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Status";
  }
}

std::chrono::milliseconds at_rate(std::uint64_t bytes, std::int64_t rate) {
  return std::chrono::milliseconds(
      static_cast<std::int64_t>(bytes * 1000 / static_cast<std::uint64_t>(std::max<std::int64_t>(1, rate))));
}

}  // namespace

HttpConnection::HttpConnection(const ServerOptions& options, PeerAddress peer, TimePoint now, bool handshaking,
                               BodyBuffers* bodies)
    : options_(options),
      peer_(std::move(peer)),
      parser_(ParseLimits::of(options), bodies),
      phase_(handshaking ? Phase::kHandshake : Phase::kHead),
      phase_since_(now),
      deadline_(now + options.header_timeout) {}

void HttpConnection::set_phase(Phase phase, TimePoint now) {
  phase_ = phase;
  phase_since_ = now;
}

void HttpConnection::handshake_done(std::vector<std::string> client_names, bool refused) {
  client_names_ = std::move(client_names);
  identity_refused_ = refused;
  if (phase_ == Phase::kHandshake) phase_ = Phase::kHead;
}

bool HttpConnection::wants_read() const {
  return phase_ == Phase::kIdle || phase_ == Phase::kHead || phase_ == Phase::kBody || phase_ == Phase::kLinger;
}

void HttpConnection::on_bytes(std::string_view data, TimePoint now) {
  if (phase_ == Phase::kLinger) {
    lingered_ += data.size();
    if (lingered_ > kLingerBytes) close();
    return;
  }
  if (!wants_read()) {
    if (phase_ == Phase::kDispatched || phase_ == Phase::kWriting) pending_in_.append(data);
    return;
  }
  if (phase_ == Phase::kIdle) {
    set_phase(Phase::kHead, now);
    deadline_ = now + options_.header_timeout;
  }
  const std::size_t used = parser_.feed(data);
  if (identity_refused_ && parser_.state() != RequestParser::State::kHead) {
    fail(403, kRefusedCertificate, now);
    return;
  }
  if (admit_ && !admit_(parser_.held_bytes())) {
    fail(503, "the server holds too many request bodies at once; retry", now);
    return;
  }
  switch (parser_.state()) {
    case RequestParser::State::kHead: return;
    case RequestParser::State::kBody: reading_body(now); return;
    case RequestParser::State::kComplete:
      if (used < data.size()) pending_in_.append(data.substr(used));
      dispatch(now);
      return;
    case RequestParser::State::kFailed: fail(parser_.error_status(), parser_.error(), now); return;
  }
}

void HttpConnection::reading_body(TimePoint now) {
  const RequestHead& head = parser_.head();
  if (phase_ == Phase::kHead) {
    set_phase(Phase::kBody, now);
    if (head.expect_continue && !continue_sent_ && head.minor_version >= 1) {
      continue_sent_ = true;
      out_head_ = "HTTP/1.1 100 Continue\r\n\r\n";
      out_body_.clear();
      out_off_ = 0;
    }
  }
  deadline_ = phase_since_ + options_.read_timeout + at_rate(parser_.wire_received(), options_.min_body_rate);
}

void HttpConnection::dispatch(TimePoint now) {
  const RequestHead& head = parser_.head();
  HttpRequest req;
  req.method = head.method;
  req.path = head.target.substr(0, head.target.find('?'));
  if (const auto q = head.target.find('?'); q != std::string::npos) req.query = head.target.substr(q + 1);
  req.body = parser_.take_body();
  req.content_coding = head.content_coding;
  if (const std::string* type = head.header("content-type")) req.content_type = *type;
  req.remote = peer_.remote();
  req.peer_ip = peer_.ip;
  req.peer_loopback = peer_.loopback;
  req.client_names = client_names_;
  req.queued_at = now;
  head_only_ = head.method == "HEAD";
  close_after_ = !head.keep_alive || served_ + 1 >= options_.keep_alive_max_requests || draining_;
  ready_ = std::move(req);
  set_phase(Phase::kDispatched, now);
}

std::optional<HttpRequest> HttpConnection::take_request() {
  std::optional<HttpRequest> out = std::move(ready_);
  ready_.reset();
  return out;
}

void HttpConnection::respond(HttpResponse response, TimePoint now) {
  if (phase_ != Phase::kDispatched) return;
  start_answer(std::move(response), now);
}

void HttpConnection::fail(int status, std::string_view message, TimePoint now) {
  if (phase_ == Phase::kWriting || phase_ == Phase::kLinger || phase_ == Phase::kClosed) return;
  HttpResponse res = error_response(status, message);
  parser_.reset();
  ready_.reset();
  close_after_ = true;
  head_only_ = false;
  start_answer(std::move(res), now);
}

void HttpConnection::drain() {
  draining_ = true;
  if (quiet()) close();
}

void HttpConnection::start_answer(HttpResponse res, TimePoint now) {
  if (res.close) close_after_ = true;
  std::string h;
  if (has_output()) h = std::string(output()[0]);
  h += "HTTP/1.1 ";
  h += std::to_string(res.status);
  h += ' ';
  h += reason_phrase(res.status);
  h += "\r\nContent-Type: ";
  h += res.content_type;
  h += "\r\nContent-Length: ";
  h += std::to_string(res.body.size());
  for (const auto& [k, v] : res.headers) {
    h += "\r\n";
    h += k;
    h += ": ";
    h += v;
  }
  h += close_after_ ? "\r\nConnection: close\r\n\r\n" : "\r\nConnection: keep-alive\r\n\r\n";
  out_head_ = std::move(h);
  out_body_ = head_only_ ? std::string() : std::move(res.body);
  out_off_ = 0;
  set_phase(Phase::kWriting, now);
  deadline_ = now + options_.write_timeout + at_rate(out_head_.size() + out_body_.size(), options_.min_body_rate);
}

std::vector<std::string_view> HttpConnection::output() const {
  std::vector<std::string_view> out;
  if (out_off_ < out_head_.size()) {
    out.emplace_back(std::string_view(out_head_).substr(out_off_));
    out.emplace_back(out_body_);
  } else {
    out.emplace_back(std::string_view(out_body_).substr(std::min(out_body_.size(), out_off_ - out_head_.size())));
  }
  return out;
}

void HttpConnection::wrote(std::size_t bytes, TimePoint now) {
  out_off_ = std::min(out_off_ + bytes, out_head_.size() + out_body_.size());
  if (has_output()) return;
  if (phase_ == Phase::kWriting) {
    finish_answer(now);
    return;
  }
  std::string().swap(out_head_);
  out_off_ = 0;
}

void HttpConnection::finish_answer(TimePoint now) {
  std::string().swap(out_head_);
  std::string().swap(out_body_);
  out_off_ = 0;
  parser_.reset();
  if (close_after_ || draining_) {
    shutdown_due_ = true;
    std::string().swap(pending_in_);
    set_phase(Phase::kLinger, now);
    deadline_ = now + kLingerTime;
    return;
  }
  ++served_;
  continue_sent_ = false;
  set_phase(Phase::kIdle, now);
  deadline_ = now + options_.keep_alive_timeout;
  if (!pending_in_.empty()) {
    std::string pending;
    pending.swap(pending_in_);
    on_bytes(pending, now);
  }
}

TimePoint HttpConnection::deadline() const {
  if (phase_ == Phase::kDispatched || phase_ == Phase::kClosed) return TimePoint::max();
  return deadline_;
}

void HttpConnection::on_deadline(TimePoint now) {
  if (now < deadline()) return;
  switch (phase_) {
    case Phase::kHead:
      if (parser_.started()) {
        fail(408, "the request head did not arrive within server.header_timeout", now);
      } else {
        close();
      }
      return;
    case Phase::kBody:
      fail(408, "the request body did not arrive in time (server.read_timeout, server.min_body_rate)", now);
      return;
    default: close();
  }
}

bool HttpConnection::quiet() const {
  return phase_ == Phase::kIdle || phase_ == Phase::kHandshake || (phase_ == Phase::kHead && !parser_.started());
}

bool HttpConnection::evictable(TimePoint now) const {
  if (phase_ == Phase::kHandshake || phase_ == Phase::kIdle || phase_ == Phase::kHead || phase_ == Phase::kLinger) {
    return true;
  }
  return below_rate(now);
}

bool HttpConnection::below_rate(TimePoint now) const {
  if (phase_ != Phase::kBody && phase_ != Phase::kWriting) return false;
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now - phase_since_);
  if (elapsed < kBodyGrace) return false;
  const std::uint64_t moved = phase_ == Phase::kBody ? parser_.wire_received() : out_off_;
  return moved * 1000 <
         static_cast<std::uint64_t>(options_.min_body_rate) * static_cast<std::uint64_t>(elapsed.count());
}

}  // namespace extender::http
