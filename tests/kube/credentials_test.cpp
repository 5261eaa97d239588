// Credentials: what kubeconfig_access() and in_cluster_access() read from files and the
// environment, and which configurations they refuse.
#include "extender/kube/credentials.h"

#include <gtest/gtest.h>

#include "extender/kube/api_client.h"
#include "support/temp_files.h"
#include "support/test_pki.h"

namespace extender::kube {
namespace {

using testing::base64;
using testing::ScopedEnv;
using testing::TempDir;

constexpr const char* kFakePem = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n";

// A kubeconfig with two contexts; `cluster`/`user` are the YAML bodies of the selected entries.
std::string kubeconfig(const std::string& current, const std::string& cluster, const std::string& user) {
  return "apiVersion: v1\n"
         "kind: Config\n"
         "current-context: " +
         current +
         "\n"
         "clusters:\n"
         "- name: other\n"
         "  cluster:\n"
         "    server: https://other.example:6443\n"
         "- name: main\n"
         "  cluster:\n" +
         cluster +
         "users:\n"
         "- name: other-user\n"
         "  user:\n"
         "    token: not-this-one\n"
         "- name: main-user\n"
         "  user:\n" +
         user +
         "contexts:\n"
         "- name: other-context\n"
         "  context:\n"
         "    cluster: other\n"
         "    user: other-user\n"
         "- name: main-context\n"
         "  context:\n"
         "    cluster: main\n"
         "    user: main-user\n";
}

TEST(Kubeconfig, CaDataAndTokenOfTheCurrentContext) {
  TempDir dir;
  const std::string path = dir.write("config", kubeconfig("main-context",
                                                          "    server: https://api.example:6443/\n"
                                                          "    certificate-authority-data: " +
                                                              base64(kFakePem) + "\n",
                                                          "    token: sekret-token\n"));
  auto access = kubeconfig_access(path);
  ASSERT_TRUE(access) << access.message();
  EXPECT_EQ(access->server, "https://api.example:6443");  // the trailing slash goes
  EXPECT_EQ(access->ca_pem, kFakePem);
  EXPECT_EQ(access->ca_file, "");
  EXPECT_EQ(access->token, "sekret-token");
  EXPECT_EQ(access->token_file, "");
  EXPECT_EQ(access->client_cert_pem, "");
  EXPECT_EQ(access->client_key_pem, "");
}

TEST(Kubeconfig, RelativeFilesAreRelativeToTheKubeconfigFolder) {
  TempDir dir;
  testing::Issued ca = testing::issue("ca", testing::Role::kCa, nullptr);
  testing::Issued client = testing::issue("client", testing::Role::kClient, &ca);
  dir.write("conf/pki/client.crt", client.cert_pem);
  dir.write("conf/pki/client.key", client.key_pem);
  dir.write("conf/pki/ca.crt", ca.cert_pem);
  const std::string path = dir.write("conf/kubeconfig", kubeconfig("main-context",
                                                                   "    server: https://10.0.0.1:6443\n"
                                                                   "    certificate-authority: pki/ca.crt\n",
                                                                   "    client-certificate: pki/client.crt\n"
                                                                   "    client-key: pki/client.key\n"
                                                                   "    tokenFile: secrets/token\n"));
  auto access = kubeconfig_access(path);
  ASSERT_TRUE(access) << access.message();
  EXPECT_EQ(access->server, "https://10.0.0.1:6443");
  EXPECT_EQ(access->ca_file, dir.path() + "/conf/pki/ca.crt");
  EXPECT_EQ(access->ca_pem, "");
  EXPECT_EQ(access->client_cert_pem, client.cert_pem);  // read now, as data
  EXPECT_EQ(access->client_key_pem, client.key_pem);
  EXPECT_EQ(access->client_cert_file, dir.path() + "/conf/pki/client.crt");  // and again by the client when they change
  EXPECT_EQ(access->client_key_file, dir.path() + "/conf/pki/client.key");
  EXPECT_EQ(access->token_file, dir.path() + "/conf/secrets/token");  // read later, by the client
}

TEST(Kubeconfig, AbsoluteFilesStayAbsolute) {
  TempDir dir;
  const std::string ca = dir.write("elsewhere/ca.crt", kFakePem);
  const std::string token = dir.write("elsewhere/token", "t\n");
  const std::string path = dir.write("conf/kubeconfig", kubeconfig("main-context",
                                                                   "    server: https://10.0.0.1:6443\n"
                                                                   "    certificate-authority: " +
                                                                       ca + "\n",
                                                                   "    tokenFile: " + token + "\n"));
  auto access = kubeconfig_access(path);
  ASSERT_TRUE(access) << access.message();
  EXPECT_EQ(access->ca_file, ca);
  EXPECT_EQ(access->token_file, token);
  EXPECT_EQ(access->token, "");
}

TEST(Kubeconfig, ClientCertificateAndKeyData) {
  TempDir dir;
  testing::Issued ca = testing::issue("ca", testing::Role::kCa, nullptr);
  testing::Issued client = testing::issue("client", testing::Role::kClient, &ca);
  const std::string path = dir.write("config", kubeconfig("main-context",
                                                          "    server: https://api.example:6443\n"
                                                          "    certificate-authority-data: " +
                                                              base64(ca.cert_pem) + "\n",
                                                          "    client-certificate-data: " + base64(client.cert_pem) +
                                                              "\n"
                                                              "    client-key-data: " +
                                                              base64(client.key_pem) + "\n"));
  auto access = kubeconfig_access(path);
  ASSERT_TRUE(access) << access.message();
  EXPECT_EQ(access->ca_pem, ca.cert_pem);
  EXPECT_EQ(access->client_cert_pem, client.cert_pem);
  EXPECT_EQ(access->client_cert_file, "") << "data, not a file to watch";
  EXPECT_EQ(access->client_key_file, "");
  EXPECT_EQ(access->client_key_pem, client.key_pem);
  EXPECT_EQ(access->token, "");
  // The client accepts them (it parses the PEM up front)...
  auto api = ApiClient::create(*access, {});
  EXPECT_TRUE(api) << api.message();
  // ...and refuses a certificate that is not PEM.
  ClusterAccess broken = *access;
  broken.client_cert_pem = "not a certificate";
  auto refused = ApiClient::create(broken, {});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.message().find("not valid PEM"), std::string::npos) << refused.message();
}

TEST(Kubeconfig, TokenFile) {
  TempDir dir;
  dir.write("token", "from-file\n");
  const std::string path = dir.write(
      "config", kubeconfig("main-context", "    server: https://api.example:6443\n", "    tokenFile: token\n"));
  auto access = kubeconfig_access(path);
  ASSERT_TRUE(access) << access.message();
  EXPECT_EQ(access->token, "");
  EXPECT_EQ(access->token_file, dir.path() + "/token");
  EXPECT_EQ(access->ca_file, "");  // no CA given: the system's roots
  EXPECT_EQ(access->ca_pem, "");
}

TEST(Kubeconfig, ASingleContextNeedsNoCurrentContext) {
  TempDir dir;
  const std::string path = dir.write("config",
                                     "clusters:\n"
                                     "- name: c\n"
                                     "  cluster:\n"
                                     "    server: https://only.example\n"
                                     "users:\n"
                                     "- name: u\n"
                                     "  user:\n"
                                     "    token: only-token\n"
                                     "contexts:\n"
                                     "- name: x\n"
                                     "  context:\n"
                                     "    cluster: c\n"
                                     "    user: u\n");
  auto access = kubeconfig_access(path);
  ASSERT_TRUE(access) << access.message();
  EXPECT_EQ(access->server, "https://only.example");
  EXPECT_EQ(access->token, "only-token");
}

TEST(Kubeconfig, ExecPluginWithATokenUsesTheToken) {
  TempDir dir;
  const std::string path = dir.write("config", kubeconfig("main-context", "    server: https://api.example:6443\n",
                                                          "    token: static\n"
                                                          "    exec:\n"
                                                          "      command: aws\n"
                                                          "      apiVersion: client.authentication.k8s.io/v1beta1\n"));
  auto access = kubeconfig_access(path);
  ASSERT_TRUE(access) << access.message();
  EXPECT_EQ(access->token, "static");
}

struct Refusal {
  std::string name;
  std::string file;              // the kubeconfig text; "" for a file that does not exist
  std::string expected;          // a part of the error message
  bool names_kubeconfig = true;  // else it names the file the kubeconfig points at
};

TEST(Kubeconfig, Refusals) {
  const std::string server = "    server: https://api.example:6443\n";
  const std::string token = "    token: t\n";
  const std::vector<Refusal> cases = {
      {"missing current context", kubeconfig("staging", server, token),
       "current-context \"staging\" is not among its contexts"},
      {"insecure-skip-tls-verify", kubeconfig("main-context", server + "    insecure-skip-tls-verify: true\n", token),
       "insecure-skip-tls-verify is not supported"},
      {"tls-server-name", kubeconfig("main-context", server + "    tls-server-name: api.internal\n", token),
       "tls-server-name is not supported"},
      {"exec-only user",
       kubeconfig("main-context", server,
                  "    exec:\n      command: gke-gcloud-auth-plugin\n      apiVersion: "
                  "client.authentication.k8s.io/v1beta1\n"),
       "exec or auth-provider plugin, which is not supported"},
      {"auth-provider-only user", kubeconfig("main-context", server, "    auth-provider:\n      name: oidc\n"),
       "exec or auth-provider plugin, which is not supported"},
      {"certificate without key",
       kubeconfig("main-context", server, "    client-certificate-data: " + base64(kFakePem) + "\n"),
       "client certificate without its key"},
      {"invalid base64",
       kubeconfig("main-context", "    server: https://api.example\n    certificate-authority-data: '@@@'\n", token),
       "certificate-authority-data is not valid base64"},
      {"no server", kubeconfig("main-context", "    certificate-authority-data: " + base64(kFakePem) + "\n", token),
       "has no server"},
      {"missing client key file",
       kubeconfig("main-context", server, "    client-certificate: c.crt\n    client-key: c.key\n"),
       "/c.crt: cannot be read", false},
      {"not a mapping", "- just\n- a list\n", "not a kubeconfig"},
      {"no such file", "", "cannot be read"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    const std::string path = c.file.empty() ? dir.path() + "/missing" : dir.write("config", c.file);
    auto access = kubeconfig_access(path);
    ASSERT_FALSE(access);
    EXPECT_NE(access.message().find(c.expected), std::string::npos) << access.message();
    if (c.names_kubeconfig) {
      EXPECT_NE(access.message().find(path), std::string::npos) << "errors name the file: " << access.message();
    }
  }
}

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::optional<std::string>(v) : std::nullopt;
}

TEST(InCluster, ServiceAccountFilesAndEnvironment) {
  const auto host_before = env("KUBERNETES_SERVICE_HOST");
  const auto port_before = env("KUBERNETES_SERVICE_PORT");
  TempDir dir;
  dir.write("token", "sa-token\n");
  dir.write("ca.crt", kFakePem);
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.96.0.1");
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
    auto access = in_cluster_access(dir.path());
    ASSERT_TRUE(access) << access.message();
    EXPECT_EQ(access->server, "https://10.96.0.1:443");
    EXPECT_EQ(access->token_file, dir.path() + "/token");  // re-read by the client: tokens rotate
    EXPECT_EQ(access->ca_file, dir.path() + "/ca.crt");
    EXPECT_EQ(access->token, "");
  }
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", "fd00:10:96::1");
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "6443");
    auto access = in_cluster_access(dir.path());
    ASSERT_TRUE(access) << access.message();
    EXPECT_EQ(access->server, "https://[fd00:10:96::1]:6443");
    auto api = ApiClient::create(*access, {});
    EXPECT_TRUE(api) << "the bracketed IPv6 address is a valid server address: " << api.message();
  }
  // The process environment is as it was.
  EXPECT_EQ(env("KUBERNETES_SERVICE_HOST"), host_before);
  EXPECT_EQ(env("KUBERNETES_SERVICE_PORT"), port_before);
}

TEST(InCluster, Refusals) {
  TempDir dir;
  dir.write("ca.crt", kFakePem);
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", std::nullopt);
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
    auto access = in_cluster_access(dir.path());
    ASSERT_FALSE(access);
    EXPECT_NE(access.message().find("KUBERNETES_SERVICE_HOST"), std::string::npos) << access.message();
  }
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.96.0.1");
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
    auto access = in_cluster_access(dir.path());  // no token file
    ASSERT_FALSE(access);
    EXPECT_NE(access.message().find(dir.path() + "/token"), std::string::npos) << access.message();
  }
}

}  // namespace
}  // namespace extender::kube
