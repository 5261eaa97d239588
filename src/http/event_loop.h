#pragma once
// EventLoop: the event loop of one Listener (private to src/http). One thread, the one that
// calls serve(), owns every Session (a Transport and its HttpConnection): it waits on epoll,
// accepts within the connection caps (server.max_connections, max_connections_per_peer), keeps
// the body budget, arms each connection's deadline in a DeadlineQueue, hands complete requests
// to their Lanes and writes the answers the lanes hand back (through `done` and the wake
// descriptor). Connections are closed by marking them; they are destroyed at the end of the loop
// iteration, so that no callback finds its connection gone.
//
// Ownership: the loop owns the listening socket once open() succeeds, its epoll and wake
// descriptors, the sessions, the lanes (for the time of serve()) and the BodyPool they share.
// Thread-safety: open() and serve() from one thread; stop() from any thread. Every other member
// is the loop thread's alone, but for `done` (under done_mu) and `budget` (thread-safe).
#include <sys/epoll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "extender/common/clock.h"
#include "extender/common/result.h"
#include "extender/http/body_budget.h"
#include "extender/http/body_pool.h"
#include "extender/http/deadline_queue.h"
#include "extender/http/http_connection.h"
#include "extender/http/lanes.h"
#include "extender/http/listener.h"
#include "extender/http/tls_context.h"
#include "extender/http/transport.h"

namespace extender::http {
namespace event_loop {

using Phase = HttpConnection::Phase;

constexpr std::uint64_t kListenId = 0;
constexpr std::uint64_t kWakeId = 1;
constexpr std::size_t kReadChunk = 64 * 1024;
constexpr std::size_t kReadPerWake = 1 << 20;
constexpr auto kShutdownGrace = std::chrono::seconds(25);
constexpr auto kLongestWait = std::chrono::milliseconds(1000);

// One accepted connection: its bytes (transport) and its HTTP state (http).
struct Session {
  Session(std::uint64_t id_, std::unique_ptr<Transport> transport_, const ServerOptions& options, TimePoint now,
          bool handshaking, BodyBuffers* bodies)
      : id(id_), transport(std::move(transport_)), http(options, transport->peer(), now, handshaking, bodies) {}
  std::uint64_t id;
  std::unique_ptr<Transport> transport;
  HttpConnection http;
  std::size_t accounted = 0;
  std::uint32_t events = 0;
  bool closing = false;
  std::optional<HttpResponse> held;  // an answer not to be sent before held_until
  TimePoint held_until{};
};

}  // namespace event_loop

struct EventLoop {
  using Session = event_loop::Session;

  // `options`, `dispatch` and `clock` outlive the loop (the Listener holds the first two).
  EventLoop(const ListenerOptions& o, const Dispatch& d, const Clock& c)
      : options(o),
        dispatch(d),
        clock(c),
        budget(static_cast<std::size_t>(o.max_buffered_bytes),
               BodyBudget::share_for(static_cast<std::size_t>(o.max_buffered_bytes),
                                     static_cast<std::size_t>(o.max_body_bytes + o.max_header_bytes))) {}
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Takes the listening socket `fd` (and TLS, when given) and creates the epoll and wake
  // descriptors. Fails with a readable reason.
  Status open(int fd, std::unique_ptr<TlsContextSource> tls_source);
  // Runs the loop on the calling thread until stop(); returns when the socket is closed and every
  // request in flight has been answered (or kShutdownGrace has passed). No-op unless open.
  void serve();
  // Asks serve() to return (any thread).
  void stop();

  const ListenerOptions& options;
  const Dispatch& dispatch;
  const Clock& clock;
  std::unique_ptr<TlsContextSource> tls;
  int listen_fd = -1;
  int epoll_fd = -1;
  int wake_fd = -1;
  int reserve_fd = -1;
  std::atomic<bool> stopping{false};
  bool accepting = true;
  std::uint64_t next_id = 2;
  BodyPool bodies;  // outlives the sessions and the lanes
  std::unordered_map<std::uint64_t, std::unique_ptr<Session>> sessions;
  std::size_t open_sessions = 0;       // sessions not closing
  std::vector<std::uint64_t> to_reap;  // closed this iteration, destroyed at its end
  DeadlineQueue timers;
  std::unordered_map<std::string, int> per_peer;
  BodyBudget budget;  // shared with the lanes, which charge the bodies they inflate
  std::unique_ptr<Lanes> lanes;
  TimePoint last_refusal_log{};
  std::uint64_t refused_since_log = 0;
  TimePoint last_budget_log{};
  std::uint64_t budget_refused_since_log = 0;

  std::mutex done_mu;
  std::vector<std::pair<std::uint64_t, HttpResponse>> done;

  void run();
  void begin_stop();
  void accept_all();
  void add(int fd, PeerAddress peer, TimePoint now);
  void on_event(Session& s, std::uint32_t ev);
  void handshake(Session& s);
  void read_some(Session& s);
  // Dispatches a request that is ready, writes what can be written, and follows the connection
  // through answers that complete at once (inline lanes, pipelined requests).
  void pump(Session& s);
  // After a session's events: closes it when its HTTP side is done, reads what TLS decoded
  // already, then waits for the right events and arms the next deadline.
  void settle(Session& s);
  void start_dispatch(Session& s, HttpRequest req);
  void drain_done();
  // Sends `res` on `s` now, or holds it there until its not_before.
  void answer(Session& s, HttpResponse res, TimePoint now);
  // Sends the answer held on `s` (its time has come, or the loop stops).
  void release_held(Session& s, TimePoint now);
  void expire(TimePoint now);
  int wait_ms(TimePoint now) const;
  void close(Session& s);
  void reap();
  void account(Session& s, std::size_t bytes);
  bool admit(Session& s, std::size_t held);
  void refresh_events(Session& s);
  void schedule(Session& s);
  // Closes the oldest evictable connection (of `peer_ip` when given; with slow_only, of those
  // moving a body or an answer below min_body_rate) but `keep`; false when there is none.
  bool evict_oldest(const std::string* peer_ip, TimePoint now, bool slow_only = false, const Session* keep = nullptr);
  // Counts a refused connection; true at most once a second, when it is to be logged.
  bool log_refusal(TimePoint now);
  // Counts a request refused for the body budget; true at most once a second, when it is to be logged.
  bool log_budget_refusal(TimePoint now);
  void wake();
};

}  // namespace extender::http
