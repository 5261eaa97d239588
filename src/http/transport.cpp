#include "extender/http/transport.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace extender::http {
namespace {

IoStatus errno_status() {
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? IoStatus::kAgain : IoStatus::kError;
}

class PlainTransport final : public Transport {
 public:
  PlainTransport(int fd, PeerAddress peer) : Transport(fd, std::move(peer)) {}
  ~PlainTransport() override {
    if (fd_ >= 0) ::close(fd_);
  }

  IoResult handshake() override { return {}; }

  IoResult read(char* buf, std::size_t len) override {
    const ssize_t n = ::recv(fd_, buf, len, 0);
    if (n > 0) return {IoStatus::kOk, static_cast<std::size_t>(n)};
    if (n == 0) return {IoStatus::kEof, 0};
    return {errno_status(), 0};
  }

  IoResult write(std::span<const std::string_view> buffers) override {
    iovec iov[8];
    int count = 0;
    for (std::string_view b : buffers) {
      if (b.empty() || count == 8) continue;
      iov[count++] = {const_cast<char*>(b.data()), b.size()};
    }
    if (count == 0) return {};
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<std::size_t>(count);
    const ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (n >= 0) return {IoStatus::kOk, static_cast<std::size_t>(n)};
    return {errno_status(), 0};
  }

  void shutdown() override { ::shutdown(fd_, SHUT_WR); }
};

class TlsTransport final : public Transport {
 public:
  TlsTransport(int fd, PeerAddress peer, SslContext context, SSL* ssl)
      : Transport(fd, std::move(peer)), context_(std::move(context)), ssl_(ssl) {}
  ~TlsTransport() override {
    SSL_free(ssl_);
    if (fd_ >= 0) ::close(fd_);
  }

  IoResult handshake() override {
    wants_write_ = false;
    const int r = SSL_do_handshake(ssl_);
    if (r == 1) return {};
    const int err = SSL_get_error(ssl_, r);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      ERR_clear_error();
      wants_write_ = err == SSL_ERROR_WANT_WRITE;
      return {IoStatus::kAgain, 0};
    }
    const unsigned long code = ERR_get_error();
    ERR_clear_error();
    char buf[256] = "connection closed";
    if (code) ERR_error_string_n(code, buf, sizeof buf);
    error_ = buf;
    return {IoStatus::kError, 0};
  }

  std::string handshake_error() const override { return error_; }

  IoResult read(char* buf, std::size_t len) override {
    wants_write_ = false;
    const int n = SSL_read(ssl_, buf, static_cast<int>(std::min<std::size_t>(len, INT_MAX)));
    if (n > 0) return {IoStatus::kOk, static_cast<std::size_t>(n)};
    const int err = SSL_get_error(ssl_, n);
    ERR_clear_error();
    if (err == SSL_ERROR_WANT_READ) return {IoStatus::kAgain, 0};
    if (err == SSL_ERROR_WANT_WRITE) {
      wants_write_ = true;
      return {IoStatus::kAgain, 0};
    }
    return {err == SSL_ERROR_ZERO_RETURN ? IoStatus::kEof : IoStatus::kError, 0};
  }

  IoResult write(std::span<const std::string_view> buffers) override {
    wants_write_ = false;
    std::size_t total = 0;
    for (std::string_view b : buffers) {
      while (!b.empty()) {
        const int n = SSL_write(ssl_, b.data(), static_cast<int>(std::min<std::size_t>(b.size(), 1 << 30)));
        if (n > 0) {
          total += static_cast<std::size_t>(n);
          b.remove_prefix(static_cast<std::size_t>(n));
          continue;
        }
        const int err = SSL_get_error(ssl_, n);
        ERR_clear_error();
        if (err == SSL_ERROR_WANT_WRITE) wants_write_ = true;
        if (total > 0) return {IoStatus::kOk, total};
        if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) return {IoStatus::kAgain, 0};
        return {IoStatus::kError, 0};
      }
    }
    return {IoStatus::kOk, total};
  }

  void shutdown() override {
    SSL_shutdown(ssl_);
    ERR_clear_error();
    ::shutdown(fd_, SHUT_WR);
  }

  bool wants_write() const override { return wants_write_; }
  bool pending() const override { return SSL_pending(ssl_) > 0; }
  bool secure() const override { return true; }

  std::vector<std::string> client_names() const override {
    X509* cert = SSL_get1_peer_certificate(ssl_);
    std::vector<std::string> names = certificate_names(cert);
    if (cert) X509_free(cert);
    return names;
  }

 private:
  SslContext context_;
  SSL* ssl_;
  bool wants_write_ = false;
  std::string error_;
};

}  // namespace

Result<int> listen_socket(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found) != 0 || !found) {
    return Error{"cannot resolve " + host};
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
    return Error{"cannot listen on " + host + ":" + std::to_string(port) +
                 " (address in use, or not an address of this machine?)"};
  }
  return fd;
}

PeerAddress peer_address(const sockaddr_storage& ss) {
  PeerAddress p;
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

std::unique_ptr<Transport> plain_transport(int fd, PeerAddress peer) {
  return std::make_unique<PlainTransport>(fd, std::move(peer));
}

Result<std::unique_ptr<Transport>> tls_transport(int fd, PeerAddress peer, SslContext context) {
  SSL* ssl = context ? SSL_new(context.get()) : nullptr;
  if (!ssl) {
    ERR_clear_error();
    ::close(fd);
    return Error{"cannot create a TLS session"};
  }
  SSL_set_fd(ssl, fd);
  SSL_set_accept_state(ssl);
  return std::unique_ptr<Transport>(std::make_unique<TlsTransport>(fd, std::move(peer), std::move(context), ssl));
}

}  // namespace extender::http
