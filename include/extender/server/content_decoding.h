#pragma once
// Content decoding of a request body sent with `Content-Encoding: gzip` (or x-gzip) or `deflate`.
// The event loop only reads the coded bytes; a worker decodes them before the handler runs, so
// one client's inflating never holds the loop that reads and writes for every other client.
// decoded_size_bound() is what the loop charges the body budget for before the request is queued;
// decode_body() never produces more than that bound. Pure (zlib, no I/O, no shared state):
// thread-safe.
#include <cstddef>
#include <string>
#include <string_view>

#include "extender/server/request_parser.h"

namespace extender::server {

// The most a complete body of `wire` bytes in `coding` ("gzip" or "deflate") may decode to:
// a gzip body's own size field (its last 4 bytes, which zlib checks against what it inflated;
// a gzip body whose size field is over `limit` is refused 413 without decoding it),
// else 1032 bytes for each byte sent (deflate's largest ratio); at most `limit` + 1, which
// stands for "over the limit".
std::size_t decoded_size_bound(std::string_view coding, std::string_view wire, std::size_t limit);

// The 413 message of a body over `limit` once decoded.
std::string decoded_too_large(std::size_t limit);

struct DecodedBody {
  int status = 200;     // 400 (corrupt, truncated, or longer than its size field) or 413 (over `limit`)
  std::string error;    // for the client, when status is not 200
  std::string body;     // with kBodyPadding spare capacity
};

// Decodes a complete coded body into a buffer of `buffers` (when given; else a new allocation).
DecodedBody decode_body(std::string_view coding, std::string_view wire, std::size_t limit,
                        BodyBuffers* buffers = nullptr);

}  // namespace extender::server
