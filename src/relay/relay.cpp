#include "extender/relay/relay.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>
#include <utility>

#include "extender/common/logging.h"
#include "extender/common/yaml_reader.h"
#include "extender/http/listener.h"

namespace extender::relay {
namespace {

constexpr std::string_view kVerbSuffixes[] = {"/filter-unmanaged", "/prioritize-unmanaged"};
// Longer paths are answered 404 before any pattern matching.
constexpr std::size_t kMaxPath = 1024;
// A body under this that the daemon answers 503 says the daemon is out of room or not ready.
constexpr std::size_t kSmallBody = std::size_t{1} << 20;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool readable(const std::string& path) { return std::ifstream(path).good(); }

// A path the relay forwards: ends with one of the verbs, plain characters only (nothing that could need
// escaping on the way upstream).
bool forwardable_path(std::string_view path) {
  if (path.size() > kMaxPath || path.empty() || path.front() != '/') return false;
  if (std::none_of(std::begin(kVerbSuffixes), std::end(kVerbSuffixes),
                   [&](std::string_view v) { return path.ends_with(v); })) {
    return false;
  }
  for (unsigned char c : path) {
    const bool ok = std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~';
    if (!ok) return false;
  }
  return true;
}

template <class Duration>
std::pair<time_t, time_t> sec_usec(Duration d) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  return {static_cast<time_t>(us / 1'000'000), static_cast<time_t>(us % 1'000'000)};
}

// Why a call failed, for the log line that opens the breaker.
std::string describe(httplib::Error e) {
  switch (e) {
    case httplib::Error::Read: return "no answer within the upstream timeout, or the connection broke (read)";
    case httplib::Error::Write: return "could not send the request (write)";
    case httplib::Error::Connection: return "connect failed";
    case httplib::Error::ConnectionTimeout: return "connect timed out";
    case httplib::Error::SSLConnection: return "TLS handshake failed";
    case httplib::Error::SSLLoadingCerts: return "could not load the CA or client certificate";
    case httplib::Error::SSLServerVerification: return "the upstream's certificate did not verify";
    default: return httplib::to_string(e);
  }
}

}  // namespace

std::string UpstreamUrl::scheme_host_port() const {
  const bool v6 = host.find(':') != std::string::npos;
  return scheme + "://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

bool tls_supported() {
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
  return true;
#else
  return false;
#endif
}

Result<ListenAddress> parse_listen(std::string_view text) {
  auto hp = parse_host_port(text);
  if (!hp) return Error{"--listen: " + hp.message()};
  std::string host = hp->host;
  if (host == "localhost") host = "127.0.0.1";
  in_addr v4{};
  in6_addr v6{};
  bool loopback = false;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    loopback = (ntohl(v4.s_addr) >> 24) == 127;
  } else if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    loopback = IN6_IS_ADDR_LOOPBACK(&v6);
  }
  if (!loopback) {
    return Error{"--listen " + printable(text, 128) +
                 ": not a loopback address; the relay authenticates nobody and must listen on "
                 "127.0.0.1 (e.g. --listen 127.0.0.1:8890)"};
  }
  return ListenAddress{host, hp->port};
}

Result<UpstreamUrl> parse_upstream(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Error{"--upstream " + printable(text, 256) + ": " + std::string(why) +
                 " (want http://HOST:PORT[/PATH] or https://HOST:PORT[/PATH])"};
  };
  UpstreamUrl url;
  const auto sep = text.find("://");
  if (sep == std::string_view::npos) return bad("no scheme");
  url.scheme = lower(text.substr(0, sep));
  if (url.scheme != "http" && url.scheme != "https") return bad("unsupported scheme");
  std::string_view rest = text.substr(sep + 3);
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  if (authority.empty()) return bad("no host");
  if (authority.find('@') != std::string_view::npos) return bad("credentials in the URL are not supported");
  const bool has_port = authority.back() != ']' && authority.find(':') != std::string_view::npos;
  if (has_port) {
    auto hp = parse_host_port(authority);
    if (!hp || hp->port == 0) return bad("bad host or port");
    url.host = hp->host;
    url.port = hp->port;
  } else {
    url.host = std::string(authority);
    if (url.host.size() > 2 && url.host.front() == '[') url.host = url.host.substr(1, url.host.size() - 2);
    url.port = url.scheme == "https" ? 443 : 80;
  }
  if (url.host.empty()) return bad("no host");
  for (unsigned char c : url.host) {
    if (!(std::isalnum(c) || c == '.' || c == '-' || c == ':' || c == '_')) return bad("bad host");
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  for (unsigned char c : path) {
    if (!(std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~')) {
      return bad("unsupported character in the path");
    }
  }
  if (path.find('?') != std::string_view::npos) return bad("no query allowed");
  url.path = std::string(path);
  return url;
}

std::string usage_text() {
  std::string tls = tls_supported()
                        ? "  --ca-file FILE             https: the CA that signs the upstream's certificate\n"
                          "  --cert-file FILE           https: client certificate (mTLS), with --key-file\n"
                          "  --key-file FILE            https: client key\n"
                        : "  (this build has no TLS: http upstreams only)\n";
  return "usage: scheduler-extender-relay --upstream URL [--listen 127.0.0.1:PORT] [flags]\n"
         "\n"
         "A loopback relay, run beside kube-scheduler, for the every-pod extender entry\n"
         "(filterVerb: filter-unmanaged, prioritizeVerb: prioritize-unmanaged, ignorable: true): it\n"
         "forwards POST <path>/filter-unmanaged and <path>/prioritize-unmanaged to the daemon behind\n"
         "a circuit breaker. After a failed\n"
         "call (timeout, connect error, HTTP 500, 502, 504, or 503 to a body under 1 MiB) every\n"
         "call is answered 503 at once for --open-for, then one call probes the daemon; its\n"
         "success closes the breaker. An unreachable daemon then costs a pod nothing instead of the\n"
         "entry's httpTimeout. Bodies with a Content-Encoding are refused 415. GET /healthz\n"
         "answers 200; anything else 404.\n"
         "\n"
         "  --listen 127.0.0.1:PORT    where to listen (default 127.0.0.1:8890; loopback only)\n"
         "  --upstream URL             the daemon: http(s)://HOST:PORT[/PATH]; the request's path\n"
         "                             is appended (point the entry's urlPrefix at\n"
         "                             http://127.0.0.1:PORT/<the daemon's path prefix>)\n"
         "  --upstream-timeout DUR     connect, and each read and write, upstream (default 150ms;\n"
         "                             keep it below the entry's httpTimeout)\n"
         "  --open-for DUR             how long the breaker stays open (default 5s)\n"
         "  --max-body-bytes N         larger requests are answered 413 (default 67108864)\n" +
         tls +
         "  --log-level LEVEL          trace, debug, info, warn, error (default info)\n"
         "  --version                  print the version\n"
         "  --help                     print this text\n";
}

namespace {

// Sets a flag that takes a value.
Status set_flag(CommandLine& cli, const std::string& flag, const std::string& value) {
  auto& o = cli.options;
  if (flag == "--listen") {
    auto l = parse_listen(value);
    if (!l) return l.error();
    o.listen_host = l->host;
    o.listen_port = l->port;
  } else if (flag == "--upstream") {
    o.upstream = value;
  } else if (flag == "--upstream-timeout" || flag == "--open-for") {
    auto d = parse_duration(value);
    if (!d) return Error{flag + ": " + d.message()};
    if (d->count() <= 0) return Error{flag + " must be more than 0"};
    (flag == "--open-for" ? o.breaker.open_for : o.upstream_timeout) = *d;
  } else if (flag == "--max-body-bytes") {
    std::size_t n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size() || n == 0) {
      return Error{"--max-body-bytes: want a positive number of bytes, got " + printable(value, 64)};
    }
    o.max_body_bytes = n;
  } else if (flag == "--ca-file") {
    o.ca_file = value;
  } else if (flag == "--cert-file") {
    o.cert_file = value;
  } else if (flag == "--key-file") {
    o.key_file = value;
  } else if (flag == "--log-level") {
    cli.log_level = value;
  }
  return {};
}

}  // namespace

Result<CommandLine> parse_command_line(const std::vector<std::string>& args) {
  CommandLine cli;
  bool have_upstream = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::string value;
    bool inline_value = false;
    if (auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      inline_value = true;
    }
    if (flag == "--help" || flag == "-h") {
      cli.show_help = true;
      continue;
    }
    if (flag == "--version") {
      cli.show_version = true;
      continue;
    }
    static const char* kValued[] = {"--listen",  "--upstream",  "--upstream-timeout", "--open-for", "--max-body-bytes",
                                    "--ca-file", "--cert-file", "--key-file",         "--log-level"};
    bool known = false;
    for (const char* k : kValued) known = known || flag == k;
    if (!known) return Error{"unknown flag " + printable(flag, 64) + " (see --help)"};
    if (!inline_value) {
      if (i + 1 >= args.size()) return Error{flag + " needs a value"};
      value = args[++i];
    }
    if (flag == "--upstream") have_upstream = true;
    EXTENDER_TRY(set_flag(cli, flag, value));
  }
  if (!have_upstream && !cli.show_help && !cli.show_version) return Error{"--upstream is required (see --help)"};
  return cli;
}

namespace {

// Whether an upstream answer says the daemon is down or failing, for the breaker: no answer
// (connect error, timeout, broken connection), 500, 502, 504, and 503 to a small request. A 503
// to a large body may be that body's own size against the daemon's body budget, and a 4xx
// (413 over a limit, 400 malformed) is the request's fault: neither opens the breaker for every
// other call.
bool upstream_failed(const httplib::Result& r, std::size_t body_bytes) {
  if (!r) return true;
  const int status = r->status;
  if (status == 503) return body_bytes < kSmallBody;
  return status == 500 || status == 502 || status == 504;
}

http::HttpResponse text_answer(int status, std::string text) {
  http::HttpResponse res;
  res.status = status;
  res.body = std::move(text);
  res.content_type = "text/plain";
  return res;
}

http::ListenerOptions listener_options_of(const RelayOptions& o) {
  http::ListenerOptions l;
  l.name = "relay";
  l.threads = static_cast<std::int64_t>(o.threads);
  l.bind_threads = 1;
  l.light_threads = 1;
  l.max_body_bytes = static_cast<std::int64_t>(o.max_body_bytes);
  l.header_timeout = o.header_timeout;
  l.read_timeout = o.body_timeout;
  l.write_timeout = o.body_timeout;
  l.max_connections = static_cast<std::int64_t>(o.max_connections);
  l.max_connections_per_peer = static_cast<std::int64_t>(o.max_connections_per_peer);
  l.max_buffered_bytes = static_cast<std::int64_t>(std::max(o.max_body_bytes * 4, std::size_t{64} << 20));
  l.decode_content = false;
  l.computing = l.threads;  // each forward waits on the daemon: all `threads` may be in flight
  l.lane_of = [](std::string_view method, std::string_view path) {
    return method == "POST" && forwardable_path(path) ? http::Lane::kCompute : http::Lane::kInline;
  };
  return l;
}

}  // namespace

struct Relay::Impl {
  RelayOptions options;
  const Clock* clock = &steady_clock();
  UpstreamUrl upstream;
  std::unique_ptr<http::Listener> listener;
  int port = 0;
  std::thread thread;

  mutable std::mutex breaker_mu;
  Breaker breaker;

  std::mutex clients_mu;
  std::vector<std::unique_ptr<httplib::Client>> idle_clients;

  // An idle client (its connection kept alive; `reused` set) when `idle_ok`, or a new one.
  std::unique_ptr<httplib::Client> take_client(bool idle_ok, bool& reused) {
    reused = false;
    if (idle_ok) {
      std::lock_guard lock(clients_mu);
      if (!idle_clients.empty()) {
        auto c = std::move(idle_clients.back());
        idle_clients.pop_back();
        reused = true;
        return c;
      }
    }
    std::unique_ptr<httplib::Client> c;
    if (!options.cert_file.empty()) {
      c = std::make_unique<httplib::Client>(upstream.scheme_host_port(), options.cert_file, options.key_file);
    } else {
      c = std::make_unique<httplib::Client>(upstream.scheme_host_port());
    }
    const auto [s, us] = sec_usec(options.upstream_timeout);
    c->set_connection_timeout(s, us);
    c->set_read_timeout(s, us);
    c->set_write_timeout(s, us);
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);
    c->set_follow_location(false);
    c->set_decompress(false);
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
    if (upstream.scheme == "https") {
      if (!options.ca_file.empty()) c->set_ca_cert_path(options.ca_file);
      c->enable_server_certificate_verification(true);
    }
#endif
    return c;
  }

  void give_back(std::unique_ptr<httplib::Client> c) {
    std::lock_guard lock(clients_mu);
    if (idle_clients.size() < 64) idle_clients.push_back(std::move(c));
  }

  void log_transition(Breaker::Transition t, const std::string& why) {
    switch (t) {
      case Breaker::Transition::kNone: break;
      case Breaker::Transition::kOpened:
        spdlog::warn("upstream {} failed ({}): circuit open for {}ms, calls are answered 503 at once",
                     upstream.scheme_host_port(), why, options.breaker.open_for.count());
        break;
      case Breaker::Transition::kReopened:
        spdlog::warn("probe of upstream {} failed ({}): circuit open again for {}ms", upstream.scheme_host_port(), why,
                     options.breaker.open_for.count());
        break;
      case Breaker::Transition::kClosed:
        spdlog::info("probe of upstream {} succeeded: circuit closed, calls go upstream again",
                     upstream.scheme_host_port());
        break;
    }
  }

  http::HttpResponse handle(const http::HttpRequest& req) {
    if (req.path == "/healthz" && (req.method == "GET" || req.method == "HEAD")) return text_answer(200, "ok\n");
    if (req.method != "POST" || !forwardable_path(req.path)) {
      return text_answer(
          404, "relay: not found (only POST .../filter-unmanaged, .../prioritize-unmanaged and GET /healthz)\n");
    }
    if (!req.content_coding.empty()) {
      return text_answer(415, "relay: Content-Encoding " + req.content_coding +
                                  " is not accepted; send the body as is (the relay inflates nothing)\n");
    }
    Breaker::Ticket ticket;
    {
      std::lock_guard lock(breaker_mu);
      ticket = breaker.admit(clock->now());
    }
    if (!ticket.admitted) return text_answer(503, "relay: upstream unavailable (circuit open)\n");
    if (ticket.probe) spdlog::info("circuit half-open: one call goes to upstream {}", upstream.scheme_host_port());
    bool reported = false;
    try {
      return forward_admitted(req, ticket, reported);
    } catch (const std::exception& e) {
      // The admitted call must be reported, or a probe would hold the breaker half-open forever.
      if (!reported) {
        std::lock_guard lock(breaker_mu);
        breaker.report(ticket, false, clock->now());
      }
      spdlog::error("relay: {}", e.what());
      return text_answer(503, "relay: internal error\n");
    }
  }

  http::HttpResponse forward_admitted(const http::HttpRequest& req, const Breaker::Ticket& ticket, bool& reported) {
    std::string content_type = req.content_type;
    if (content_type.empty() || content_type.size() > 256) content_type = "application/json";
    const std::string path = upstream.path + req.path;
    const std::string_view body(req.body);
    bool reused = false;
    auto client = take_client(true, reused);
    const auto sent = clock->now();
    httplib::Result r = client->Post(path, body.data(), body.size(), content_type);
    // A kept-alive connection the daemon closed while idle fails at once: one more try on a new
    // connection (never after a failure that took half the timeout, so no call waits much longer).
    if (!r && reused && clock->now() - sent < options.upstream_timeout / 2) {
      client = take_client(false, reused);
      r = client->Post(path, body.data(), body.size(), content_type);
    }
    const bool failed = upstream_failed(r, body.size());
    const std::string why = !r ? describe(r.error()) : "HTTP " + std::to_string(r->status);
    Breaker::Transition t;
    {
      std::lock_guard lock(breaker_mu);
      t = breaker.report(ticket, !failed, clock->now());
      reported = true;
    }
    log_transition(t, why);
    if (!r) return text_answer(503, "relay: upstream " + why + "\n");
    http::HttpResponse res;
    res.status = r->status;
    res.content_type = r->get_header_value("Content-Type");
    if (res.content_type.empty() || res.content_type.size() > 256) res.content_type = "application/json";
    res.body = std::move(r->body);
    give_back(std::move(client));
    return res;
  }
};

Relay::Relay(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Relay::~Relay() { stop(); }

Result<std::unique_ptr<Relay>> Relay::create(const RelayOptions& options) {
  try {
    auto up = parse_upstream(options.upstream);
    if (!up) return up.error();
    if (up->scheme == "https" && !tls_supported()) {
      return Error{"--upstream " + options.upstream + ": this build has no TLS (http upstreams only)"};
    }
    if (up->scheme == "http" && (!options.ca_file.empty() || !options.cert_file.empty())) {
      return Error{"--ca-file/--cert-file/--key-file need an https --upstream"};
    }
    if (options.cert_file.empty() != options.key_file.empty()) {
      return Error{"--cert-file and --key-file go together"};
    }
    for (const auto* file : {&options.ca_file, &options.cert_file, &options.key_file}) {
      if (!file->empty() && !readable(*file)) return Error{"cannot read " + *file};
    }
    auto listen = parse_listen(options.listen_host.find(':') != std::string::npos
                                   ? "[" + options.listen_host + "]:" + std::to_string(options.listen_port)
                                   : options.listen_host + ":" + std::to_string(options.listen_port));
    if (!listen) return listen.error();
    if (options.upstream_timeout.count() <= 0) return Error{"--upstream-timeout must be more than 0"};

    auto impl = std::make_unique<Impl>();
    impl->options = options;
    impl->upstream = *up;
    if (options.clock) impl->clock = options.clock;
    impl->breaker = Breaker(options.breaker);
    Impl* self = impl.get();
    impl->listener = std::make_unique<http::Listener>(
        listener_options_of(options), [self](const http::HttpRequest& req) { return self->handle(req); }, *impl->clock);
    if (auto st = impl->listener->bind(listen->host, listen->port); !st) return st.error();
    impl->port = impl->listener->port();
    return std::unique_ptr<Relay>(new Relay(std::move(impl)));
  } catch (const std::exception& e) {
    return Error{std::string("relay: ") + e.what()};
  }
}

int Relay::port() const { return impl_->port; }

void Relay::start() {
  impl_->thread = std::thread([impl = impl_.get()] { impl->listener->serve(); });
}

void Relay::stop() {
  if (!impl_ || !impl_->listener) return;
  impl_->listener->stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

BreakerState Relay::breaker_state() const {
  std::lock_guard lock(impl_->breaker_mu);
  return impl_->breaker.state(impl_->clock->now());
}

}  // namespace extender::relay
