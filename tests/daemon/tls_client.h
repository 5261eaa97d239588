#pragma once
// A blocking TLS client for the daemon tests: one connection, one request, and the names in the
// certificate the server presented. Built on OpenSSL directly so a test sees the handshake's
// outcome and the server's certificate, which an HTTP library hides.
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <memory>
#include <string>

namespace extender::testing {

struct TlsAnswer {
  bool handshake = false;  // the TLS handshake completed
  int status = -1;         // HTTP status, -1 when no answer came
  std::string body;
  std::string server_cn;  // subject CN of the server's certificate
};

struct TlsIdentity {
  std::string ca_pem;    // the CA that signed the server's certificate
  std::string cert_pem;  // client certificate (optional)
  std::string key_pem;
};

// Sends `request` as it is (a head, and as much of a body as the test wants sent) and reads the
// answer until the server closes or 5 s pass without a byte.
inline TlsAnswer tls_exchange(int port, const TlsIdentity& id, const std::string& request) {
  TlsAnswer out;
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  X509_STORE* store = SSL_CTX_get_cert_store(ctx.get());
  {
    BIO* bio = BIO_new_mem_buf(id.ca_pem.data(), static_cast<int>(id.ca_pem.size()));
    X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    X509_STORE_add_cert(store, ca);
    X509_free(ca);
  }
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  if (!id.cert_pem.empty()) {
    BIO* cb = BIO_new_mem_buf(id.cert_pem.data(), static_cast<int>(id.cert_pem.size()));
    X509* cert = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
    BIO_free(cb);
    BIO* kb = BIO_new_mem_buf(id.key_pem.data(), static_cast<int>(id.key_pem.size()));
    EVP_PKEY* key = PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr);
    BIO_free(kb);
    SSL_CTX_use_certificate(ctx.get(), cert);
    SSL_CTX_use_PrivateKey(ctx.get(), key);
    X509_free(cert);
    EVP_PKEY_free(key);
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return out;
  }
  SSL* ssl = SSL_new(ctx.get());
  SSL_set_fd(ssl, fd);
  if (SSL_connect(ssl) == 1) {
    out.handshake = true;
    if (X509* peer = SSL_get1_peer_certificate(ssl)) {
      char cn[256] = {};
      X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn, sizeof cn);
      out.server_cn = cn;
      X509_free(peer);
    }
    if (SSL_write(ssl, request.data(), static_cast<int>(request.size())) > 0) {
      std::string response;
      char buf[4096];
      int n;
      while ((n = SSL_read(ssl, buf, sizeof buf)) > 0) response.append(buf, static_cast<std::size_t>(n));
      if (response.rfind("HTTP/1.1 ", 0) == 0 && response.size() >= 12) out.status = std::stoi(response.substr(9, 3));
      auto end = response.find("\r\n\r\n");
      if (end != std::string::npos) out.body = response.substr(end + 4);
    }
  }
  ERR_clear_error();
  SSL_free(ssl);
  ::close(fd);
  return out;
}

inline TlsAnswer tls_request(int port, const TlsIdentity& id, const std::string& method, const std::string& path,
                             const std::string& body = "") {
  return tls_exchange(port, id,
                      method + " " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: " +
                          std::to_string(body.size()) + "\r\n\r\n" + body);
}

}  // namespace extender::testing
