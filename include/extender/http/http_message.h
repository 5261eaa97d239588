#pragma once
// PeerAddress, HttpRequest and HttpResponse: what the listener hands a handler and what it writes back, and the
// handler's signature (Dispatch) and worker lane (Lane), and the layer's own error answer
// (error_response). Plain value types; no I/O.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "extender/common/clock.h"

namespace extender::http {

// Where a connection comes from. loopback: 127.0.0.1, ::1 or ::ffff:127.0.0.1 (not the rest of
// 127.0.0.0/8, where mesh sidecars forward from).
struct PeerAddress {
  std::string ip;
  int port = 0;
  bool loopback = false;
  // "ip:port", "[ip6]:port" for logs.
  std::string remote() const {
    return (ip.find(':') != std::string::npos ? "[" + ip + "]" : ip) + ":" + std::to_string(port);
  }
};

struct HttpRequest {
  std::string method;
  std::string path;   // without the query
  std::string query;  // after the "?", as sent (not decoded); "" when none
  std::string body;   // with kBodyPadding spare capacity (see request_parser.h)
  // "gzip" or "deflate" while the body is still as sent: Lanes decodes it before the handler
  // runs (content_decoding.h), so handlers always see "" (unless the listener keeps codings:
  // ListenerOptions::decode_content).
  std::string content_coding;
  std::string content_type;  // as sent, "" when absent
  std::string remote;        // address:port, for logs
  std::string peer_ip;
  bool peer_loopback = false;             // 127.0.0.1, ::1 or ::ffff:127.0.0.1
  std::vector<std::string> client_names;  // from a verified TLS client certificate
  // When the complete request was queued for a worker; the request deadline counts from here
  // (time spent waiting for a worker is the caller's time too). Unset: when it is handled.
  TimePoint queued_at{};
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  // Close the connection after this answer ("Connection: close"), so the client's next request
  // opens a new one (through a Service, perhaps to another replica).
  bool close = false;
  // What the handler is done with but is costly to free (a decoded request, its decision): a
  // worker frees it after handing the answer to the event loop, so the client does not wait on it,
  // and before the request body, which it may point into.
  std::shared_ptr<const void> spent = nullptr;
  // Not sent before this time (a paced caller's answer): the event loop holds it, on no thread,
  // until then. Unset or past: sent as soon as it is ready.
  TimePoint not_before{};
};

// An answer the HTTP layer gives by itself (a request it refuses, a body it cannot decode, a
// handler that threw): `status` with the JSON body {"error":"<message>"}, the shape of the
// extender API's own errors; the message is escaped (untrusted text in it stays one JSON string).
HttpResponse error_response(int status, std::string_view message);

using Dispatch = std::function<HttpResponse(const HttpRequest&)>;

// Where a request runs: kInline on the event loop itself (trivial answers only); kLight on the few
// workers for cheap reads; kCompute on the workers for CPU-bound handlers (ServerOptions::threads);
// kBlocking on the workers for handlers that wait on another service (ServerOptions::bind_threads),
// so that such waits never hold a thread CPU-bound requests need.
enum class Lane { kInline, kLight, kCompute, kBlocking };
using LaneOf = std::function<Lane(std::string_view method, std::string_view path)>;

}  // namespace extender::http
