#include "extender/server/content_decoding.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>

namespace extender::server {
namespace {

constexpr std::size_t kDeflateMaxRatio = 1032;
constexpr std::size_t kGzipMinSize = 18;  // a 10-byte header, an empty block, the 8-byte trailer

bool has_gzip_magic(std::string_view wire) {
  return wire.size() >= kGzipMinSize && static_cast<unsigned char>(wire[0]) == 0x1f &&
         static_cast<unsigned char>(wire[1]) == 0x8b;
}

struct Inflater {
  z_stream zs{};
  bool ready = false;
  Inflater() { ready = inflateInit2(&zs, 15 + 32) == Z_OK; }
  ~Inflater() {
    if (ready) inflateEnd(&zs);
  }
};

}  // namespace

std::string decoded_too_large(std::size_t limit) {
  return "request body is larger than the limit of " + std::to_string(limit) +
         " bytes (server.max_body_bytes) once decompressed";
}

std::size_t decoded_size_bound(std::string_view coding, std::string_view wire, std::size_t limit) {
  if (coding == "gzip" && has_gzip_magic(wire)) {
    const auto* t = reinterpret_cast<const unsigned char*>(wire.data() + wire.size() - 4);
    const std::uint32_t isize = std::uint32_t{t[0]} | std::uint32_t{t[1]} << 8 | std::uint32_t{t[2]} << 16 |
                                std::uint32_t{t[3]} << 24;
    return std::min<std::size_t>(isize, limit + 1);
  }
  if (wire.size() > (limit + 1) / kDeflateMaxRatio) return limit + 1;
  return std::min(wire.size() * kDeflateMaxRatio, limit + 1);
}

DecodedBody decode_body(std::string_view coding, std::string_view wire, std::size_t limit, BodyBuffers* buffers) {
  DecodedBody out;
  auto failed = [&](int status, std::string message) {
    if (buffers && out.body.capacity() > 0) buffers->release(std::move(out.body));
    out.body = std::string();
    out.status = status;
    out.error = std::move(message);
    return std::move(out);
  };
  const std::size_t bound = decoded_size_bound(coding, wire, limit);
  if (bound > limit && coding == "gzip" && has_gzip_magic(wire)) return failed(413, decoded_too_large(limit));
  const std::size_t room = std::min(bound, limit);
  if (buffers) {
    out.body = buffers->acquire(room + kBodyPadding, room + kBodyPadding);
  } else {
    out.body.reserve(room + kBodyPadding);
  }
  Inflater inflater;
  if (!inflater.ready) return failed(500, "cannot start decompressing the body");
  z_stream& zs = inflater.zs;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(wire.data()));
  zs.avail_in = static_cast<uInt>(wire.size());
  out.body.resize(room);
  std::size_t produced = 0;
  for (;;) {
    char spill = 0;
    const bool full = produced == room;
    zs.next_out = reinterpret_cast<Bytef*>(full ? &spill : out.body.data() + produced);
    zs.avail_out = full ? 1u : static_cast<uInt>(std::min<std::size_t>(room - produced, UINT32_MAX));
    const uInt before = zs.avail_out;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    const std::size_t made = before - zs.avail_out;
    if (full && made > 0) {
      out.body.resize(produced);
      return room >= limit ? failed(413, decoded_too_large(limit))
                           : failed(400, "the " + std::string(coding) + " body decodes to more than its size field says");
    }
    produced += made;
    if (rc == Z_STREAM_END) break;
    if (rc == Z_BUF_ERROR && made == 0) {
      return failed(400, "the " + std::string(coding) + " body ends early");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) return failed(400, "the " + std::string(coding) + " body cannot be decompressed");
  }
  if (zs.avail_in != 0) return failed(400, "data follows the end of the " + std::string(coding) + " body");
  out.body.resize(produced);
  return out;
}

}  // namespace extender::server
