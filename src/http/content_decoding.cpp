#include "extender/http/content_decoding.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <optional>

namespace extender::http {
namespace {

constexpr std::size_t kGzipMinSize = 18;  // a 10-byte header, an empty block, the 8-byte trailer
constexpr std::size_t kFirstRoom = 64 * 1024;
constexpr std::size_t kDeflateMaxRatio = 1032;

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

// The next size of the decoded buffer: double, from what the wire bytes would fill at a ratio
// of 4, at most `limit`.
std::size_t next_room(std::size_t room, std::size_t wire, std::size_t limit) {
  if (room == 0) return std::min(limit, std::max(kFirstRoom, std::min(wire, limit) * 4));
  return room > limit / 2 ? limit : room * 2;
}

}  // namespace

std::string decoded_too_large(std::size_t limit) {
  return "request body is larger than the limit of " + std::to_string(limit) +
         " bytes (server.max_body_bytes) once decompressed";
}

static std::optional<std::uint32_t> size_field(std::string_view coding, std::string_view wire) {
  if (coding != "gzip" || !has_gzip_magic(wire)) return std::nullopt;
  const auto* t = reinterpret_cast<const unsigned char*>(wire.data() + wire.size() - 4);
  return std::uint32_t{t[0]} | std::uint32_t{t[1]} << 8 | std::uint32_t{t[2]} << 16 | std::uint32_t{t[3]} << 24;
}

bool size_field_over(std::string_view coding, std::string_view wire, std::size_t limit) {
  const auto isize = size_field(coding, wire);
  return isize && *isize > limit;
}

std::size_t decode_work_bound(std::string_view coding, std::string_view wire, std::size_t limit) {
  if (const auto isize = size_field(coding, wire)) return std::min<std::size_t>(*isize, limit);
  if (wire.size() > limit / kDeflateMaxRatio) return limit;
  return std::min(wire.size() * kDeflateMaxRatio, limit);
}

DecodedBody decode_body(std::string_view coding, std::string_view wire, std::size_t limit, BodyBuffers* buffers,
                        const DecodeGrowth& grow) {
  DecodedBody out;
  auto failed = [&](int status, std::string message) {
    if (buffers && out.body.capacity() > 0) buffers->release(std::move(out.body));
    out.body = std::string();
    out.status = status;
    out.error = std::move(message);
    return std::move(out);
  };
  const std::string what = "the " + std::string(coding) + " body";
  if (size_field_over(coding, wire, limit)) return failed(413, decoded_too_large(limit));
  const auto claimed = size_field(coding, wire);
  Inflater inflater;
  if (!inflater.ready) return failed(500, "cannot start decompressing the body");
  z_stream& zs = inflater.zs;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(wire.data()));
  zs.avail_in = static_cast<uInt>(wire.size());
  std::size_t room = 0;
  std::size_t produced = 0;
  for (;;) {
    char spill = 0;
    if (produced == room && room < limit) {
      const std::size_t next = next_room(room, wire.size(), limit);
      if (grow && !grow(next)) return failed(503, "the server holds too many request bodies at once; retry");
      std::string bigger = buffers ? buffers->acquire(next + kBodyPadding, next + kBodyPadding) : std::string();
      bigger.reserve(next + kBodyPadding);
      bigger.assign(out.body, 0, produced);
      bigger.resize(next);
      if (buffers && out.body.capacity() > 0) buffers->release(std::move(out.body));
      out.body = std::move(bigger);
      room = next;
    }
    const bool full = produced == room;
    zs.next_out = reinterpret_cast<Bytef*>(full ? &spill : out.body.data() + produced);
    zs.avail_out = full ? 1u : static_cast<uInt>(std::min<std::size_t>(room - produced, UINT32_MAX));
    const uInt before = zs.avail_out;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    const std::size_t made = before - zs.avail_out;
    if (full && made > 0) return failed(413, decoded_too_large(limit));
    produced += made;
    if (claimed && limit <= UINT32_MAX && produced > *claimed) {
      return failed(400, what + " decodes to more than its size field says");
    }
    if (rc == Z_STREAM_END) break;
    if (rc == Z_BUF_ERROR && made == 0 && !(produced == room && room < limit)) return failed(400, what + " ends early");
    if (rc != Z_OK && rc != Z_BUF_ERROR) return failed(400, what + " cannot be decompressed");
  }
  if (zs.avail_in != 0) return failed(400, "data follows the end of " + what);
  out.body.resize(produced);
  return out;
}

}  // namespace extender::http
