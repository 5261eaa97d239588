#include "event_loop.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "extender/common/usable_cpus.h"

namespace extender::http {
using namespace event_loop;

EventLoop::~EventLoop() {
  sessions.clear();
  for (int fd : {listen_fd, epoll_fd, wake_fd, reserve_fd}) {
    if (fd >= 0) ::close(fd);
  }
}

Status EventLoop::open(int fd, std::unique_ptr<TlsContextSource> tls_source) {
  tls = std::move(tls_source);
  listen_fd = fd;
  epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (epoll_fd < 0 || wake_fd < 0) return Error{options.name + " listener: cannot create its event loop"};
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenId;
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &ev);
  ev.data.u64 = kWakeId;
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &ev);
  return {};
}

void EventLoop::serve() {
  if (listen_fd < 0 || epoll_fd < 0 || stopping) return;
  const auto threads = [](std::int64_t n) { return static_cast<std::size_t>(std::max<std::int64_t>(1, n)); };
  lanes = std::make_unique<Lanes>(options.name, threads(options.light_threads), threads(options.threads),
                                  threads(options.bind_threads), static_cast<std::size_t>(options.max_body_bytes),
                                  &bodies, &budget, options.decode_content, clock,
                                  options.computing > 0 ? static_cast<std::size_t>(options.computing) : usable_cpus());
  run();
  sessions.clear();
  lanes.reset();
}

void EventLoop::stop() {
  stopping = true;
  if (wake_fd >= 0) wake();
}

void EventLoop::wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd, &one, sizeof one);
}

bool EventLoop::log_refusal(TimePoint now) {
  ++refused_since_log;
  if (now - last_refusal_log < std::chrono::seconds(1)) return false;
  last_refusal_log = now;
  return true;
}

bool EventLoop::log_budget_refusal(TimePoint now) {
  ++budget_refused_since_log;
  if (now - last_budget_log < std::chrono::seconds(1)) return false;
  last_budget_log = now;
  return true;
}

void EventLoop::run() {
  std::vector<epoll_event> events(256);
  TimePoint stop_by = TimePoint::max();
  for (;;) {
    if (stopping) {
      if (accepting) {
        begin_stop();
        stop_by = clock.now() + kShutdownGrace;
      }
      reap();
      if (sessions.empty() || clock.now() > stop_by) return;
    }
    const int n = epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), wait_ms(clock.now()));
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
    expire(clock.now());
    reap();
  }
}

void EventLoop::begin_stop() {
  accepting = false;
  epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
  ::close(listen_fd);
  listen_fd = -1;
  const auto now = clock.now();
  for (auto& [id, s] : sessions) {
    if (s->closing) continue;
    if (s->held) {
      release_held(*s, now);
      if (s->closing) continue;
    }
    s->http.drain();
    settle(*s);
  }
}

int EventLoop::wait_ms(TimePoint now) const {
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(kLongestWait);
  if (stopping) wait = std::chrono::milliseconds(100);
  if (auto next = timers.next()) {
    if (*next <= now) return 0;
    wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(*next - now));
  }
  return static_cast<int>(wait.count());
}

void EventLoop::accept_all() {
  for (;;) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    int fd = accept4(listen_fd, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if ((errno == EMFILE || errno == ENFILE) && reserve_fd >= 0) {
        if (evict_oldest(nullptr, clock.now())) {
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
    const auto now = clock.now();
    if (per_peer[peer.ip] >= options.max_connections_per_peer && !evict_oldest(&peer.ip, now)) {
      if (log_refusal(now)) {
        spdlog::warn(
            "{} listener: {} has {} connections open, all busy (server.max_connections_per_peer); "
            "refused {} connection(s) in the last second",
            options.name, peer.ip, per_peer[peer.ip], std::exchange(refused_since_log, 0));
      }
      ::close(fd);
      continue;
    }
    if (static_cast<std::int64_t>(open_sessions) >= options.max_connections && !evict_oldest(nullptr, now)) {
      if (log_refusal(now)) {
        spdlog::warn(
            "{} listener: {} connections open and all busy; refused {} connection(s) in the last second, "
            "the latest from {}",
            options.name, open_sessions, std::exchange(refused_since_log, 0), peer.ip);
      }
      ::close(fd);
      continue;
    }
    add(fd, std::move(peer), now);
  }
}

void EventLoop::add(int fd, PeerAddress peer, TimePoint now) {
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
  ++open_sessions;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = id;
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev);
  s.events = EPOLLIN;
  sessions.emplace(id, std::move(owned));
  schedule(s);
}

bool EventLoop::evict_oldest(const std::string* peer_ip, TimePoint now, bool slow_only, const Session* keep) {
  Session* oldest = nullptr;
  for (auto& [id, s] : sessions) {
    if (s->closing || s.get() == keep || (peer_ip && s->http.peer().ip != *peer_ip)) continue;
    if (slow_only ? !s->http.below_rate(now) : !s->http.evictable(now)) continue;
    if (!oldest || s->http.phase_since() < oldest->http.phase_since()) oldest = s.get();
  }
  if (!oldest) return false;
  const Phase phase = oldest->http.phase();
  spdlog::debug("{} listener: closing the oldest {} connection from {} to make room", options.name,
                phase == Phase::kBody      ? "slow-body"
                : phase == Phase::kWriting ? "slow-reading"
                                           : "quiet",
                oldest->http.peer().remote());
  close(*oldest);
  return true;
}

bool EventLoop::admit(Session& s, std::size_t held_bytes) {
  const std::size_t held = budget.charge_for(held_bytes);
  const std::string& ip = s.http.peer().ip;
  const auto now = clock.now();
  for (;;) {
    const BodyBudget::Fit fit = budget.set(ip, s.accounted, held);
    if (fit == BodyBudget::Fit::kFits) return true;
    if (evict_oldest(fit == BodyBudget::Fit::kOverShare ? &ip : nullptr, now, true, &s)) continue;
    if (log_budget_refusal(now)) {
      spdlog::warn(
          "{} listener: request bodies held in memory would pass {}; 503 to {} ({} refusal(s) in the last "
          "second)",
          options.name,
          fit == BodyBudget::Fit::kOverShare ? "one peer's share of server.max_buffered_bytes"
                                             : "server.max_buffered_bytes",
          s.http.peer().remote(), std::exchange(budget_refused_since_log, 0));
    }
    return false;
  }
}

void EventLoop::close(Session& s) {
  if (s.closing) return;
  s.closing = true;
  s.http.close();
  account(s, 0);
  epoll_ctl(epoll_fd, EPOLL_CTL_DEL, s.transport->fd(), nullptr);
  if (auto it = per_peer.find(s.http.peer().ip); it != per_peer.end() && --it->second <= 0) per_peer.erase(it);
  --open_sessions;
  timers.forget(s.id);
  to_reap.push_back(s.id);
}

void EventLoop::reap() {
  for (std::uint64_t id : to_reap) sessions.erase(id);
  to_reap.clear();
}

void EventLoop::account(Session& s, std::size_t bytes) { budget.force(s.http.peer().ip, s.accounted, bytes); }

void EventLoop::schedule(Session& s) {
  timers.arm(s.id, s.http.deadline());
  if (s.held) timers.arm(s.id, s.held_until);
}

void EventLoop::expire(TimePoint now) {
  while (auto id = timers.pop_due(now)) {
    auto it = sessions.find(*id);
    if (it == sessions.end() || it->second->closing) continue;
    Session& s = *it->second;
    if (s.held && s.held_until <= now) {
      release_held(s, now);
      if (s.closing) continue;
    }
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

void EventLoop::refresh_events(Session& s) {
  std::uint32_t events = 0;
  const bool out = s.http.has_output();
  switch (s.http.phase()) {
    case Phase::kHandshake: events = s.transport->wants_write() ? EPOLLOUT : EPOLLIN; break;
    case Phase::kDispatched:
    case Phase::kClosed: events = 0; break;
    case Phase::kWriting:
      events = (s.transport->wants_write() || out || !s.transport->secure()) ? EPOLLOUT : EPOLLIN;
      break;
    default: events = EPOLLIN | ((out || s.transport->wants_write()) ? std::uint32_t{EPOLLOUT} : 0u);
  }
  if (events == s.events) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = s.id;
  epoll_ctl(epoll_fd, EPOLL_CTL_MOD, s.transport->fd(), &ev);
  s.events = events;
}

void EventLoop::on_event(Session& s, std::uint32_t ev) {
  const Phase phase = s.http.phase();
  if ((ev & (EPOLLERR | EPOLLHUP)) && phase != Phase::kWriting && (!(ev & EPOLLIN) || phase == Phase::kDispatched)) {
    close(s);
    return;
  }
  if (phase == Phase::kHandshake) {
    handshake(s);
    return;
  }
  if (s.http.has_output()) pump(s);
  if (!s.closing && (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))) read_some(s);
  settle(s);
}

void EventLoop::handshake(Session& s) {
  const IoResult r = s.transport->handshake();
  if (r.status == IoStatus::kAgain) {
    refresh_events(s);
    return;
  }
  if (r.status != IoStatus::kOk) {
    spdlog::debug("{} listener: TLS handshake with {} failed: {}", options.name, s.http.peer().remote(),
                  s.transport->handshake_error());
    close(s);
    return;
  }
  std::vector<std::string> names;
  bool refused = false;
  if (tls->requires_client_certificate()) {
    names = s.transport->client_names();
    if (!client_name_allowed(names, tls->client_names())) {
      refused = true;
      std::string listed;
      for (const auto& n : names) listed += (listed.empty() ? "" : ", ") + n;
      spdlog::warn("{} listener: refused the client certificate of {} (names: {}): not in server.tls.client_names",
                   options.name, s.http.peer().remote(), listed.empty() ? "none" : listed);
    }
  }
  s.http.handshake_done(std::move(names), refused);
  read_some(s);
  settle(s);
}

void EventLoop::read_some(Session& s) {
  char buf[kReadChunk];
  std::size_t total = 0;
  while (!s.closing && s.http.wants_read() && total < kReadPerWake) {
    const IoResult r = s.transport->read(buf, sizeof buf);
    if (r.status == IoStatus::kAgain) return;
    if (r.status != IoStatus::kOk) {
      close(s);
      return;
    }
    total += r.bytes;
    s.http.on_bytes(std::string_view(buf, r.bytes), clock.now());
    pump(s);
  }
}

void EventLoop::pump(Session& s) {
  while (!s.closing) {
    if (s.http.take_shutdown()) s.transport->shutdown();
    if (s.http.closed()) {
      close(s);
      return;
    }
    if (auto req = s.http.take_request()) {
      start_dispatch(s, std::move(*req));
      continue;
    }
    if (s.http.phase() == Phase::kWriting) account(s, s.http.unsent());
    if (!s.http.has_output()) break;
    const auto out = s.http.output();
    const IoResult r = s.transport->write(out);
    if (r.status == IoStatus::kAgain) break;
    if (r.status != IoStatus::kOk) {
      close(s);
      return;
    }
    s.http.wrote(r.bytes, clock.now());
    const Phase phase = s.http.phase();
    if (phase == Phase::kIdle || phase == Phase::kLinger) account(s, 0);
  }
}

void EventLoop::settle(Session& s) {
  if (!s.closing && s.http.closed()) close(s);
  for (int rounds = 0; !s.closing && rounds < 16 && s.http.wants_read() && s.transport->pending(); ++rounds) {
    read_some(s);
  }
  if (s.closing) return;
  refresh_events(s);
  schedule(s);
}

void EventLoop::start_dispatch(Session& s, HttpRequest req) {
  const Lane lane = options.lane_of ? options.lane_of(req.method, req.path) : Lane::kCompute;
  if (lane == Lane::kInline) {
    s.http.respond(dispatch(req), clock.now());
    return;
  }
  lanes->serve(lane, dispatch, std::move(req), [this, id = s.id](HttpResponse res) {
    {
      std::lock_guard lock(done_mu);
      done.emplace_back(id, std::move(res));
    }
    wake();
  });
}

void EventLoop::drain_done() {
  std::vector<std::pair<std::uint64_t, HttpResponse>> ready;
  {
    std::lock_guard lock(done_mu);
    ready.swap(done);
  }
  const auto now = clock.now();
  for (auto& [id, res] : ready) {
    auto it = sessions.find(id);
    if (it == sessions.end() || it->second->closing) continue;
    answer(*it->second, std::move(res), now);
  }
}

void EventLoop::answer(Session& s, HttpResponse res, TimePoint now) {
  if (res.not_before > now && !stopping) {
    s.held_until = res.not_before;
    s.held = std::move(res);
    schedule(s);
    return;
  }
  account(s, 0);
  s.http.respond(std::move(res), now);
  pump(s);
  settle(s);
}

void EventLoop::release_held(Session& s, TimePoint now) {
  HttpResponse res = std::move(*s.held);
  s.held.reset();
  answer(s, std::move(res), now);
}

}  // namespace extender::http
