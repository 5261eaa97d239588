#pragma once
// RequestParser: reads one HTTP/1.1 request from bytes as they arrive, within limits: the head
// (request line and headers) in at most max_head_bytes and max_header_count lines; a body by
// Content-Length or chunked transfer coding, never more than max_body_bytes, and refused before
// it is read when the head already says it is too large or the method takes no body. A body in a
// content coding (gzip, deflate) is kept as sent: the worker decodes it (content_decoding.h); the
// parser only bounds what it may decode to (a gzip body whose size field is over max_body_bytes is
// refused here). Errors carry the status to answer (400, 413, 415, 417,
// 431, 501, 505). Pure: no I/O. One parser per connection; not thread-safe.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "extender/http/server_options.h"

namespace extender::http {

// Spare bytes after every body, so that simdjson can parse it where it lies.
inline constexpr std::size_t kBodyPadding = 64;

struct RequestHead {
  std::string method;
  std::string target;  // as sent: path and query
  int minor_version = 1;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, in order
  std::optional<std::uint64_t> content_length;
  bool chunked = false;
  bool expect_continue = false;
  bool keep_alive = true;
  std::string content_coding;  // "", "gzip" or "deflate"

  // The first value of a header, by lower-case name; nullptr when absent.
  const std::string* header(std::string_view lower_name) const;
};

struct ParseLimits {
  std::size_t max_head_bytes = static_cast<std::size_t>(defaults::kMaxHeaderBytes);
  std::size_t max_header_count = static_cast<std::size_t>(defaults::kMaxHeaderCount);
  std::size_t max_body_bytes = static_cast<std::size_t>(defaults::kMaxBodyBytes);

  static ParseLimits of(const ServerOptions& o) {
    return {static_cast<std::size_t>(o.max_header_bytes), static_cast<std::size_t>(o.max_header_count),
            static_cast<std::size_t>(o.max_body_bytes)};
  }
};

// Where body buffers of a known large length come from and go back to (BodyPool).
class BodyBuffers {
 public:
  virtual ~BodyBuffers() = default;
  // An empty buffer of at least `wanted` bytes when one is kept, else a new one of `fresh`.
  virtual std::string acquire(std::size_t wanted, std::size_t fresh) = 0;
  virtual void release(std::string&& buffer) = 0;
};

class RequestParser {
 public:
  enum class State { kHead, kBody, kComplete, kFailed };

  // buffers: where a body of a Content-Length of at least a MiB is read into (and a body the
  // parser drops goes back to); unset, or smaller bodies: plain allocations. Must outlive it.
  explicit RequestParser(ParseLimits limits, BodyBuffers* buffers = nullptr);
  ~RequestParser();
  RequestParser(const RequestParser&) = delete;
  RequestParser& operator=(const RequestParser&) = delete;

  // Consumes bytes of `data` and returns how many. It stops at the end of the request (what
  // follows belongs to the next one) and on failure.
  std::size_t feed(std::string_view data);

  State state() const { return state_; }
  bool started() const { return started_; }           // a byte of this request has arrived
  const RequestHead& head() const { return head_; }   // from kBody on
  int error_status() const { return error_status_; }  // kFailed
  const std::string& error() const { return error_; }
  // Body bytes received as sent, for rates and deadlines.
  std::uint64_t wire_received() const { return wire_received_; }
  // Bytes held for this request: head and body so far, as sent (a coded body's decoding is
  // charged by the worker that inflates it, as it grows).
  std::size_t held_bytes() const { return head_buf_.size() + body_.size(); }
  // The body as sent (kComplete), with kBodyPadding bytes of spare capacity.
  std::string take_body();
  // Ready for the next request on the same connection.
  void reset();

 private:
  std::size_t feed_head(std::string_view data);
  std::size_t feed_body(std::string_view data);
  std::size_t feed_chunked(std::string_view data);
  // The next line of a chunked body from data[used...], gathered in chunk_line_ across pieces and
  // returned without its line ending; nullopt while incomplete, or after failing past `max` bytes.
  std::optional<std::string_view> take_chunk_line(std::string_view data, std::size_t& used, std::size_t max);
  // Reads a chunk-size line: its data follows, or the trailer for size 0; false after failing.
  bool start_chunk(std::string_view size_line);
  bool parse_head();
  bool append_body(std::string_view wire);
  void complete();
  void fail(int status, std::string message);
  void finish_head();

  void drop_body();

  ParseLimits limits_;
  BodyBuffers* buffers_ = nullptr;
  State state_ = State::kHead;
  bool started_ = false;
  std::string head_buf_;
  std::size_t lines_ = 0;
  RequestHead head_;
  std::string body_;
  std::uint64_t wire_received_ = 0;
  int error_status_ = 0;
  std::string error_;
  enum class Chunk { kSize, kData, kDataEnd, kTrailer };
  Chunk chunk_ = Chunk::kSize;
  std::string chunk_line_;
  std::uint64_t chunk_left_ = 0;
};

}  // namespace extender::http
