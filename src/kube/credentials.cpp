#include "extender/kube/credentials.h"

#include <cstdlib>
#include <fstream>

#include "extender/common/yaml_reader.h"

namespace extender::kube {
namespace {

Result<std::string> decode_base64(std::string_view in, const std::string& what) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=' || c == '\n' || c == '\r' || c == ' ') continue;
    int v = value(c);
    if (v < 0) return Error{what + " is not valid base64"};
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xff));
    }
  }
  return out;
}

std::string resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return base_dir + path;
}

// The entry of a kubeconfig list (clusters, users, contexts) with `name`, as its inner mapping.
YAML::Node named(const YAML::Node& list, const std::string& key, const std::string& name) {
  if (!list.IsSequence()) return YAML::Node();
  for (const auto& item : list) {
    if (item.IsMap() && item["name"] && item["name"].IsScalar() && item["name"].Scalar() == name) return item[key];
  }
  return YAML::Node();
}

std::string scalar(const YAML::Node& map, const char* key) {
  if (!map.IsMap()) return {};
  YAML::Node v = map[key];
  return v && v.IsScalar() ? v.Scalar() : std::string();
}

}  // namespace

Result<std::string> read_small_file(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot be read"};
  std::string text;
  char buf[4096];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) return Error{path + ": larger than " + std::to_string(max_bytes) + " bytes"};
  }
  return text;
}

Result<ClusterAccess> in_cluster_access(const std::string& dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port) {
    return Error{"not running in a cluster (KUBERNETES_SERVICE_HOST/PORT unset); pass --kubeconfig"};
  }
  ClusterAccess access;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6
  access.server = "https://" + h + ":" + port;
  access.token_file = dir + "/token";
  access.ca_file = dir + "/ca.crt";
  if (auto token = read_small_file(access.token_file); !token) return token.error();
  if (auto ca = read_small_file(access.ca_file); !ca) return ca.error();
  return access;
}

namespace {

// The context to use: current-context's, or the only one when there is no current-context.
Result<YAML::Node> current_context(const YAML::Node& root, const std::string& path) {
  std::string context_name = scalar(root, "current-context");
  YAML::Node context = named(root["contexts"], "context", context_name);
  if (!context.IsMap()) {
    // A kubeconfig with one context and no current-context still says what to use.
    if (root["contexts"].IsSequence() && root["contexts"].size() == 1) {
      context = root["contexts"][0]["context"];
    }
    if (!context.IsMap()) return Error{path + ": current-context \"" + context_name + "\" is not among its contexts"};
  }
  return context;
}

// The cluster's server and CA into `access`.
Status read_cluster(const YAML::Node& cluster, const std::string& path, const std::string& base_dir,
                    const std::string& cluster_name, ClusterAccess& access) {
  access.server = scalar(cluster, "server");
  if (access.server.empty()) return Error{path + ": cluster \"" + cluster_name + "\" has no server"};
  while (!access.server.empty() && access.server.back() == '/') access.server.pop_back();
  if (scalar(cluster, "insecure-skip-tls-verify") == "true") {
    return Error{path + ": insecure-skip-tls-verify is not supported; give the cluster's CA"};
  }
  if (!scalar(cluster, "tls-server-name").empty()) {
    return Error{path + ": tls-server-name is not supported; use a server address the certificate names"};
  }
  if (auto data = scalar(cluster, "certificate-authority-data"); !data.empty()) {
    auto pem = decode_base64(data, path + ": certificate-authority-data");
    if (!pem) return pem.error();
    access.ca_pem = std::move(*pem);
  } else {
    access.ca_file = resolve(base_dir, scalar(cluster, "certificate-authority"));
  }
  return {};
}

// The user's token or client certificate and key into `access`.
Status read_user(const YAML::Node& user, const std::string& path, const std::string& base_dir,
                 const std::string& user_name, ClusterAccess& access) {
  access.token = scalar(user, "token");
  access.token_file = resolve(base_dir, scalar(user, "tokenFile"));
  for (auto [data_key, file_key, out, out_file] :
       {std::tuple{"client-certificate-data", "client-certificate", &access.client_cert_pem, &access.client_cert_file},
        std::tuple{"client-key-data", "client-key", &access.client_key_pem, &access.client_key_file}}) {
    if (auto data = scalar(user, data_key); !data.empty()) {
      auto pem = decode_base64(data, path + ": " + data_key);
      if (!pem) return pem.error();
      *out = std::move(*pem);
    } else if (auto file = scalar(user, file_key); !file.empty()) {
      *out_file = resolve(base_dir, file);
      auto pem = read_small_file(*out_file);
      if (!pem) return pem.error();
      *out = std::move(*pem);
    }
  }
  if (user["exec"] || user["auth-provider"]) {
    if (access.token.empty() && access.token_file.empty() && access.client_cert_pem.empty()) {
      return Error{path + ": user \"" + user_name +
                   "\" uses an exec or auth-provider plugin, which is not supported; "
                   "give a token, token file or client certificate"};
    }
  }
  return {};
}

}  // namespace

Result<ClusterAccess> kubeconfig_access(const std::string& path) {
  auto reader = YamlReader::load_file(path, 4u << 20);
  if (!reader) return reader.error();
  const std::string base_dir = path.rfind('/') == std::string::npos ? "" : path.substr(0, path.rfind('/') + 1);
  try {
    const YAML::Node& root = reader->root();
    if (!root.IsMap()) return Error{path + ": not a kubeconfig (expected a mapping)"};
    auto context = current_context(root, path);
    if (!context) return context.error();
    const std::string cluster_name = scalar(*context, "cluster");
    const std::string user_name = scalar(*context, "user");
    YAML::Node cluster = named(root["clusters"], "cluster", cluster_name);
    if (!cluster.IsMap()) return Error{path + ": cluster \"" + cluster_name + "\" is not defined"};
    ClusterAccess access;
    EXTENDER_TRY(read_cluster(cluster, path, base_dir, cluster_name, access));
    YAML::Node user = named(root["users"], "user", user_name);
    if (user.IsMap()) EXTENDER_TRY(read_user(user, path, base_dir, user_name, access));
    if (access.client_cert_pem.empty() != access.client_key_pem.empty()) {
      return Error{path + ": user \"" + user_name +
                   "\" has a client certificate without its key, or a key without its certificate"};
    }
    return access;
  } catch (const std::exception& e) {
    return Error{path + ": " + e.what()};
  }
}

}  // namespace extender::kube
