#pragma once
// Content decoding of a request body sent with `Content-Encoding: gzip` (or x-gzip) or `deflate`.
// The event loop only reads the coded bytes; a worker decodes them before the handler runs, so
// one client's inflating never holds the loop that reads and writes for every other client.
// Nothing is sized from what a body claims: the decoded buffer grows as bytes come out of zlib,
// each growth asked of `grow` first (the body budget charges what exists, not a size field), and
// inflating stops at `limit` with 413, or with 400 once a gzip body passes its own size field. Pure (zlib, no I/O, no
// shared state): thread-safe.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "extender/http/request_parser.h"

namespace extender::http {

// A complete gzip body whose size field (its last 4 bytes) says more than `limit`: a body within
// the limit cannot have one, so it is refused 413 before a byte is inflated. Never a charge.
bool size_field_over(std::string_view coding, std::string_view wire, std::size_t limit);

// The most work inflating a complete body may take, in decoded bytes, for scheduling it (never
// for memory): a gzip body's size field (decode_body stops with 400 once a body inflates past
// it, so a body that claims little cannot cost more), else 1032 bytes for each byte sent
// (deflate's largest ratio); at most `limit`.
std::size_t decode_work_bound(std::string_view coding, std::string_view wire, std::size_t limit);

// The 413 message of a body over `limit` once decoded.
std::string decoded_too_large(std::size_t limit);

struct DecodedBody {
  int status = 200;   // 400 (corrupt, truncated, trailing data), 413 (over `limit`), 503 (no room)
  std::string error;  // for the client, when status is not 200
  std::string body;   // with kBodyPadding spare capacity
};

// Asked before the decoded body's buffer grows to `bytes`; false stops decoding with 503.
using DecodeGrowth = std::function<bool(std::size_t bytes)>;

// Decodes a complete coded body into a buffer of `buffers` (when given; else a new allocation).
DecodedBody decode_body(std::string_view coding, std::string_view wire, std::size_t limit,
                        BodyBuffers* buffers = nullptr, const DecodeGrowth& grow = {});

}  // namespace extender::http
