#pragma once
// Transport: one accepted connection's byte stream, plain TCP or TLS behind one interface: a
// handshake (nothing to do for plain TCP), reads, writes of several buffers at once (writev, or
// SSL_write buffer after buffer), shutdown (FIN; TLS sends close_notify first) and the names of
// the peer (its address; for TLS, the names of its verified client certificate). Non-blocking:
// kAgain means "wait until the socket is readable, or writable when wants_write()".
// A Transport owns its descriptor (and TLS session) and closes it when destroyed. One thread at a
// time; not thread-safe.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "extender/common/result.h"
#include "extender/http/http_message.h"
#include "extender/http/tls_context.h"

struct sockaddr_storage;

namespace extender::http {

enum class IoStatus { kOk, kAgain, kEof, kError };

struct IoResult {
  IoStatus status = IoStatus::kOk;
  std::size_t bytes = 0;  // kOk: bytes read or written (a read of kOk has at least one)
};

class Transport {
 public:
  virtual ~Transport() = default;
  // kOk once the connection can carry requests; kAgain to be called again when the socket is
  // ready; kError (with the reason in handshake_error()) when the peer cannot be served.
  virtual IoResult handshake() = 0;
  virtual std::string handshake_error() const { return {}; }
  virtual IoResult read(char* buf, std::size_t len) = 0;
  // Writes from the buffers in order; bytes says how many in all (fewer than offered: try again
  // when writable).
  virtual IoResult write(std::span<const std::string_view> buffers) = 0;
  // Stops sending (FIN); reading stays possible.
  virtual void shutdown() = 0;
  // The last kAgain waits for the socket to become writable (TLS may need to write to read).
  virtual bool wants_write() const { return false; }
  // Bytes received and decoded already, which no readiness event will announce.
  virtual bool pending() const { return false; }
  virtual bool secure() const { return false; }
  // Names of the verified client certificate (subject CN, SAN DNS and URIs); empty for plain TCP.
  virtual std::vector<std::string> client_names() const { return {}; }

  int fd() const { return fd_; }
  const PeerAddress& peer() const { return peer_; }

 protected:
  Transport(int fd, PeerAddress peer) : fd_(fd), peer_(std::move(peer)) {}
  int fd_;
  PeerAddress peer_;
};

// A non-blocking listening socket on host:port (port 0: a free one); the error is readable.
Result<int> listen_socket(const std::string& host, int port);

// The peer address of a socket address (IPv4 or IPv6).
PeerAddress peer_address(const sockaddr_storage& address);

// Take ownership of an accepted, non-blocking socket.
std::unique_ptr<Transport> plain_transport(int fd, PeerAddress peer);
// Fails (and closes fd) when no TLS session can be created from the context.
Result<std::unique_ptr<Transport>> tls_transport(int fd, PeerAddress peer, SslContext context);

}  // namespace extender::http
