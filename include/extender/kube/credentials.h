#pragma once
// ClusterAccess: where the API server is and how to prove who we are: in-cluster (service account
// token and CA under /var/run/secrets/kubernetes.io/serviceaccount) or a kubeconfig (server, CA
// data or file, bearer token or token file, client certificate and key as data or files).
// Value type; loading reads files only.
#include <string>

#include "extender/common/result.h"

namespace extender::kube {

struct ClusterAccess {
  std::string server;           // https://host:port (http:// only for tests and local proxies)
  std::string ca_file;          // PEM file of the CA that signed the server's certificate
  std::string ca_pem;           // or the PEM itself
  std::string token;            // bearer token, or
  std::string token_file;       // a file holding it, read again periodically (rotating tokens)
  std::string client_cert_pem;  // client certificate authentication
  std::string client_key_pem;
  std::string client_cert_file;  // where the two came from when the kubeconfig named files (read
  std::string client_key_file;   // again by ApiClient when they change), else empty
};

inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

// KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT and the service account files under `dir`.
Result<ClusterAccess> in_cluster_access(const std::string& dir = kServiceAccountDir);

// The current context of a kubeconfig file. Relative file paths in it are relative to its folder.
Result<ClusterAccess> kubeconfig_access(const std::string& path);

// Reads a whole (small) file; errors name the file.
Result<std::string> read_small_file(const std::string& path, std::size_t max_bytes = 1 << 20);

}  // namespace extender::kube
