#pragma once
// HttpConnection: the HTTP/1.1 side of one connection, with no system calls. It is driven by the
// bytes read from the wire (on_bytes) and by the time, always passed in; it hands out complete
// requests (take_request), takes their answers (respond), holds the bytes to send (output,
// wrote) and says what it waits for (wants_read, has_output), when it must stop sending
// (take_shutdown: the answer that closes it is out, now linger) and when it is done (closed). Its
// deadline() is when on_deadline() is to be called: a head within header_timeout of its first
// byte (or of the connection), a body within read_timeout plus its wire bytes received so far at
// min_body_rate, an answer within write_timeout plus its size at that rate, keep_alive_timeout
// idle. Requests pipelined behind one wait until its answer is sent. A malformed head or body is
// answered with its status (400, 413, 431, ...) and the connection closed after it.
// Owns its parser and buffers; one thread at a time, not thread-safe.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "extender/common/clock.h"
#include "extender/http/http_message.h"
#include "extender/http/request_parser.h"
#include "extender/http/server_options.h"

namespace extender::http {

class HttpConnection {
 public:
  // Asked once the bytes a request holds grow; false refuses the request with 503.
  using Admit = std::function<bool(std::size_t held_bytes)>;

  enum class Phase { kHandshake, kIdle, kHead, kBody, kDispatched, kWriting, kLinger, kClosed };

  // handshaking: the transport completes a handshake before any byte (handshake_done()).
  // bodies: where large bodies are read into (must outlive the connection); unset: plain memory.
  HttpConnection(const ServerOptions& options, PeerAddress peer, TimePoint now, bool handshaking = false,
                 BodyBuffers* bodies = nullptr);

  // The handshake completed; refused: the client certificate is not allowed (403 at its head).
  void handshake_done(std::vector<std::string> client_names, bool refused);
  // Asked whenever a request's bytes grow (unset: always admitted).
  void set_admit(Admit admit) { admit_ = std::move(admit); }
  // Bytes read from the peer; what follows a complete request waits for its answer.
  void on_bytes(std::string_view data, TimePoint now);
  // The next complete request, once (the connection is kDispatched until respond()).
  std::optional<HttpRequest> take_request();
  void respond(HttpResponse response, TimePoint now);
  // Answers status with a JSON error and closes after it (any phase before kWriting).
  void fail(int status, std::string_view message, TimePoint now);
  // Close after the answer in progress (or now, when idle): the server is stopping.
  void drain();
  // Closes at once.
  void close() { set_phase(Phase::kClosed, phase_since_); }

  bool wants_read() const;
  bool has_output() const { return out_off_ < out_head_.size() + out_body_.size(); }
  // The unsent bytes, in order (some may be empty).
  std::vector<std::string_view> output() const;
  void wrote(std::size_t bytes, TimePoint now);
  // True once when the answer that ends the connection is sent: the transport stops sending.
  bool take_shutdown() { return std::exchange(shutdown_due_, false); }
  bool closed() const { return phase_ == Phase::kClosed; }

  // When on_deadline() must run; TimePoint::max() when there is none (a request being handled).
  TimePoint deadline() const;
  // Past the deadline: answers 408 to a head or body that started, else closes.
  void on_deadline(TimePoint now);

  Phase phase() const { return phase_; }
  TimePoint phase_since() const { return phase_since_; }
  // Idle, handshaking, or not yet a byte of the next request: nothing lost if closed to stop.
  bool quiet() const;
  // Quiet, or moving a body or answer below min_body_rate: may be closed to make room.
  bool evictable(TimePoint now) const;
  // Moving a body (wire bytes) or an answer below min_body_rate since it began (after a grace).
  bool below_rate(TimePoint now) const;
  // Bytes held for the request being read (RequestParser::held_bytes).
  std::size_t held_bytes() const { return parser_.held_bytes(); }
  // Bytes of the answer not yet sent.
  std::size_t unsent() const { return out_head_.size() + out_body_.size() - out_off_; }
  const PeerAddress& peer() const { return peer_; }
  int served() const { return served_; }

 private:
  void set_phase(Phase phase, TimePoint now);
  // The head is in and the body is arriving: sends 100 Continue once if asked, moves the deadline.
  void reading_body(TimePoint now);
  // The request is whole: it becomes the one take_request() returns.
  void dispatch(TimePoint now);
  void start_answer(HttpResponse response, TimePoint now);
  void finish_answer(TimePoint now);

  const ServerOptions& options_;
  Admit admit_;
  PeerAddress peer_;
  RequestParser parser_;
  Phase phase_;
  TimePoint phase_since_;
  TimePoint deadline_;
  std::string pending_in_;
  std::optional<HttpRequest> ready_;
  std::string out_head_;
  std::string out_body_;
  std::size_t out_off_ = 0;
  bool close_after_ = false;
  bool head_only_ = false;
  bool continue_sent_ = false;
  bool draining_ = false;
  bool shutdown_due_ = false;
  bool identity_refused_ = false;
  int served_ = 0;
  std::size_t lingered_ = 0;
  std::vector<std::string> client_names_;
};

}  // namespace extender::http
