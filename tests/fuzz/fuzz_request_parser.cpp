// The HTTP/1.1 request parser, the first code every client reaches: any bytes, fed whole and in
// pieces (the first input byte seeds where they are cut), must end the same way; a complete body
// in a content coding is then decoded as a worker decodes it.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "extender/http/content_decoding.h"
#include "extender/http/request_parser.h"

namespace {

using extender::http::decode_body;
using extender::http::ParseLimits;
using extender::http::RequestParser;

struct Outcome {
  RequestParser::State state;
  int status;
  std::string body;
  std::size_t consumed;
  bool operator==(const Outcome&) const = default;
};

Outcome parse(std::string_view wire, std::uint8_t seed) {
  ParseLimits limits;
  limits.max_head_bytes = 1024;
  limits.max_header_count = 16;
  limits.max_body_bytes = 4096;
  RequestParser parser(limits);
  std::size_t consumed = 0;
  std::uint32_t rng = seed;
  while (!wire.empty()) {
    std::size_t piece = wire.size();
    if (seed != 0) {
      rng = rng * 1103515245u + 12345u;
      piece = 1 + (rng >> 16) % 17;
      if (piece > wire.size()) piece = wire.size();
    }
    const std::size_t used = parser.feed(wire.substr(0, piece));
    consumed += used;
    wire.remove_prefix(used);
    const auto state = parser.state();
    if (state == RequestParser::State::kFailed) return {state, parser.error_status(), "", 0};
    if (state == RequestParser::State::kComplete) {
      std::string body = parser.take_body();
      const std::string coding = parser.head().content_coding;
      if (coding.empty()) return {state, 0, std::move(body), consumed};
      auto decoded = decode_body(coding, body, limits.max_body_bytes);
      if (decoded.body.size() > limits.max_body_bytes) __builtin_trap();
      return {state, decoded.status, std::move(decoded.body), consumed};
    }
    if (used == 0) break;
  }
  return {parser.state(), 0, "", 0};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view wire(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Outcome whole = parse(wire, 0);
  const Outcome pieces = parse(wire, data[0] == 0 ? 1 : data[0]);
  if (!(whole == pieces)) __builtin_trap();
  return 0;
}
