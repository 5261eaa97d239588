#include "extender/http/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

namespace extender::http {
namespace {

std::string openssl_error() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown error";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof buf);
  return buf;
}

std::string asn1_string(const ASN1_STRING* s) {
  if (!s) return {};
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                     static_cast<std::size_t>(ASN1_STRING_length(s)));
}

std::string subject_of(SSL_CTX* ctx) {
  X509* cert = SSL_CTX_get0_certificate(ctx);
  if (!cert) return "?";
  char buf[256];
  X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof buf);
  return buf;
}

}  // namespace

Result<SslContext> load_server_context(const TlsOptions& tls) {
  SslContext ctx(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  if (!ctx) return Error{"cannot create a TLS context: " + openssl_error()};
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  SSL_CTX_set_options(ctx.get(), SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_mode(ctx.get(),
                   SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_OFF);
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), tls.cert_file.c_str()) != 1) {
    return Error{"cannot load the certificate " + tls.cert_file + ": " + openssl_error()};
  }
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return Error{"cannot load the key " + tls.key_file + ": " + openssl_error()};
  }
  if (SSL_CTX_check_private_key(ctx.get()) != 1) {
    return Error{"the key " + tls.key_file + " does not match the certificate " + tls.cert_file};
  }
  if (!tls.client_ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx.get(), tls.client_ca_file.c_str(), nullptr) != 1) {
      return Error{"cannot load the client CA " + tls.client_ca_file + ": " + openssl_error()};
    }
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(tls.client_ca_file.c_str());
    if (!names) return Error{"the client CA " + tls.client_ca_file + " holds no certificate"};
    SSL_CTX_set_client_CA_list(ctx.get(), names);
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    SSL_CTX_set_verify_depth(ctx.get(), 8);
  }
  return ctx;
}

std::vector<std::string> certificate_names(X509* cert) {
  std::vector<std::string> names;
  if (!cert) return names;
  X509_NAME* subject = X509_get_subject_name(cert);
  for (int i = -1; (i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) >= 0;) {
    names.push_back(asn1_string(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i))));
  }
  auto* sans = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (sans) {
    for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
      const GENERAL_NAME* gn = sk_GENERAL_NAME_value(sans, i);
      if (gn->type == GEN_DNS) names.push_back(asn1_string(gn->d.dNSName));
      if (gn->type == GEN_URI) names.push_back(asn1_string(gn->d.uniformResourceIdentifier));
    }
    GENERAL_NAMES_free(sans);
  }
  return names;
}

bool client_name_allowed(const std::vector<std::string>& names, const std::vector<std::string>& allowed) {
  if (allowed.empty()) return true;
  for (const auto& n : names) {
    for (const auto& a : allowed) {
      if (!n.empty() && n == a) return true;
    }
  }
  return false;
}

Result<std::unique_ptr<TlsContextSource>> TlsContextSource::create(TlsOptions tls, std::string listener_name,
                                                                   std::chrono::milliseconds check_interval,
                                                                   const Clock& clock) {
  std::unique_ptr<TlsContextSource> source(
      new TlsContextSource(std::move(tls), std::move(listener_name), check_interval, clock));
  source->loaded_stamps_ = source->stamps();
  auto ctx = load_server_context(source->tls_);
  if (!ctx) return Error{source->name_ + " listener: " + ctx.message()};
  source->current_ = std::move(*ctx);
  source->checked_ = clock.now();
  return source;
}

std::vector<TlsContextSource::FileStamp> TlsContextSource::stamps() const {
  std::vector<FileStamp> out;
  for (const std::string* path : {&tls_.cert_file, &tls_.key_file, &tls_.client_ca_file}) {
    FileStamp s;
    struct stat st {};
    if (!path->empty() && ::stat(path->c_str(), &st) == 0) {
      s.dev = st.st_dev;
      s.ino = st.st_ino;
      s.size = st.st_size;
      s.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    }
    out.push_back(s);
  }
  return out;
}

SslContext TlsContextSource::current() {
  std::lock_guard lock(mu_);
  const auto now = clock_.now();
  if (now - checked_ < interval_) return current_;
  checked_ = now;
  std::vector<FileStamp> seen = stamps();
  if (seen == loaded_stamps_ || seen == failed_stamps_) return current_;
  auto ctx = load_server_context(tls_);
  if (!ctx) {
    failed_stamps_ = seen;
    spdlog::error("{} listener: the TLS files changed but do not load ({}); still serving the previous certificate",
                  name_, ctx.message());
    return current_;
  }
  current_ = std::move(*ctx);
  loaded_stamps_ = std::move(seen);
  failed_stamps_.clear();
  spdlog::info("{} listener: TLS files changed; new connections get certificate {}", name_, subject_of(current_.get()));
  return current_;
}

}  // namespace extender::http
