#pragma once
// A throwaway PKI for the TLS tests, made with OpenSSL at run time: a CA, a server certificate
// for 127.0.0.1 signed by it, a client certificate signed by it. EC P-256 keys (fast to make).
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace extender::kube::testing {

struct Issued {
  std::shared_ptr<EVP_PKEY> key;
  std::shared_ptr<X509> cert;
  std::string cert_pem;
  std::string key_pem;
};

namespace pki_detail {

inline std::string to_pem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  return out;
}

inline std::string to_pem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  return out;
}

inline void add_ext(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!ext) throw std::runtime_error(std::string("cannot make extension ") + value);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

}  // namespace pki_detail

enum class Role { kCa, kServer, kClient };

// A certificate for `cn`, self-signed when `issuer` is null.
inline Issued issue(const std::string& cn, Role role, const Issued* issuer) {
  static long serial = 1000;
  EVP_PKEY* key = EVP_EC_gen("P-256");
  if (!key) throw std::runtime_error("cannot make a key");
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), ++serial);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509* issuer_cert = issuer ? issuer->cert.get() : cert;
  X509_set_issuer_name(cert, X509_get_subject_name(issuer_cert));
  using pki_detail::add_ext;
  add_ext(cert, issuer_cert, NID_subject_key_identifier, "hash");
  switch (role) {
    case Role::kCa:
      add_ext(cert, issuer_cert, NID_basic_constraints, "critical,CA:TRUE");
      add_ext(cert, issuer_cert, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
      break;
    case Role::kServer:
      add_ext(cert, issuer_cert, NID_basic_constraints, "critical,CA:FALSE");
      add_ext(cert, issuer_cert, NID_key_usage, "critical,digitalSignature,keyEncipherment");
      add_ext(cert, issuer_cert, NID_ext_key_usage, "serverAuth");
      add_ext(cert, issuer_cert, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
      break;
    case Role::kClient:
      add_ext(cert, issuer_cert, NID_basic_constraints, "critical,CA:FALSE");
      add_ext(cert, issuer_cert, NID_key_usage, "critical,digitalSignature,keyEncipherment");
      add_ext(cert, issuer_cert, NID_ext_key_usage, "clientAuth");
      break;
  }
  if (issuer) add_ext(cert, issuer_cert, NID_authority_key_identifier, "keyid:always");
  X509_sign(cert, issuer ? issuer->key.get() : key, EVP_sha256());
  Issued out;
  out.key = std::shared_ptr<EVP_PKEY>(key, EVP_PKEY_free);
  out.cert = std::shared_ptr<X509>(cert, X509_free);
  out.cert_pem = pki_detail::to_pem(cert);
  out.key_pem = pki_detail::to_pem(key);
  return out;
}

// A store holding `ca` (for a server that asks for client certificates; the server owns it).
inline X509_STORE* store_of(const Issued& ca) {
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca.cert.get());
  return store;
}

}  // namespace extender::kube::testing
