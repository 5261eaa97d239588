// The HTTP/1.1 connection state machine: any bytes, fed whole and in pieces (the first input byte
// seeds where they are cut), with each request answered at once, must give the same requests and
// the same bytes back (but for the 100 Continue that only a body arriving later earns).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "extender/http/http_connection.h"

namespace {

using extender::TimePoint;
using extender::http::HttpConnection;
using extender::http::HttpResponse;
using extender::http::PeerAddress;
using extender::http::ServerOptions;

struct Outcome {
  std::vector<std::string> requests;
  std::string sent;
  bool operator==(const Outcome&) const = default;
};

void serve(HttpConnection& http, Outcome& out, TimePoint now) {
  for (int guard = 0; guard < 1000; ++guard) {
    while (http.has_output()) {
      std::size_t n = 0;
      for (std::string_view part : http.output()) {
        out.sent.append(part);
        n += part.size();
      }
      http.wrote(n, now);
    }
    auto req = http.take_request();
    if (!req) return;
    out.requests.push_back(req->method + " " + req->path + " " + req->body);
    HttpResponse res;
    res.body = std::to_string(out.requests.size());
    http.respond(std::move(res), now);
  }
}

Outcome run(std::string_view wire, std::uint8_t seed) {
  ServerOptions options;
  options.max_header_bytes = 1024;
  options.max_header_count = 16;
  options.max_body_bytes = 4096;
  options.keep_alive_max_requests = 8;
  const TimePoint now{};
  HttpConnection http(options, PeerAddress{"192.0.2.1", 1, false}, now);
  Outcome out;
  std::uint32_t rng = seed;
  while (!wire.empty() && http.wants_read()) {
    std::size_t piece = wire.size();
    if (seed != 0) {
      rng = rng * 1103515245u + 12345u;
      piece = std::min<std::size_t>(wire.size(), 1 + (rng >> 16) % 17);
    }
    http.on_bytes(wire.substr(0, piece), now);
    wire.remove_prefix(piece);
    serve(http, out, now);
  }
  constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  for (std::size_t at; (at = out.sent.find(kContinue)) != std::string::npos;) out.sent.erase(at, kContinue.size());
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view wire(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Outcome whole = run(wire, 0);
  const Outcome pieces = run(wire, data[0] == 0 ? 1 : data[0]);
  if (!(whole == pieces)) __builtin_trap();
  return 0;
}
