// ApiClient against the fake API server: server addresses, bearer tokens (static, from a file,
// re-read after a 401 and on the reload interval), streams (pieces, error bodies, cancellation,
// breaking off, going silent), TCP keepalive and, over TLS, the CA given as data or file and client certificates.
#include "extender/kube/api_client.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <optional>

#include "extender/kube/credentials.h"
#include "support/fake_api_server.h"
#include "support/temp_files.h"
#include "support/test_pki.h"
#include "support/trickle_server.h"

namespace extender::kube {
namespace {

using namespace std::chrono_literals;
using testing::FakeApiServer;
using testing::json;
using testing::TempDir;

std::unique_ptr<ApiClient> client_for(const ClusterAccess& access, ApiClient::Options options = {}) {
  auto c = ApiClient::create(access, options);
  if (!c) throw std::runtime_error(c.message());
  return std::move(*c);
}

TEST(ApiClient, ServerAddresses) {
  struct Case {
    std::string server;
    std::string error;  // "" when accepted
  };
  const std::vector<Case> cases = {
      {"https://api.example:6443", ""},
      {"https://api.example", ""},
      {"http://127.0.0.1:8080", ""},
      {"https://[fd00::1]:6443", ""},
      {"api.example:6443", "must start with https://"},
      {"ftp://api.example", "must start with https://"},
      {"https://api.example:6443/prefix", "must not carry a path"},
      {"https://api.example:99999", "invalid port"},
      {"https://api.example:x", "invalid port"},
      {"https://:6443", "has no host"},
      {"https://[fd00::1:6443", "is malformed"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.server);
    ClusterAccess access;
    access.server = c.server;
    auto api = ApiClient::create(access, {});
    if (c.error.empty()) {
      ASSERT_TRUE(api) << api.message();
      EXPECT_EQ((*api)->server(), c.server);
    } else {
      ASSERT_FALSE(api);
      EXPECT_NE(api.message().find(c.error), std::string::npos) << api.message();
    }
  }
}

TEST(ApiClient, GetAndPostCarryTheTokenAndBody) {
  FakeApiServer server;
  server.route("GET", "/version", [](const httplib::Request&, httplib::Response& res) {
    FakeApiServer::reply(res, 200, json{{"gitVersion", "v1.29.0"}});
  });
  server.route("POST", "/echo", [](const httplib::Request& req, httplib::Response& res) {
    res.status = 201;
    res.set_content(req.body, "application/json");
  });
  ClusterAccess access;
  access.server = server.url();
  access.token = "static-token";
  auto api = client_for(access);
  auto got = api->get("/version", 2s);
  ASSERT_TRUE(got) << got.message();
  EXPECT_EQ(got->status, 200);
  EXPECT_EQ(json::parse(got->body)["gitVersion"], "v1.29.0");
  auto posted = api->post("/echo", R"({"a":1})", 2s);
  ASSERT_TRUE(posted) << posted.message();
  EXPECT_EQ(posted->status, 201);
  EXPECT_EQ(posted->body, R"({"a":1})");
  const auto seen = server.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].authorization, "Bearer static-token");
  EXPECT_EQ(seen[1].authorization, "Bearer static-token");
  EXPECT_EQ(seen[1].body, R"({"a":1})");
}

TEST(ApiClient, RotatedTokenFileIsReadAgainAfterA401) {
  FakeApiServer server;
  std::mutex mu;
  std::string accepted = "old-token";
  server.route("GET", "/api/v1/nodes", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mu);
    if (req.get_header_value("Authorization") == "Bearer " + accepted) {
      FakeApiServer::reply(res, 200, json{{"kind", "NodeList"}, {"items", json::array()}});
    } else {
      FakeApiServer::reply(res, 401, testing::status_body(401, "Unauthorized", "Unauthorized"));
    }
  });
  TempDir dir;
  const std::string token_file = dir.write("token", "old-token\n");
  ClusterAccess access;
  access.server = server.url();
  access.token_file = token_file;
  ApiClient::Options options;
  options.token_reload = std::chrono::hours(1);  // only a 401 makes it read the file again
  auto api = client_for(access, options);

  auto first = api->get("/api/v1/nodes", 2s);
  ASSERT_TRUE(first) << first.message();
  EXPECT_EQ(first->status, 200);

  // The kubelet rotates the token; the API server stops accepting the old one.
  dir.write("token", "new-token\n");
  {
    std::lock_guard lock(mu);
    accepted = "new-token";
  }
  auto second = api->get("/api/v1/nodes", 2s);
  ASSERT_TRUE(second) << second.message();
  EXPECT_EQ(second->status, 200);

  const auto seen = server.requests("GET", "/api/v1/nodes");
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].authorization, "Bearer old-token");  // the newline of the file is not part of it
  EXPECT_EQ(seen[1].authorization, "Bearer old-token");  // still cached: 401
  EXPECT_EQ(seen[2].authorization, "Bearer new-token");  // read again, retried once

  // A token that stays refused is retried once, not more.
  {
    std::lock_guard lock(mu);
    accepted = "something-else";
  }
  auto third = api->get("/api/v1/nodes", 2s);
  ASSERT_TRUE(third) << third.message();
  EXPECT_EQ(third->status, 401);
  EXPECT_EQ(server.requests("GET", "/api/v1/nodes").size(), 5u);
}

TEST(ApiClient, StaticTokenIsNotRetriedAfterA401) {
  FakeApiServer server;
  server.route("GET", "/api/v1/nodes", [](const httplib::Request&, httplib::Response& res) {
    FakeApiServer::reply(res, 401, testing::status_body(401, "Unauthorized", "Unauthorized"));
  });
  ClusterAccess access;
  access.server = server.url();
  access.token = "static";
  auto api = client_for(access);
  auto got = api->get("/api/v1/nodes", 2s);
  ASSERT_TRUE(got) << got.message();
  EXPECT_EQ(got->status, 401);
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(ApiClient, TokenFileIsReadAgainOnTheReloadInterval) {
  FakeApiServer server;
  server.route("GET", "/healthz",
               [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
  TempDir dir;
  ClusterAccess access;
  access.server = server.url();
  access.token_file = dir.write("token", "one");
  ApiClient::Options options;
  options.token_reload = 0ms;  // every request
  auto api = client_for(access, options);
  ASSERT_TRUE(api->get("/healthz", 2s));
  dir.write("token", "two\r\n");
  ASSERT_TRUE(api->get("/healthz", 2s));
  const auto seen = server.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].authorization, "Bearer one");
  EXPECT_EQ(seen[1].authorization, "Bearer two");
}

TEST(ApiClient, MissingTokenFileIsRefusedAtCreation) {
  TempDir dir;
  ClusterAccess access;
  access.server = "https://api.example";
  access.token_file = dir.path() + "/nope";
  auto api = ApiClient::create(access, {});
  ASSERT_FALSE(api);
  EXPECT_NE(api.message().find(dir.path() + "/nope"), std::string::npos) << api.message();
}

TEST(ApiClient, TransportErrorsNameTheRequest) {
  std::string url;
  {
    FakeApiServer gone;  // a port that was just free
    url = gone.url();
  }
  ClusterAccess access;
  access.server = url;
  auto api = client_for(access);
  auto got = api->get("/api/v1/nodes?limit=1", 2s);
  ASSERT_FALSE(got);
  EXPECT_NE(got.message().find("GET " + url + "/api/v1/nodes?limit=1"), std::string::npos) << got.message();
}

// An answer trickled a byte at a time, each long before any per-read timeout, ends at the call's
// deadline instead of when the last byte comes.
TEST(ApiClient, ATrickledAnswerEndsAtTheCallsDeadline) {
  const std::string body = R"({"kind":"Binding","apiVersion":"v1","metadata":{}})";
  testing::TrickleServer server("HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: " +
                                    std::to_string(body.size()) + "\r\n\r\n" + body,
                                50ms);
  ClusterAccess access;
  access.server = server.url();
  auto api = client_for(access);
  for (const std::string method : {"GET", "POST", "PUT", "PATCH"}) {
    const std::string path = "/api/v1/namespaces/ns/pods/p/binding";
    auto got = method == "GET"    ? api->get(path, 300ms)
               : method == "POST" ? api->post(path, "{}", 300ms)
               : method == "PUT"  ? api->put(path, "{}", 300ms)
                                  : api->merge_patch(path, "{}", 300ms);
    ASSERT_FALSE(got) << method << ": the whole answer came (" << server.bytes_written() << " bytes)";
    EXPECT_NE(got.message().find(method + " " + server.url() + path + ": no complete answer within the call's 300 ms"),
              std::string::npos)
        << got.message();
  }
  EXPECT_EQ(server.answers_completed(), 0);
}

// The retry after a 401 (a rotated token) is made within what is left of the first attempt's
// deadline, not with a deadline of its own.
TEST(ApiClient, TheRetryAfterA401SharesTheCallsDeadline) {
  FakeApiServer server;
  std::atomic<int> calls{0};
  server.route("GET", "/api/v1/nodes", [&](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(1200ms);
    if (calls++ == 0) return FakeApiServer::reply(res, 401, testing::status_body(401, "Unauthorized", "Unauthorized"));
    FakeApiServer::reply(res, 200, json{{"kind", "NodeList"}, {"items", json::array()}});
  });
  TempDir dir;
  ClusterAccess access;
  access.server = server.url();
  access.token_file = dir.write("token", "rotated");
  auto api = client_for(access);
  auto got = api->get("/api/v1/nodes", 2000ms);
  ASSERT_FALSE(got) << "the retry got a deadline of its own: HTTP " << got->status;
  EXPECT_NE(got.message().find("no complete answer within the call's 2000 ms"), std::string::npos) << got.message();
  EXPECT_EQ(server.requests("GET", "/api/v1/nodes").size(), 2u) << "the retry was sent, with the time left";
}

TEST(ApiClient, StreamDeliversPiecesAndCollectsErrorBodies) {
  FakeApiServer server;
  testing::WatchDesk desk;
  server.route("GET", "/stream",
               [&](const httplib::Request& req, httplib::Response& res) { desk.accept(server, req, res); });
  server.route("GET", "/denied", [](const httplib::Request&, httplib::Response& res) {
    FakeApiServer::reply(res, 403, testing::status_body(403, "Forbidden", "pods is forbidden"));
  });
  ClusterAccess access;
  access.server = server.url();
  auto api = client_for(access);

  std::string received;
  StreamHandle handle;
  std::thread reader([&] {
    auto r = api->stream(
        "/stream", 10s,
        [&](std::string_view piece) {
          received.append(piece);
          return true;
        },
        handle);
    ASSERT_TRUE(r) << r.message();
    EXPECT_EQ(r->status, 200);
  });
  auto watch = desk.take();
  ASSERT_TRUE(watch);
  watch->feed->send("abc");
  watch->feed->send("déf\n");
  watch->feed->end();
  reader.join();
  EXPECT_EQ(received, "abcdéf\n");

  StreamHandle other;
  bool called = false;
  auto denied = api->stream(
      "/denied", 10s, [&](std::string_view) { return called = true; }, other);
  ASSERT_TRUE(denied) << denied.message();
  EXPECT_EQ(denied->status, 403);
  EXPECT_FALSE(called) << "an error body is not stream data";
  EXPECT_EQ(status_message(*denied), "pods is forbidden");
}

TEST(ApiClient, CancellingAStreamEndsItFromAnotherThread) {
  FakeApiServer server;
  testing::WatchDesk desk;
  server.route("GET", "/stream",
               [&](const httplib::Request& req, httplib::Response& res) { desk.accept(server, req, res); });
  ClusterAccess access;
  access.server = server.url();
  auto api = client_for(access);
  StreamHandle handle;
  std::atomic<bool> done{false};
  std::atomic<std::size_t> received{0};
  std::thread reader([&] {
    auto r = api->stream(
        "/stream", 60s,
        [&](std::string_view piece) {
          received += piece.size();
          return true;
        },
        handle);
    done = true;
  });
  auto watch = desk.take();
  ASSERT_TRUE(watch);
  watch->feed->send("{\"partial\":");  // mid-line: the server keeps quiet from here on
  ASSERT_TRUE(testing::eventually([&] { return received.load() > 0; }));
  handle.cancel();
  EXPECT_TRUE(testing::eventually([&] { return done.load(); }, 5000ms)) << "cancel() must end a quiet stream";
  reader.join();
  EXPECT_TRUE(handle.cancelled());
  // A handle that was cancelled before the stream starts ends it at once.
  StreamHandle cancelled;
  cancelled.cancel();
  auto r = api->stream(
      "/stream", 60s, [](std::string_view) { return true; }, cancelled);
  EXPECT_FALSE(r);
}

TEST(ApiClient, AStreamThatBreaksOffOrGoesSilentIsAnError) {
  FakeApiServer server;
  testing::WatchDesk desk;
  server.route("GET", "/stream",
               [&](const httplib::Request& req, httplib::Response& res) { desk.accept(server, req, res); });
  ClusterAccess access;
  access.server = server.url();
  auto api = client_for(access);
  // The idle limit also bounds the wait for the response's head: long enough for a slow first worker.
  constexpr auto kIdle = 1000ms;
  for (bool freeze : {false, true}) {
    SCOPED_TRACE(freeze ? "silent" : "cut");
    StreamHandle handle;
    std::vector<int> statuses;
    std::optional<Result<ApiReply>> result;
    std::chrono::steady_clock::duration silent_for{};
    std::atomic<bool> delivered{false};
    std::thread reader([&] {
      auto last = std::chrono::steady_clock::now();
      result = api->stream(
          "/stream", kIdle,
          [&](std::string_view) {
            last = std::chrono::steady_clock::now();
            delivered = true;
            return true;
          },
          handle, [&](int status) { statuses.push_back(status); });
      silent_for = std::chrono::steady_clock::now() - last;
    });
    auto watch = desk.take();
    ASSERT_TRUE(watch);
    watch->feed->send("{\"type\":\"ADDED\"}\n");
    // A reset discards what the client has not read yet: break off only after the piece arrived.
    EXPECT_TRUE(testing::eventually([&] { return delivered.load(); }, 5000ms));
    if (freeze) {
      watch->feed->freeze();
    } else {
      watch->feed->cut();
    }
    reader.join();
    ASSERT_TRUE(result);
    ASSERT_FALSE(*result) << "a response that did not end is not a reply";
    EXPECT_NE(result->message().find("the response broke off"), std::string::npos) << result->message();
    EXPECT_EQ(statuses, std::vector<int>{200});
    if (freeze) {
      EXPECT_GE(silent_for, kIdle);
      EXPECT_LT(silent_for, kIdle + 3s);
    }
  }
}

TEST(ApiClient, KeepaliveOnApiSockets) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  set_keepalive(fd);
  auto get = [&](int level, int name) {
    int value = -1;
    socklen_t len = sizeof value;
    EXPECT_EQ(::getsockopt(fd, level, name, &value, &len), 0);
    return value;
  };
  EXPECT_EQ(get(SOL_SOCKET, SO_KEEPALIVE), 1);
  EXPECT_EQ(get(IPPROTO_TCP, TCP_KEEPIDLE), 15);
  EXPECT_EQ(get(IPPROTO_TCP, TCP_KEEPINTVL), 5);
  EXPECT_EQ(get(IPPROTO_TCP, TCP_KEEPCNT), 3);
  ::close(fd);
}

TEST(ApiClient, StatusMessage) {
  EXPECT_EQ(status_message({409, testing::status_body(409, "Conflict", "already there").dump()}), "already there");
  EXPECT_EQ(status_message({500, "line one\nline two"}), "line one line two");
  EXPECT_EQ(status_message({502, std::string(1000, 'x')}).size(), 300u);
}

// TLS: the server's certificate is checked against the CA from the kubeconfig, and client
// certificates authenticate.
class Tls : public ::testing::Test {
 protected:
  void SetUp() override {
    ca_ = testing::issue("test-ca", testing::Role::kCa, nullptr);
    server_cert_ = testing::issue("kube-apiserver", testing::Role::kServer, &ca_);
    client_cert_ = testing::issue("system:kube-scheduler-extender", testing::Role::kClient, &ca_);
    other_ca_ = testing::issue("other-ca", testing::Role::kCa, nullptr);
  }

  std::unique_ptr<FakeApiServer> https_server(bool require_client_certs) {
    auto ssl = std::make_unique<httplib::SSLServer>(server_cert_.cert.get(), server_cert_.key.get(),
                                                    require_client_certs ? testing::store_of(ca_) : nullptr);
    if (!ssl->is_valid()) throw std::runtime_error("SSLServer is not valid");
    auto server = std::make_unique<FakeApiServer>(std::move(ssl), "https");
    server->route("GET", "/version", [](const httplib::Request&, httplib::Response& res) {
      FakeApiServer::reply(res, 200, json{{"gitVersion", "v1.29.0"}});
    });
    return server;
  }

  testing::Issued ca_, server_cert_, client_cert_, other_ca_;
};

TEST_F(Tls, CaAsDataOrFile) {
  auto server = https_server(false);
  TempDir dir;
  {
    ClusterAccess access;
    access.server = server->url();
    access.ca_pem = ca_.cert_pem;
    auto api = client_for(access);
    for (int i = 0; i < 2; ++i) {  // a fresh connection and a pooled one
      auto got = api->get("/version", 5s);
      ASSERT_TRUE(got) << got.message();
      EXPECT_EQ(got->status, 200);
    }
  }
  {
    ClusterAccess access;
    access.server = server->url();
    access.ca_file = dir.write("ca.crt", ca_.cert_pem);
    auto api = client_for(access);
    auto got = api->get("/version", 5s);
    ASSERT_TRUE(got) << got.message();
    EXPECT_EQ(got->status, 200);
  }
  {
    ClusterAccess access;
    access.server = server->url();
    access.ca_pem = other_ca_.cert_pem;
    auto api = client_for(access);
    auto got = api->get("/version", 5s);
    ASSERT_FALSE(got) << "a server certificate from another CA must not be trusted";
    EXPECT_NE(got.message().find("not trusted"), std::string::npos) << got.message();
  }
  {
    ClusterAccess access;
    access.server = server->url();
    access.ca_file = dir.write("other.crt", other_ca_.cert_pem);
    auto api = client_for(access);
    auto got = api->get("/version", 5s);
    ASSERT_FALSE(got) << "a server certificate from another CA must not be trusted";
  }
  EXPECT_EQ(server->requests().size(), 3u);
}

// The kubeconfig's CA is the only one trusted: not the system's roots besides (OpenSSL's default
// verify paths, which SSL_CERT_FILE points at here).
TEST_F(Tls, OnlyTheGivenCaIsTrusted) {
  testing::Issued stranger = testing::issue("public-looking-server", testing::Role::kServer, &other_ca_);
  auto ssl = std::make_unique<httplib::SSLServer>(stranger.cert.get(), stranger.key.get());
  ASSERT_TRUE(ssl->is_valid());
  FakeApiServer server(std::move(ssl), "https");
  server.route("GET", "/version",
               [](const httplib::Request&, httplib::Response& res) { res.set_content("{}", "application/json"); });
  TempDir dir;
  testing::ScopedEnv system_roots("SSL_CERT_FILE", dir.write("system-roots.pem", other_ca_.cert_pem));
  testing::ScopedEnv system_dir("SSL_CERT_DIR", dir.path() + "/no-such-dir");
  for (bool as_file : {false, true}) {
    SCOPED_TRACE(as_file ? "CA file" : "CA data");
    ClusterAccess access;
    access.server = server.url();
    if (as_file) {
      access.ca_file = dir.write("kubeconfig-ca.crt", ca_.cert_pem);
    } else {
      access.ca_pem = ca_.cert_pem;
    }
    auto api = client_for(access);
    auto got = api->get("/version", 5s);
    EXPECT_FALSE(got) << "a server certified by a CA other than the kubeconfig's was trusted";
  }
  {
    // CA data that holds no certificate trusts nothing (not the system's roots instead).
    ClusterAccess access;
    access.server = server.url();
    access.ca_pem = "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n";
    auto api = client_for(access);
    auto got = api->get("/version", 5s);
    EXPECT_FALSE(got);
  }
  {
    // Without a CA in the kubeconfig, the system's roots are what is trusted.
    ClusterAccess access;
    access.server = server.url();
    auto api = client_for(access);
    auto got = api->get("/version", 5s);
    EXPECT_TRUE(got) << got.message();
  }
}

TEST_F(Tls, ClientCertificates) {
  auto server = https_server(true);
  {
    ClusterAccess access;
    access.server = server->url();
    access.ca_pem = ca_.cert_pem;
    access.client_cert_pem = client_cert_.cert_pem;
    access.client_key_pem = client_cert_.key_pem;
    auto api = client_for(access);
    auto got = api->get("/version", 5s);
    ASSERT_TRUE(got) << got.message();
    EXPECT_EQ(got->status, 200);
  }
  {
    ClusterAccess access;
    access.server = server->url();
    access.ca_pem = ca_.cert_pem;
    auto api = client_for(access);
    auto got = api->get("/version", 5s);
    EXPECT_FALSE(got) << "the server asks for a client certificate";
  }
  EXPECT_EQ(server->requests().size(), 1u);
}

// Client certificate and key as files, laid out as a Secret volume (tls.crt -> ..data/tls.crt,
// ..data -> a timestamped folder), behind a kubeconfig; a server that records the CN each request
// presents; a client that keeps making requests while the files are replaced.
class CertRotation : public Tls {
 protected:
  void SetUp() override {
    Tls::SetUp();
    server_ = https_server(true);
    server_->route("GET", "/whoami", [this](const httplib::Request& req, httplib::Response& res) {
      std::string cn = "(none)";
      if (X509* peer = SSL_get1_peer_certificate(req.ssl)) {
        char buf[256] = {};
        if (X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, buf, sizeof buf) > 0) cn = buf;
        X509_free(peer);
      }
      {
        std::lock_guard lock(mu_);
        cns_.push_back(cn);
      }
      FakeApiServer::reply(res, 200, json{{"cn", cn}});
    });
    server_->route("GET", "/slow", [](const httplib::Request&, httplib::Response& res) {
      std::this_thread::sleep_for(1500ms);
      FakeApiServer::reply(res, 200, json::object());
    });
    dir_.write("ca.crt", ca_.cert_pem);
    publish("..2024_01", client_cert_);
    const std::string kubeconfig =
        dir_.write("kubeconfig",
                   "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                   "contexts:\n- name: c\n  context: {cluster: k, user: u}\n"
                   "clusters:\n- name: k\n  cluster:\n    server: " +
                       server_->url() +
                       "\n    certificate-authority: ca.crt\n"
                       "users:\n- name: u\n  user:\n    client-certificate: tls.crt\n    client-key: tls.key\n");
    std::filesystem::create_symlink("..data/tls.crt", dir_.path() + "/tls.crt");
    std::filesystem::create_symlink("..data/tls.key", dir_.path() + "/tls.key");
    auto access = kubeconfig_access(kubeconfig);
    if (!access) throw std::runtime_error(access.message());
    api_ = client_for(*access);
  }
  void TearDown() override {
    stop_ = true;
    if (loop_.joinable()) loop_.join();
    api_.reset();
    server_.reset();  // its threads stop before the files they serve are removed
  }

  // Writes the pair into folder `version` and points ..data at it in one rename.
  void publish(const std::string& version, const testing::Issued& pair) {
    dir_.write(version + "/tls.crt", pair.cert_pem);
    dir_.write(version + "/tls.key", pair.key_pem);
    const std::string tmp = dir_.path() + "/..data_tmp";
    std::filesystem::create_symlink(version, tmp);
    std::filesystem::rename(tmp, dir_.path() + "/..data");
  }

  void start_requests() {
    loop_ = std::thread([this] {
      while (!stop_) {
        auto got = api_->get("/whoami", 5s);
        if (!got || got->status != 200) ++failures_;
        ++requests_;
        std::this_thread::sleep_for(10ms);
      }
    });
  }
  std::vector<std::string> cns() {
    std::lock_guard lock(mu_);
    return cns_;
  }
  bool last_cn_is(const std::string& cn) {
    auto all = cns();
    return !all.empty() && all.back() == cn;
  }

  std::unique_ptr<FakeApiServer> server_;
  TempDir dir_;
  std::unique_ptr<ApiClient> api_;
  std::thread loop_;
  std::atomic<bool> stop_{false};
  std::atomic<int> failures_{0};
  std::atomic<int> requests_{0};
  std::mutex mu_;
  std::vector<std::string> cns_;
};

TEST_F(CertRotation, ASwappedSecretVolumeIsPresentedByNewConnectionsWithNoRequestFailing) {
  start_requests();
  ASSERT_TRUE(testing::eventually([&] { return last_cn_is("system:kube-scheduler-extender"); }));
  // A request in flight across the swap finishes on its connection.
  std::optional<Result<ApiReply>> slow;
  std::thread slow_request([&] { slow = api_->get("/slow", 5s); });
  std::this_thread::sleep_for(100ms);
  publish("..2024_02", testing::issue("extender-rotated", testing::Role::kClient, &ca_));
  ASSERT_TRUE(testing::eventually([&] { return last_cn_is("extender-rotated"); }, 5000ms)) << cns().back();
  slow_request.join();
  ASSERT_TRUE(slow && *slow) << (slow ? slow->message() : "no answer");
  EXPECT_EQ((*slow)->status, 200);
  const int seen = requests_;
  ASSERT_TRUE(testing::eventually([&] { return requests_ >= seen + 20; }));
  stop_ = true;
  loop_.join();
  EXPECT_EQ(failures_, 0);
  // Once the new certificate was presented, the old one never was again (the pool was emptied).
  const auto all = cns();
  const auto first_new = std::find(all.begin(), all.end(), "extender-rotated");
  EXPECT_EQ(std::count(first_new, all.end(), "system:kube-scheduler-extender"), 0);
  EXPECT_GE(std::count(all.begin(), all.end(), "system:kube-scheduler-extender"), 1);
}

TEST_F(CertRotation, AHalfReplacedPairKeepsThePreviousOneUntilTheKeyFollows) {
  start_requests();
  ASSERT_TRUE(testing::eventually([&] { return last_cn_is("system:kube-scheduler-extender"); }));
  // Plain files now, each replaced by writing a new file and renaming it over the old one.
  const testing::Issued next = testing::issue("extender-next", testing::Role::kClient, &ca_);
  std::filesystem::remove(dir_.path() + "/tls.crt");
  std::filesystem::remove(dir_.path() + "/tls.key");
  dir_.write("tls.key", client_cert_.key_pem);
  dir_.write("tls.crt.tmp", next.cert_pem);
  std::filesystem::rename(dir_.path() + "/tls.crt.tmp", dir_.path() + "/tls.crt");
  std::this_thread::sleep_for(1500ms);  // more than one check interval with a mismatched pair
  EXPECT_TRUE(last_cn_is("system:kube-scheduler-extender"));
  dir_.write("tls.key.tmp", next.key_pem);
  std::filesystem::rename(dir_.path() + "/tls.key.tmp", dir_.path() + "/tls.key");
  ASSERT_TRUE(testing::eventually([&] { return last_cn_is("extender-next"); }, 5000ms)) << cns().back();
  stop_ = true;
  loop_.join();
  EXPECT_EQ(failures_, 0);
}

}  // namespace
}  // namespace extender::kube
