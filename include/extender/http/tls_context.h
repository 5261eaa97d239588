#pragma once
// TlsContextSource: the OpenSSL server context of a listener, built from the certificate, key and
// (optionally) client CA files, and built again when one of the files changes (a Secret volume
// swaps a symlink): current() checks the files at most once per check interval and hands out the
// newest context that loaded; a change that does not load is logged and the previous context
// stays. Connections keep the context they started with. Requires TLS 1.2 or later; with a client
// CA, a client certificate signed by it is required.
// Thread-safe (current() may be called from any thread).
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "extender/common/clock.h"
#include "extender/common/result.h"
#include "extender/http/server_options.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct x509_st X509;

namespace extender::http {

using SslContext = std::shared_ptr<SSL_CTX>;

class TlsContextSource {
 public:
  // Fails when the files cannot be read or do not form a certificate and matching key. `clock`
  // times the checks; it outlives the source.
  static Result<std::unique_ptr<TlsContextSource>> create(
      TlsOptions tls, std::string listener_name, std::chrono::milliseconds check_interval = std::chrono::seconds(1),
      const Clock& clock = steady_clock());

  SslContext current();
  bool requires_client_certificate() const { return !tls_.client_ca_file.empty(); }
  const std::vector<std::string>& client_names() const { return tls_.client_names; }

 private:
  struct FileStamp {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    std::int64_t mtime_ns = 0;
    bool operator==(const FileStamp&) const = default;
  };
  TlsContextSource(TlsOptions tls, std::string name, std::chrono::milliseconds interval, const Clock& clock)
      : tls_(std::move(tls)), name_(std::move(name)), interval_(interval), clock_(clock) {}
  std::vector<FileStamp> stamps() const;

  TlsOptions tls_;
  std::string name_;
  std::chrono::milliseconds interval_;
  const Clock& clock_;
  std::mutex mu_;
  SslContext current_;
  std::vector<FileStamp> loaded_stamps_;
  std::vector<FileStamp> failed_stamps_;
  TimePoint checked_{};
};

// Builds a server context from the files; the error names what did not load.
Result<SslContext> load_server_context(const TlsOptions& tls);

// The names a client certificate carries: subject CN, SAN DNS names and URIs.
std::vector<std::string> certificate_names(X509* cert);

// True when `allowed` is empty or equals one of `names` exactly; an empty name matches nothing.
bool client_name_allowed(const std::vector<std::string>& names, const std::vector<std::string>& allowed);

}  // namespace extender::http
