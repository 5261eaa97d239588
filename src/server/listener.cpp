#include "extender/server/listener.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "event_loop.h"

namespace extender::server {
using namespace event_loop;
ListenerOptions listener_options(const ServerOptions& s, std::string name) {
  ListenerOptions o;
  static_cast<ServerOptions&>(o) = s;
  o.name = std::move(name);
  return o;
}

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
  auto listening = listen_socket(host, port);
  if (!listening) return Error{options_.name + " listener: " + listening.message()};
  const int fd = *listening;
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  port_ = peer_address(ss).port;
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
  const auto threads = [](std::int64_t n) { return static_cast<std::size_t>(std::max<std::int64_t>(1, n)); };
  l.lanes = std::make_unique<Lanes>(options_.name, threads(options_.light_threads), threads(options_.threads),
                                    threads(options_.bind_threads),
                                    static_cast<std::size_t>(options_.max_body_bytes), &l.bodies, &l.budget,
                                    options_.decode_content);
  l.run();
  l.sessions.clear();
  l.lanes.reset();
}

void Listener::stop() {
  if (!loop_) return;
  loop_->stopping = true;
  if (loop_->wake_fd >= 0) loop_->wake();
}

void Listener::Loop::run() {
  std::vector<epoll_event> events(256);
  TimePoint stop_by = TimePoint::max();
  for (;;) {
    if (stopping) {
      if (accepting) {
        begin_stop();
        stop_by = SteadyClock::now() + kShutdownGrace;
      }
      reap();
      if (sessions.empty() || SteadyClock::now() > stop_by) return;
    }
    const int n = epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), wait_ms(SteadyClock::now()));
    for (int i = 0; i < n; ++i) {
      const std::uint64_t id = events[i].data.u64;
      if (id == kListenId) {
        if (accepting) accept_all();
      } else if (id == kWakeId) {
        std::uint64_t count;
        while (::read(wake_fd, &count, sizeof count) > 0) {
        }
        drain_done();
      } else if (auto it = sessions.find(id); it != sessions.end() && !it->second->closing) {
        on_event(*it->second, events[i].events);
      }
    }
    expire(SteadyClock::now());
    reap();
  }
}

void Listener::Loop::begin_stop() {
  accepting = false;
  epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
  ::close(listen_fd);
  listen_fd = -1;
  for (auto& [id, s] : sessions) {
    if (s->closing) continue;
    s->http.drain();
    settle(*s);
  }
}

int Listener::Loop::wait_ms(TimePoint now) const {
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(kLongestWait);
  if (stopping) wait = std::chrono::milliseconds(100);
  if (auto next = timers.next()) {
    if (*next <= now) return 0;
    wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(*next - now));
  }
  return static_cast<int>(wait.count());
}

void Listener::Loop::accept_all() {
  for (;;) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    int fd = accept4(listen_fd, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if ((errno == EMFILE || errno == ENFILE) && reserve_fd >= 0) {
        if (evict_oldest(nullptr, SteadyClock::now())) {
          reap();
          continue;
        }
        ::close(reserve_fd);
        int refused = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (refused >= 0) ::close(refused);
        reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        spdlog::warn("{} listener: out of file descriptors with every connection busy; refused one", options.name);
      }
      return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    PeerAddress peer = peer_address(ss);
    const auto now = SteadyClock::now();
    if (per_peer[peer.ip] >= options.max_connections_per_peer && !evict_oldest(&peer.ip, now)) {
      if (log_refusal(now)) {
        spdlog::warn("{} listener: {} has {} connections open, all busy (server.max_connections_per_peer); "
                     "refused {} connection(s) in the last second",
                     options.name, peer.ip, per_peer[peer.ip], std::exchange(refused_since_log, 0));
      }
      ::close(fd);
      continue;
    }
    if (static_cast<std::int64_t>(open) >= options.max_connections && !evict_oldest(nullptr, now)) {
      if (log_refusal(now)) {
        spdlog::warn("{} listener: {} connections open and all busy; refused {} connection(s) in the last second, "
                     "the latest from {}",
                     options.name, open, std::exchange(refused_since_log, 0), peer.ip);
      }
      ::close(fd);
      continue;
    }
    add(fd, std::move(peer), now);
  }
}

void Listener::Loop::add(int fd, PeerAddress peer, TimePoint now) {
  std::unique_ptr<Transport> transport;
  if (tls) {
    auto made = tls_transport(fd, peer, tls->current());
    if (!made) return;
    transport = std::move(*made);
  } else {
    transport = plain_transport(fd, peer);
  }
  const std::uint64_t id = next_id++;
  auto owned = std::make_unique<Session>(id, std::move(transport), options, now, tls != nullptr, &bodies);
  Session& s = *owned;
  s.http.set_admit([this, &s](std::size_t held) { return admit(s, held); });
  ++per_peer[peer.ip];
  ++open;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = id;
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev);
  s.events = EPOLLIN;
  sessions.emplace(id, std::move(owned));
  schedule(s);
}

bool Listener::Loop::evict_oldest(const std::string* peer_ip, TimePoint now, bool slow_only,
                                  const Session* keep) {
  Session* oldest = nullptr;
  for (auto& [id, s] : sessions) {
    if (s->closing || s.get() == keep || (peer_ip && s->http.peer().ip != *peer_ip)) continue;
    if (slow_only ? !s->http.below_rate(now) : !s->http.evictable(now)) continue;
    if (!oldest || s->http.phase_since() < oldest->http.phase_since()) oldest = s.get();
  }
  if (!oldest) return false;
  const Phase phase = oldest->http.phase();
  spdlog::debug("{} listener: closing the oldest {} connection from {} to make room", options.name,
                phase == Phase::kBody ? "slow-body" : phase == Phase::kWriting ? "slow-reading" : "quiet",
                oldest->http.peer().remote());
  close(*oldest);
  return true;
}

bool Listener::Loop::admit(Session& s, std::size_t held_bytes) {
  const std::size_t held = budget.charge_for(held_bytes);
  const std::string& ip = s.http.peer().ip;
  const auto now = SteadyClock::now();
  for (;;) {
    const BodyBudget::Fit fit = budget.set(ip, s.accounted, held);
    if (fit == BodyBudget::Fit::kFits) return true;
    if (evict_oldest(fit == BodyBudget::Fit::kOverShare ? &ip : nullptr, now, true, &s)) continue;
    if (log_budget_refusal(now)) {
      spdlog::warn("{} listener: request bodies held in memory would pass {}; 503 to {} ({} refusal(s) in the last "
                   "second)",
                   options.name,
                   fit == BodyBudget::Fit::kOverShare ? "one peer's share of server.max_buffered_bytes"
                                                      : "server.max_buffered_bytes",
                   s.http.peer().remote(), std::exchange(budget_refused_since_log, 0));
    }
    return false;
  }
}

void Listener::Loop::close(Session& s) {
  if (s.closing) return;
  s.closing = true;
  s.http.close();
  account(s, 0);
  epoll_ctl(epoll_fd, EPOLL_CTL_DEL, s.transport->fd(), nullptr);
  if (auto it = per_peer.find(s.http.peer().ip); it != per_peer.end() && --it->second <= 0) per_peer.erase(it);
  --open;
  timers.forget(s.id);
  to_reap.push_back(s.id);
}

void Listener::Loop::reap() {
  for (std::uint64_t id : to_reap) sessions.erase(id);
  to_reap.clear();
}

void Listener::Loop::account(Session& s, std::size_t bytes) {
  budget.force(s.http.peer().ip, s.accounted, bytes);
}

void Listener::Loop::schedule(Session& s) {
  timers.arm(s.id, s.http.deadline());
}

void Listener::Loop::expire(TimePoint now) {
  while (auto id = timers.pop_due(now)) {
    auto it = sessions.find(*id);
    if (it == sessions.end() || it->second->closing) continue;
    Session& s = *it->second;
    if (s.http.deadline() <= now) {
      const Phase phase = s.http.phase();
      if (phase == Phase::kHead || phase == Phase::kBody) {
        spdlog::debug("{} listener: {} did not send its request {} in time", options.name, s.http.peer().remote(),
                      phase == Phase::kHead ? "head" : "body");
      }
      s.http.on_deadline(now);
      pump(s);
    }
    settle(s);
  }
}

}  // namespace extender::server
