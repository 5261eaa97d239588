#include <spdlog/spdlog.h>


#include "event_loop.h"

namespace extender::server {
using namespace event_loop;

void Listener::Loop::refresh_events(Session& s) {
  std::uint32_t events = 0;
  const bool out = s.http.has_output();
  switch (s.http.phase()) {
    case Phase::kHandshake:
      events = s.transport->wants_write() ? EPOLLOUT : EPOLLIN;
      break;
    case Phase::kDispatched:
    case Phase::kClosed:
      events = 0;
      break;
    case Phase::kWriting:
      events = (s.transport->wants_write() || out || !s.transport->secure()) ? EPOLLOUT : EPOLLIN;
      break;
    default:
      events = EPOLLIN | ((out || s.transport->wants_write()) ? std::uint32_t{EPOLLOUT} : 0u);
  }
  if (events == s.events) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = s.id;
  epoll_ctl(epoll_fd, EPOLL_CTL_MOD, s.transport->fd(), &ev);
  s.events = events;
}

void Listener::Loop::on_event(Session& s, std::uint32_t ev) {
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

void Listener::Loop::handshake(Session& s) {
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

void Listener::Loop::read_some(Session& s) {
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
    s.http.on_bytes(std::string_view(buf, r.bytes), SteadyClock::now());
    pump(s);
  }
}

void Listener::Loop::pump(Session& s) {
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
    s.http.wrote(r.bytes, SteadyClock::now());
    const Phase phase = s.http.phase();
    if (phase == Phase::kIdle || phase == Phase::kLinger) account(s, 0);
  }
}

void Listener::Loop::settle(Session& s) {
  if (!s.closing && s.http.closed()) close(s);
  for (int rounds = 0; !s.closing && rounds < 16 && s.http.wants_read() && s.transport->pending(); ++rounds) {
    read_some(s);
  }
  if (s.closing) return;
  refresh_events(s);
  schedule(s);
}

void Listener::Loop::start_dispatch(Session& s, HttpRequest req) {
  const Lane lane = options.lane_of ? options.lane_of(req.method, req.path) : Lane::kDecide;
  if (lane == Lane::kInline) {
    s.http.respond(dispatch(req), SteadyClock::now());
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

void Listener::Loop::drain_done() {
  std::vector<std::pair<std::uint64_t, HttpResponse>> ready;
  {
    std::lock_guard lock(done_mu);
    ready.swap(done);
  }
  const auto now = SteadyClock::now();
  for (auto& [id, res] : ready) {
    auto it = sessions.find(id);
    if (it == sessions.end() || it->second->closing) continue;
    Session& s = *it->second;
    account(s, 0);
    s.http.respond(std::move(res), now);
    pump(s);
    settle(s);
  }
}

}  // namespace extender::server
