#include "extender/server/listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <mutex>
#include <unordered_map>

#include "extender/server/request_parser.h"
#include "extender/server/tls_context.h"
#include "extender/server/worker_pool.h"
#include "extender/wire/results.h"

namespace extender::server {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kListenId = 0;
constexpr std::uint64_t kWakeId = 1;
constexpr std::size_t kReadChunk = 64 * 1024;
constexpr std::size_t kReadPerWake = 1 << 20;
constexpr std::size_t kTrimAbove = 1 << 20;
constexpr std::chrono::milliseconds kBodyGrace{1000};
constexpr std::string_view kRefusedCertificate = "this client certificate is not allowed to call (server.tls.client_names)";
constexpr std::size_t kLingerBytes = 1 << 20;
constexpr auto kLingerTime = std::chrono::seconds(1);
constexpr auto kScanEvery = std::chrono::milliseconds(100);
constexpr auto kShutdownGrace = std::chrono::seconds(25);
// What a request's bytes count against max_buffered_bytes: the body and what decoding it may build
// (wire::decode_extender_args stays within 1.5 times the body), at most the whole budget so that
// one request of max_body_bytes is served when nothing else is held.
std::size_t charge(std::size_t held, std::int64_t budget) {
  return std::min(held * 5 / 2, static_cast<std::size_t>(budget));
}

const char* reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Status";
  }
}

std::chrono::milliseconds at_rate(std::uint64_t bytes, std::int64_t rate) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(bytes * 1000 / static_cast<std::uint64_t>(std::max<std::int64_t>(1, rate))));
}

struct Peer {
  std::string ip;
  int port = 0;
  bool loopback = false;
};

Peer peer_of(const sockaddr_storage& ss) {
  Peer p;
  char buf[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
    p.port = ntohs(a->sin_port);
    p.loopback = ntohl(a->sin_addr.s_addr) == INADDR_LOOPBACK;
  } else if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf);
    p.port = ntohs(a->sin6_port);
    static constexpr unsigned char kMapped127001[4] = {127, 0, 0, 1};
    p.loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr) ||
                 (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr) && std::memcmp(&a->sin6_addr.s6_addr[12], kMapped127001, 4) == 0);
  }
  p.ip = buf;
  return p;
}

enum class Phase { kHandshake, kIdle, kHead, kBody, kDispatched, kWriting, kLinger };

struct Conn {
  Conn(std::uint64_t id_, int fd_, Peer peer_, ParseLimits limits) : id(id_), fd(fd_), peer(std::move(peer_)), parser(limits) {}
  ~Conn() {
    if (ssl) SSL_free(ssl);
    if (fd >= 0) ::close(fd);
  }

  std::uint64_t id;
  int fd;
  Peer peer;
  SSL* ssl = nullptr;
  SslContext ctx;
  bool ssl_wants_write = false;
  Phase phase = Phase::kHead;
  Clock::time_point phase_since;
  Clock::time_point deadline;
  RequestParser parser;
  std::string pending_in;
  std::string out_head;
  std::string out_body;
  std::size_t out_off = 0;  // over out_head then out_body
  bool close_after = false;
  bool head_only = false;
  bool continue_sent = false;
  int served = 0;
  std::size_t accounted = 0;
  std::size_t lingered = 0;
  std::vector<std::string> client_names;
  bool identity_refused = false;
  std::uint32_t events = 0;

  // Quiet (idle, still sending its head, lingering), or moving its body or answer below
  // `min_body_rate` once kBodyGrace has passed: what may be closed to make room for another.
  bool evictable(Clock::time_point now, std::int64_t min_body_rate) const {
    if (phase == Phase::kHandshake || phase == Phase::kIdle || phase == Phase::kHead || phase == Phase::kLinger) return true;
    return below_rate(now, min_body_rate);
  }
  // A body arriving, or an answer leaving, slower than `min_body_rate` on average since it began.
  bool below_rate(Clock::time_point now, std::int64_t min_body_rate) const {
    if (phase != Phase::kBody && phase != Phase::kWriting) return false;
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now - phase_since);
    if (elapsed < kBodyGrace) return false;
    const std::uint64_t moved = phase == Phase::kBody ? parser.wire_received() : out_off;
    return moved * 1000 < static_cast<std::uint64_t>(min_body_rate) * static_cast<std::uint64_t>(elapsed.count());
  }
  std::string remote() const {
    return (peer.ip.find(':') != std::string::npos ? "[" + peer.ip + "]" : peer.ip) + ":" + std::to_string(peer.port);
  }
};

enum class Io { kOk, kAgain, kEof, kError };

HttpResponse error_response(int status, std::string_view message) {
  HttpResponse res;
  res.status = status;
  res.body = wire::encode_request_error(message);
  return res;
}

}  // namespace

ListenerOptions listener_options(const ServerOptions& s, std::string name) {
  ListenerOptions o;
  static_cast<ServerOptions&>(o) = s;
  o.name = std::move(name);
  return o;
}

struct Listener::Loop {
  Loop(const ListenerOptions& o, const Dispatch& d) : options(o), dispatch(d) {
    limits = ParseLimits::of(o);
  }
  ~Loop() {
    conns.clear();
    for (int fd : {listen_fd, epoll_fd, wake_fd, reserve_fd}) {
      if (fd >= 0) ::close(fd);
    }
  }

  const ListenerOptions& options;
  const Dispatch& dispatch;
  ParseLimits limits;
  std::unique_ptr<TlsContextSource> tls;
  int listen_fd = -1;
  int epoll_fd = -1;
  int wake_fd = -1;
  int reserve_fd = -1;
  std::atomic<bool> stopping{false};
  bool accepting = true;
  std::uint64_t next_id = 2;
  std::unordered_map<std::uint64_t, std::unique_ptr<Conn>> conns;
  std::unordered_map<std::string, int> per_peer;
  std::size_t buffered = 0;
  std::unique_ptr<WorkerPool> light, decide, binder;

  std::mutex done_mu;
  std::vector<std::pair<std::uint64_t, HttpResponse>> done;

  void run();
  void accept_all();
  void on_event(Conn& c, std::uint32_t ev);
  void on_readable(Conn& c);
  void on_writable(Conn& c);
  void handshake(Conn& c);
  void feed(Conn& c, std::string_view data);
  void start_dispatch(Conn& c);
  void complete(Conn& c, HttpResponse res);
  void respond_error(Conn& c, int status, std::string_view message);
  void linger(Conn& c);
  void finished_writing(Conn& c);
  void close(Conn& c);
  void account(Conn& c, std::size_t bytes);
  void set_events(Conn& c, std::uint32_t events);
  void refresh_events(Conn& c);
  void scan(Clock::time_point now);
  // Makes room in the budget for `c`: closes the oldest body or answer below min_body_rate but c.
  bool evict_other_slow_body(const Conn& c, Clock::time_point now) { return evict_oldest(nullptr, now, true, &c); }
  // Closes the oldest evictable connection (of `peer_ip` when given; with slow_only, of those
  // moving a body or an answer below min_body_rate) but `keep`; false when there is none.
  bool evict_oldest(const std::string* peer_ip, Clock::time_point now, bool slow_only = false,
                    const Conn* keep = nullptr);
  // Counts a refused connection; true at most once a second, when it is to be logged (with the
  // count of those refused since), so that a flood does not flood the log.
  bool log_refusal(Clock::time_point now) {
    ++refused_since_log;
    if (now - last_refusal_log < std::chrono::seconds(1)) return false;
    last_refusal_log = now;
    return true;
  }
  Clock::time_point last_refusal_log{};
  std::uint64_t refused_since_log = 0;
  void drain_done();
  void wake() {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd, &one, sizeof one);
  }
  Io io_read(Conn& c, char* buf, std::size_t len, std::size_t& got);
  Io io_write(Conn& c, const char* buf, std::size_t len, std::size_t& put);
  // Plain TCP only: the rest of the head and the body in one system call (one segment for a
  // small answer, rather than a head segment and a body segment).
  Io io_write_pair(Conn& c, const char* head, std::size_t head_len, const std::string& body, std::size_t& put);
  WorkerPool& pool(Lane lane) {
    switch (lane) {
      case Lane::kBind: return *binder;
      case Lane::kLight: return *light;
      default: return *decide;
    }
  }
};

Listener::Listener(ListenerOptions options, Dispatch dispatch)
    : options_(std::move(options)), dispatch_(std::move(dispatch)), loop_(std::make_unique<Loop>(options_, dispatch_)) {}

Listener::~Listener() {
  stop();
}

Status Listener::bind(const std::string& host, int port) {
  Loop& l = *loop_;
  if (!options_.tls.cert_file.empty()) {
    auto source = TlsContextSource::create(options_.tls, options_.name);
    if (!source) return source.error();
    l.tls = std::move(*source);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found) != 0 || !found) {
    return Error{options_.name + " listener: cannot resolve " + host};
  }
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 1024) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) {
    return Error{options_.name + " listener: cannot listen on " + host + ":" + std::to_string(port) +
                 " (address in use, or not an address of this machine?)"};
  }
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  port_ = peer_of(ss).port;
  l.listen_fd = fd;
  l.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  l.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  l.reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (l.epoll_fd < 0 || l.wake_fd < 0) return Error{options_.name + " listener: cannot create its event loop"};
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenId;
  epoll_ctl(l.epoll_fd, EPOLL_CTL_ADD, l.listen_fd, &ev);
  ev.data.u64 = kWakeId;
  epoll_ctl(l.epoll_fd, EPOLL_CTL_ADD, l.wake_fd, &ev);
  return {};
}

void Listener::serve() {
  Loop& l = *loop_;
  if (l.listen_fd < 0 || l.stopping) return;
  l.light = std::make_unique<WorkerPool>(static_cast<std::size_t>(std::max<std::int64_t>(1, options_.light_threads)));
  l.decide = std::make_unique<WorkerPool>(static_cast<std::size_t>(std::max<std::int64_t>(1, options_.threads)));
  l.binder = std::make_unique<WorkerPool>(static_cast<std::size_t>(std::max<std::int64_t>(1, options_.bind_threads)));
  l.run();
  l.conns.clear();
  l.light.reset();
  l.decide.reset();
  l.binder.reset();
}

void Listener::stop() {
  if (!loop_) return;
  loop_->stopping = true;
  if (loop_->wake_fd >= 0) loop_->wake();
}

void Listener::Loop::run() {
  std::vector<epoll_event> events(256);
  Clock::time_point last_scan = Clock::now();
  Clock::time_point stop_by{};
  for (;;) {
    if (stopping) {
      if (accepting) {
        accepting = false;
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
        ::close(listen_fd);
        listen_fd = -1;
        stop_by = Clock::now() + kShutdownGrace;
        std::vector<Conn*> quiet;
        for (auto& [id, c] : conns) {
          if (c->phase == Phase::kIdle || c->phase == Phase::kHandshake ||
              (c->phase == Phase::kHead && !c->parser.started())) {
            quiet.push_back(c.get());
          }
        }
        for (Conn* c : quiet) close(*c);
      }
      if (conns.empty() || Clock::now() > stop_by) return;
    }
    const int n = epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), 100);
    for (int i = 0; i < n; ++i) {
      const std::uint64_t id = events[i].data.u64;
      if (id == kListenId) {
        if (accepting) accept_all();
      } else if (id == kWakeId) {
        std::uint64_t count;
        while (::read(wake_fd, &count, sizeof count) > 0) {
        }
        drain_done();
      } else {
        auto it = conns.find(id);
        if (it != conns.end()) on_event(*it->second, events[i].events);
      }
    }
    const auto now = Clock::now();
    if (now - last_scan >= kScanEvery) {
      last_scan = now;
      scan(now);
    }
  }
}

void Listener::Loop::accept_all() {
  for (;;) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    int fd = accept4(listen_fd, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if ((errno == EMFILE || errno == ENFILE) && reserve_fd >= 0) {
        // Out of descriptors: make room by closing the oldest quiet connection, else refuse one.
        if (!evict_oldest(nullptr, Clock::now())) {
          ::close(reserve_fd);
          int refused = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
          if (refused >= 0) ::close(refused);
          reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
          spdlog::warn("{} listener: out of file descriptors with every connection busy; refused one", options.name);
          return;
        }
        continue;
      }
      return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Peer peer = peer_of(ss);
    const auto now = Clock::now();
    if (per_peer[peer.ip] >= options.max_connections_per_peer && !evict_oldest(&peer.ip, now)) {
      if (log_refusal(now)) {
        spdlog::warn("{} listener: {} has {} connections open, all busy (server.max_connections_per_peer); "
                     "refused {} connection(s) in the last second",
                     options.name, peer.ip, per_peer[peer.ip], std::exchange(refused_since_log, 0));
      }
      ::close(fd);
      continue;
    }
    if (static_cast<std::int64_t>(conns.size()) >= options.max_connections && !evict_oldest(nullptr, now)) {
      if (log_refusal(now)) {
        spdlog::warn("{} listener: {} connections open and all busy; refused {} connection(s) in the last second, "
                     "the latest from {}",
                     options.name, conns.size(), std::exchange(refused_since_log, 0), peer.ip);
      }
      ::close(fd);
      continue;
    }
    auto conn = std::make_unique<Conn>(next_id++, fd, std::move(peer), limits);
    Conn& c = *conn;
    c.phase_since = now;
    c.deadline = now + options.header_timeout;
    if (tls) {
      c.ctx = tls->current();
      c.ssl = SSL_new(c.ctx.get());
      if (!c.ssl) {
        ERR_clear_error();
        continue;
      }
      SSL_set_fd(c.ssl, fd);
      SSL_set_accept_state(c.ssl);
      c.phase = Phase::kHandshake;
    }
    ++per_peer[c.peer.ip];
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = c.id;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev);
    c.events = EPOLLIN;
    conns.emplace(c.id, std::move(conn));
  }
}

bool Listener::Loop::evict_oldest(const std::string* peer_ip, Clock::time_point now, bool slow_only,
                                  const Conn* keep) {
  Conn* oldest = nullptr;
  for (auto& [id, c] : conns) {
    if (c.get() == keep || (peer_ip && c->peer.ip != *peer_ip)) continue;
    if (slow_only ? !c->below_rate(now, options.min_body_rate) : !c->evictable(now, options.min_body_rate)) {
      continue;
    }
    if (!oldest || c->phase_since < oldest->phase_since) oldest = c.get();
  }
  if (!oldest) return false;
  spdlog::debug("{} listener: closing the oldest {} connection from {} to make room", options.name,
                oldest->phase == Phase::kBody ? "slow-body" : oldest->phase == Phase::kWriting ? "slow-reading" : "quiet",
                oldest->remote());
  close(*oldest);
  return true;
}

void Listener::Loop::close(Conn& c) {
  account(c, 0);
  epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c.fd, nullptr);
  if (auto it = per_peer.find(c.peer.ip); it != per_peer.end() && --it->second <= 0) per_peer.erase(it);
  conns.erase(c.id);
}

void Listener::Loop::account(Conn& c, std::size_t bytes) {
  buffered -= c.accounted;
  c.accounted = bytes;
  buffered += bytes;
}

void Listener::Loop::set_events(Conn& c, std::uint32_t events) {
  if (events == c.events) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = c.id;
  epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c.fd, &ev);
  c.events = events;
}

void Listener::Loop::refresh_events(Conn& c) {
  const bool out_pending = c.out_off < c.out_head.size() + c.out_body.size();
  switch (c.phase) {
    case Phase::kHandshake:
      set_events(c, c.ssl_wants_write ? std::uint32_t{EPOLLOUT} : std::uint32_t{EPOLLIN});
      break;
    case Phase::kIdle:
    case Phase::kHead:
    case Phase::kBody:
    case Phase::kLinger:
      set_events(c, EPOLLIN | (out_pending ? std::uint32_t{EPOLLOUT} : 0u));
      break;
    case Phase::kDispatched:
      set_events(c, 0);
      break;
    case Phase::kWriting:
      set_events(c, (c.ssl_wants_write || out_pending || !c.ssl) ? std::uint32_t{EPOLLOUT} : std::uint32_t{EPOLLIN});
      break;
  }
}

Io Listener::Loop::io_read(Conn& c, char* buf, std::size_t len, std::size_t& got) {
  got = 0;
  if (!c.ssl) {
    const ssize_t n = ::recv(c.fd, buf, len, 0);
    if (n > 0) {
      got = static_cast<std::size_t>(n);
      return Io::kOk;
    }
    if (n == 0) return Io::kEof;
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? Io::kAgain : Io::kError;
  }
  const int n = SSL_read(c.ssl, buf, static_cast<int>(len));
  if (n > 0) {
    got = static_cast<std::size_t>(n);
    return Io::kOk;
  }
  const int err = SSL_get_error(c.ssl, n);
  ERR_clear_error();
  if (err == SSL_ERROR_WANT_READ) return Io::kAgain;
  if (err == SSL_ERROR_WANT_WRITE) {
    c.ssl_wants_write = true;
    return Io::kAgain;
  }
  return err == SSL_ERROR_ZERO_RETURN ? Io::kEof : Io::kError;
}

Io Listener::Loop::io_write(Conn& c, const char* buf, std::size_t len, std::size_t& put) {
  put = 0;
  if (!c.ssl) {
    const ssize_t n = ::send(c.fd, buf, len, MSG_NOSIGNAL);
    if (n >= 0) {
      put = static_cast<std::size_t>(n);
      return Io::kOk;
    }
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? Io::kAgain : Io::kError;
  }
  c.ssl_wants_write = false;
  const int n = SSL_write(c.ssl, buf, static_cast<int>(std::min<std::size_t>(len, 1 << 30)));
  if (n > 0) {
    put = static_cast<std::size_t>(n);
    return Io::kOk;
  }
  const int err = SSL_get_error(c.ssl, n);
  ERR_clear_error();
  if (err == SSL_ERROR_WANT_WRITE) {
    c.ssl_wants_write = true;
    return Io::kAgain;
  }
  if (err == SSL_ERROR_WANT_READ) return Io::kAgain;
  return Io::kError;
}

Io Listener::Loop::io_write_pair(Conn& c, const char* head, std::size_t head_len, const std::string& body,
                                 std::size_t& put) {
  put = 0;
  iovec iov[2] = {{const_cast<char*>(head), head_len}, {const_cast<char*>(body.data()), body.size()}};
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = 2;
  const ssize_t n = ::sendmsg(c.fd, &msg, MSG_NOSIGNAL);
  if (n >= 0) {
    put = static_cast<std::size_t>(n);
    return Io::kOk;
  }
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? Io::kAgain : Io::kError;
}

void Listener::Loop::on_event(Conn& c, std::uint32_t ev) {
  const std::uint64_t id = c.id;
  if ((ev & (EPOLLERR | EPOLLHUP)) && c.phase != Phase::kWriting) {
    if (!(ev & EPOLLIN) || c.phase == Phase::kDispatched) {
      close(c);
      return;
    }
  }
  switch (c.phase) {
    case Phase::kHandshake:
      handshake(c);
      return;
    case Phase::kWriting:
      on_writable(c);
      return;
    case Phase::kDispatched:
      return;
    default:
      if ((ev & EPOLLOUT) && c.out_off < c.out_head.size() + c.out_body.size()) {
        on_writable(c);
        if (!conns.count(id)) return;
      }
      if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) on_readable(c);
  }
}

void Listener::Loop::handshake(Conn& c) {
  c.ssl_wants_write = false;
  const int r = SSL_do_handshake(c.ssl);
  if (r == 1) {
    if (tls->requires_client_certificate()) {
      X509* cert = SSL_get1_peer_certificate(c.ssl);
      c.client_names = certificate_names(cert);
      if (cert) X509_free(cert);
      if (!client_name_allowed(c.client_names, tls->client_names())) {
        c.identity_refused = true;
        std::string names;
        for (const auto& n : c.client_names) names += (names.empty() ? "" : ", ") + n;
        spdlog::warn("{} listener: refused the client certificate of {} (names: {}): not in server.tls.client_names",
                     options.name, c.remote(), names.empty() ? "none" : names);
      }
    }
    c.phase = Phase::kHead;
    refresh_events(c);
    on_readable(c);
    return;
  }
  const int err = SSL_get_error(c.ssl, r);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
    ERR_clear_error();
    c.ssl_wants_write = err == SSL_ERROR_WANT_WRITE;
    refresh_events(c);
    return;
  }
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  char buf[256] = "connection closed";
  if (code) ERR_error_string_n(code, buf, sizeof buf);
  spdlog::debug("{} listener: TLS handshake with {} failed: {}", options.name, c.remote(), buf);
  close(c);
}

void Listener::Loop::on_readable(Conn& c) {
  const std::uint64_t id = c.id;
  char buf[kReadChunk];
  std::size_t total = 0;
  while (total < kReadPerWake) {
    if (c.phase == Phase::kDispatched || c.phase == Phase::kWriting || c.phase == Phase::kHandshake) return;
    std::size_t got = 0;
    const Io io = io_read(c, buf, sizeof buf, got);
    if (io == Io::kAgain) {
      refresh_events(c);
      return;
    }
    if (io != Io::kOk) {
      close(c);
      return;
    }
    total += got;
    if (c.phase == Phase::kLinger) {
      c.lingered += got;
      if (c.lingered > kLingerBytes) {
        close(c);
        return;
      }
      continue;
    }
    feed(c, std::string_view(buf, got));
    if (!conns.count(id)) return;
  }
}

void Listener::Loop::feed(Conn& c, std::string_view data) {
  const auto now = Clock::now();
  if (c.phase == Phase::kIdle) {
    c.phase = Phase::kHead;
    c.phase_since = now;
    c.deadline = now + options.header_timeout;
  }
  const std::size_t used = c.parser.feed(data);
  if (c.identity_refused && c.parser.state() != RequestParser::State::kHead) {
    respond_error(c, 403, kRefusedCertificate);
    return;
  }
  const std::size_t held = charge(c.parser.held_bytes(), options.max_buffered_bytes);
  const auto over_budget = [&] {
    return held > c.accounted && buffered - c.accounted + held > static_cast<std::size_t>(options.max_buffered_bytes);
  };
  while (over_budget() && evict_other_slow_body(c, now)) {
  }
  if (over_budget()) {
    spdlog::warn("{} listener: request bodies held in memory would pass server.max_buffered_bytes; 503 to {}",
                 options.name, c.remote());
    respond_error(c, 503, "the server holds too many request bodies at once; retry");
    return;
  }
  account(c, held);
  switch (c.parser.state()) {
    case RequestParser::State::kHead:
      return;
    case RequestParser::State::kBody: {
      const RequestHead& head = c.parser.head();
      if (c.phase == Phase::kHead) {
        c.phase = Phase::kBody;
        c.phase_since = now;
        if (head.expect_continue && !c.continue_sent && head.minor_version >= 1) {
          c.continue_sent = true;
          c.out_head = "HTTP/1.1 100 Continue\r\n\r\n";
          c.out_body.clear();
          c.out_off = 0;
          const std::uint64_t id = c.id;
          on_writable(c);
          if (!conns.count(id)) return;
        }
      }
      c.deadline = c.phase_since + options.read_timeout + at_rate(c.parser.wire_received(), options.min_body_rate);
      return;
    }
    case RequestParser::State::kComplete:
      if (used < data.size()) c.pending_in.append(data.substr(used));
      start_dispatch(c);
      return;
    case RequestParser::State::kFailed:
      respond_error(c, c.parser.error_status(), c.parser.error());
      return;
  }
}

void Listener::Loop::start_dispatch(Conn& c) {
  const RequestHead& head = c.parser.head();
  HttpRequest req;
  req.method = head.method;
  req.path = head.target.substr(0, head.target.find('?'));
  req.body = c.parser.take_body();
  req.remote = c.remote();
  req.peer_ip = c.peer.ip;
  req.peer_loopback = c.peer.loopback;
  req.client_names = c.client_names;
  req.queued_at = Clock::now();
  c.head_only = head.method == "HEAD";
  c.close_after = !head.keep_alive || c.served + 1 >= options.keep_alive_max_requests || stopping;
  c.phase = Phase::kDispatched;
  c.phase_since = Clock::now();
  refresh_events(c);
  const Lane lane = options.lane_of ? options.lane_of(req.method, req.path) : Lane::kDecide;
  if (lane == Lane::kInline) {
    complete(c, dispatch(req));
    return;
  }
  pool(lane).post([this, id = c.id, req = std::move(req)]() mutable {
    HttpResponse res;
    try {
      res = dispatch(req);
    } catch (const std::exception& e) {
      spdlog::error("{} listener: internal error serving {} {}: {}", options.name, req.method, req.path, e.what());
      res = error_response(500, "internal error; see the daemon's log");
    }
    const bool large = req.body.capacity() > kTrimAbove;
    std::shared_ptr<const void> spent = std::move(res.spent);
    {
      std::lock_guard lock(done_mu);
      done.emplace_back(id, std::move(res));
    }
    wake();
    spent.reset();
    std::string().swap(req.body);
    if (large) malloc_trim(0);
  });
}

void Listener::Loop::drain_done() {
  std::vector<std::pair<std::uint64_t, HttpResponse>> ready;
  {
    std::lock_guard lock(done_mu);
    ready.swap(done);
  }
  for (auto& [id, res] : ready) {
    auto it = conns.find(id);
    if (it == conns.end()) continue;
    complete(*it->second, std::move(res));
  }
}

void Listener::Loop::complete(Conn& c, HttpResponse res) {
  account(c, 0);
  std::string& h = c.out_head;
  h.clear();
  h += "HTTP/1.1 ";
  h += std::to_string(res.status);
  h += ' ';
  h += reason_phrase(res.status);
  h += "\r\nContent-Type: ";
  h += res.content_type;
  h += "\r\nContent-Length: ";
  h += std::to_string(res.body.size());
  for (const auto& [k, v] : res.headers) {
    h += "\r\n";
    h += k;
    h += ": ";
    h += v;
  }
  h += c.close_after ? "\r\nConnection: close\r\n\r\n" : "\r\nConnection: keep-alive\r\n\r\n";
  c.out_body = c.head_only ? std::string() : std::move(res.body);
  c.out_off = 0;
  c.phase = Phase::kWriting;
  c.phase_since = Clock::now();
  c.deadline = c.phase_since + options.write_timeout + at_rate(c.out_head.size() + c.out_body.size(), options.min_body_rate);
  account(c, c.out_head.size() + c.out_body.size());
  on_writable(c);
}

void Listener::Loop::respond_error(Conn& c, int status, std::string_view message) {
  spdlog::debug("{} listener: {} {} to {}", options.name, status, message, c.remote());
  HttpResponse res = error_response(status, message);
  c.parser.reset();
  c.close_after = true;
  c.head_only = false;
  c.phase = Phase::kDispatched;
  complete(c, std::move(res));
}

void Listener::Loop::on_writable(Conn& c) {
  const std::uint64_t id = c.id;
  for (;;) {
    const std::size_t total = c.out_head.size() + c.out_body.size();
    if (c.out_off >= total) break;
    const bool in_head = c.out_off < c.out_head.size();
    const char* data = in_head ? c.out_head.data() + c.out_off : c.out_body.data() + (c.out_off - c.out_head.size());
    const std::size_t len = in_head ? c.out_head.size() - c.out_off : total - c.out_off;
    std::size_t put = 0;
    const Io io = in_head && !c.ssl && !c.out_body.empty() ? io_write_pair(c, data, len, c.out_body, put)
                                                            : io_write(c, data, len, put);
    if (io == Io::kAgain) {
      refresh_events(c);
      return;
    }
    if (io != Io::kOk) {
      close(c);
      return;
    }
    c.out_off += put;
  }
  if (c.phase == Phase::kWriting) {
    finished_writing(c);
  } else {
    std::string().swap(c.out_head);
    c.out_off = 0;
    if (conns.count(id)) refresh_events(c);
  }
}

void Listener::Loop::finished_writing(Conn& c) {
  std::string().swap(c.out_head);
  std::string().swap(c.out_body);
  c.out_off = 0;
  account(c, 0);
  if (c.close_after) {
    linger(c);
    return;
  }
  ++c.served;
  c.parser.reset();
  c.continue_sent = false;
  c.phase = Phase::kIdle;
  c.phase_since = Clock::now();
  c.deadline = c.phase_since + options.keep_alive_timeout;
  refresh_events(c);
  if (!c.pending_in.empty()) {
    std::string pending;
    pending.swap(c.pending_in);
    const std::uint64_t id = c.id;
    feed(c, pending);
    if (!conns.count(id)) return;
  }
  if (c.ssl && c.phase == Phase::kIdle && SSL_pending(c.ssl) > 0) on_readable(c);
}

// Sends FIN, then reads and discards for a moment, so that a client still sending the request we
// refused reads our answer instead of a reset.
void Listener::Loop::linger(Conn& c) {
  if (c.ssl) SSL_shutdown(c.ssl);
  ::shutdown(c.fd, SHUT_WR);
  c.parser.reset();
  c.phase = Phase::kLinger;
  c.phase_since = Clock::now();
  c.deadline = c.phase_since + kLingerTime;
  refresh_events(c);
}

void Listener::Loop::scan(Clock::time_point now) {
  std::vector<Conn*> expired;
  for (auto& [id, c] : conns) {
    if (c->phase != Phase::kDispatched && now > c->deadline) expired.push_back(c.get());
  }
  for (Conn* c : expired) {
    switch (c->phase) {
      case Phase::kHead:
        if (c->parser.started()) {
          spdlog::debug("{} listener: {} did not send a request head within server.header_timeout", options.name, c->remote());
          respond_error(*c, 408, "the request head did not arrive within server.header_timeout");
        } else {
          close(*c);
        }
        break;
      case Phase::kBody:
        spdlog::debug("{} listener: {} sent its body too slowly", options.name, c->remote());
        respond_error(*c, 408, "the request body did not arrive in time (server.read_timeout, server.min_body_rate)");
        break;
      default:
        close(*c);
    }
  }
}

}  // namespace extender::server
