#include "extender/http/listener.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "event_loop.h"

namespace extender::http {

ListenerOptions listener_options(const ServerOptions& s, std::string name) {
  ListenerOptions o;
  static_cast<ServerOptions&>(o) = s;
  o.name = std::move(name);
  return o;
}

Listener::Listener(ListenerOptions options, Dispatch dispatch, const Clock& clock)
    : options_(std::move(options)),
      dispatch_(std::move(dispatch)),
      loop_(std::make_unique<EventLoop>(options_, dispatch_, clock)) {}

Listener::~Listener() { stop(); }

Status Listener::bind(const std::string& host, int port) {
  std::unique_ptr<TlsContextSource> tls;
  if (!options_.tls.cert_file.empty()) {
    auto source = TlsContextSource::create(options_.tls, options_.name, std::chrono::seconds(1), loop_->clock);
    if (!source) return source.error();
    tls = std::move(*source);
  }
  auto listening = listen_socket(host, port);
  if (!listening) return Error{options_.name + " listener: " + listening.message()};
  const int fd = *listening;
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  port_ = peer_address(ss).port;
  return loop_->open(fd, std::move(tls));
}

void Listener::serve() { loop_->serve(); }

void Listener::stop() {
  if (loop_) loop_->stop();
}

}  // namespace extender::http
