#include "extender/kube/api_client.h"

#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <charconv>

#include "extender/common/blocking_region.h"
#include "extender/kube/watch_event.h"

namespace extender::kube {
namespace {

constexpr std::size_t kMaxReplyBytes = std::size_t{512} << 20;

template <class T>
void set_timeout(T& client, std::chrono::milliseconds timeout, std::chrono::milliseconds connect) {
  auto to_timeval = [](std::chrono::milliseconds d, auto&& set) {
    set(static_cast<time_t>(d.count() / 1000), static_cast<time_t>((d.count() % 1000) * 1000));
  };
  to_timeval(std::min(timeout, connect), [&](time_t s, time_t us) { client.set_connection_timeout(s, us); });
  to_timeval(timeout, [&](time_t s, time_t us) { client.set_read_timeout(s, us); });
  to_timeval(timeout, [&](time_t s, time_t us) { client.set_write_timeout(s, us); });
}

std::string describe(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection: return "cannot connect";
    case httplib::Error::Read: return "connection failed while reading (timeout or reset)";
    case httplib::Error::Write: return "connection failed while writing";
    case httplib::Error::SSLConnection: return "TLS handshake failed";
    case httplib::Error::SSLLoadingCerts: return "cannot load the CA or client certificates";
    case httplib::Error::SSLServerVerification: return "the server's certificate is not trusted by the configured CA";
    case httplib::Error::Canceled: return "cancelled";
    case httplib::Error::ConnectionTimeout: return "connection timed out";
    default: return "request failed (" + httplib::to_string(error) + ")";
  }
}

struct Pem {
  X509* cert = nullptr;
  EVP_PKEY* key = nullptr;
  Pem(const std::string& cert_pem, const std::string& key_pem) {
    BIO* cb = BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()));
    cert = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
    BIO_free(cb);
    BIO* kb = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
    key = PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr);
    BIO_free(kb);
  }
  ~Pem() {
    if (cert) X509_free(cert);
    if (key) EVP_PKEY_free(key);
  }
  Pem(const Pem&) = delete;
  Pem& operator=(const Pem&) = delete;
};

// What changes when a file is rewritten or replaced (a Secret volume swaps a symlink), or "".
std::string file_stamp(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return {};
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace

void StreamHandle::cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  if (client_) client_->stop();
}

bool StreamHandle::cancelled() const {
  std::lock_guard lock(mu_);
  return cancelled_;
}

void StreamHandle::attach(httplib::ClientImpl* client) {
  std::lock_guard lock(mu_);
  client_ = client;
}

void set_keepalive(int socket) {
  const int on = 1, idle = 15, interval = 5, count = 3;
  ::setsockopt(socket, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  ::setsockopt(socket, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(socket, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(socket, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

std::string status_message(const ApiReply& reply) {
  nlohmann::json doc = parse_bounded(reply.body);
  if (doc.is_object() && doc.contains("message") && doc["message"].is_string()) {
    return doc["message"].get<std::string>();
  }
  std::string text = reply.body.substr(0, 300);
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return text;
}

ApiClient::ApiClient(ClusterAccess access, Options options)
    : access_(std::move(access)),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : steady_clock()),
      cert_pem_(access_.client_cert_pem),
      key_pem_(access_.client_key_pem),
      deadlines_(std::chrono::milliseconds(50), clock_) {}
ApiClient::~ApiClient() {
  if (ca_data_fd_ >= 0) ::close(ca_data_fd_);
}

Result<std::unique_ptr<ApiClient>> ApiClient::create(ClusterAccess access, Options options) {
  std::unique_ptr<ApiClient> c(new ApiClient(std::move(access), std::move(options)));
  std::string_view url = c->access_.server;
  if (url.rfind("https://", 0) == 0) {
    url.remove_prefix(8);
  } else if (url.rfind("http://", 0) == 0) {
    url.remove_prefix(7);
    c->https_ = false;
    c->port_ = 80;
  } else {
    return Error{"API server address \"" + c->access_.server + "\" must start with https://"};
  }
  if (auto slash = url.find('/'); slash != std::string_view::npos) {
    return Error{"API server address \"" + c->access_.server + "\" must not carry a path"};
  }
  std::string_view port;
  if (!url.empty() && url[0] == '[') {
    auto close = url.find(']');
    if (close == std::string_view::npos) return Error{"API server address \"" + c->access_.server + "\" is malformed"};
    c->host_ = std::string(url.substr(1, close - 1));
    if (close + 1 < url.size() && url[close + 1] == ':') port = url.substr(close + 2);
  } else {
    auto colon = url.rfind(':');
    c->host_ = std::string(url.substr(0, colon));
    if (colon != std::string_view::npos) port = url.substr(colon + 1);
  }
  if (!port.empty()) {
    auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), c->port_);
    if (ec != std::errc() || ptr != port.data() + port.size() || c->port_ <= 0 || c->port_ > 65535) {
      return Error{"API server address \"" + c->access_.server + "\" has an invalid port"};
    }
  }
  if (c->host_.empty()) return Error{"API server address \"" + c->access_.server + "\" has no host"};
  if (!c->access_.client_cert_pem.empty()) {
    // Fail early on unreadable client credentials rather than at the first request.
    Pem pem(c->access_.client_cert_pem, c->access_.client_key_pem);
    if (!pem.cert || !pem.key) return Error{"the client certificate or key is not valid PEM"};
  }
  if (!c->access_.token_file.empty()) {
    if (auto t = read_small_file(c->access_.token_file); !t) return t.error();
  }
  if (c->https_ && c->access_.ca_file.empty() && !c->access_.ca_pem.empty()) {
    c->ca_data_fd_ = ::memfd_create("cluster-ca", MFD_CLOEXEC);  // closed by ~ApiClient
    if (c->ca_data_fd_ < 0) return Error{"cannot hold the cluster's CA data (memfd_create failed)"};
    const std::string& pem = c->access_.ca_pem;
    for (std::size_t done = 0; done < pem.size();) {
      const ssize_t n = ::write(c->ca_data_fd_, pem.data() + done, pem.size() - done);
      if (n <= 0) return Error{"cannot hold the cluster's CA data (write failed)"};
      done += static_cast<std::size_t>(n);
    }
    c->ca_data_path_ = "/proc/self/fd/" + std::to_string(c->ca_data_fd_);
  }
  return c;
}

ApiClient::Pooled ApiClient::make_client() {
  Pooled out;
  if (!https_) {
    out.client = std::make_unique<httplib::ClientImpl>(host_, port_);
  } else {
    std::unique_ptr<httplib::SSLClient> tls;
    std::string cert_pem, key_pem;
    {
      std::lock_guard lock(cert_mu_);
      cert_pem = cert_pem_;
      key_pem = key_pem_;
      out.generation = cert_generation_;
    }
    if (!cert_pem.empty()) {
      Pem pem(cert_pem, key_pem);
      tls = std::make_unique<httplib::SSLClient>(host_, port_, pem.cert, pem.key);
    } else {
      tls = std::make_unique<httplib::SSLClient>(host_, port_);
    }
    if (!access_.ca_file.empty()) {
      tls->set_ca_cert_path(access_.ca_file);
    } else if (!ca_data_path_.empty()) {
      tls->set_ca_cert_path(ca_data_path_);
    }
    tls->enable_server_certificate_verification(true);
    out.client = std::move(tls);
  }
  out.client->set_keep_alive(true);
  out.client->set_tcp_nodelay(true);
  out.client->set_socket_options([](socket_t sock) { set_keepalive(sock); });
  out.client->set_default_headers({{"User-Agent", options_.user_agent}, {"Accept", "application/json"}});
  return out;
}

void ApiClient::refresh_client_cert() {
  if (access_.client_cert_file.empty() && access_.client_key_file.empty()) return;
  std::lock_guard lock(cert_mu_);
  const auto now = clock_.now();
  if (now - cert_checked_ < std::chrono::seconds(1)) return;
  cert_checked_ = now;
  std::string cert_stamp = file_stamp(access_.client_cert_file);
  std::string key_stamp = file_stamp(access_.client_key_file);
  if (cert_stamp == cert_stamp_ && key_stamp == key_stamp_) return;
  cert_stamp_ = std::move(cert_stamp);
  key_stamp_ = std::move(key_stamp);
  std::string cert_pem = cert_pem_, key_pem = key_pem_;
  for (auto [file, out] :
       {std::pair{&access_.client_cert_file, &cert_pem}, std::pair{&access_.client_key_file, &key_pem}}) {
    if (file->empty()) continue;
    auto text = read_small_file(*file);
    if (!text) {
      spdlog::warn("client certificate: {}; still presenting the previous one", text.message());
      return;
    }
    *out = std::move(*text);
  }
  if (cert_pem == cert_pem_ && key_pem == key_pem_) return;
  Pem pem(cert_pem, key_pem);
  if (!pem.cert || !pem.key || X509_check_private_key(pem.cert, pem.key) != 1) {
    // Often one file of the pair is replaced before the other: the next change completes it.
    spdlog::warn("client certificate {} and key {} do not make a valid pair (yet); still presenting the previous one",
                 access_.client_cert_file, access_.client_key_file);
    return;
  }
  cert_pem_ = std::move(cert_pem);
  key_pem_ = std::move(key_pem);
  ++cert_generation_;
  {
    std::lock_guard pool_lock(pool_mu_);
    pool_.clear();
  }
  spdlog::info("client certificate {} changed; new connections present the new one", access_.client_cert_file);
}

ApiClient::Pooled ApiClient::acquire() {
  refresh_client_cert();
  {
    std::lock_guard lock(pool_mu_);
    if (!pool_.empty()) {
      Pooled c = std::move(pool_.back());
      pool_.pop_back();
      return c;
    }
  }
  return make_client();
}

void ApiClient::release(Pooled pooled) {
  std::lock_guard lock(pool_mu_);
  if (pooled.generation == cert_generation_ && pool_.size() < 8) pool_.push_back(std::move(pooled));
}

std::string ApiClient::token(bool force_reload) {
  if (access_.token_file.empty()) return access_.token;
  std::lock_guard lock(token_mu_);
  const auto now = clock_.now();
  if (force_reload || token_.empty() || now - token_read_ >= options_.token_reload) {
    if (auto t = read_small_file(access_.token_file)) {
      std::string value = std::move(*t);
      while (!value.empty() && (value.back() == '\n' || value.back() == '\r' || value.back() == ' ')) value.pop_back();
      token_ = std::move(value);
      token_read_ = now;
    }
  }
  return token_;
}

Result<ApiReply> ApiClient::send(const std::string& method, const std::string& path, const std::string* body,
                                 std::chrono::milliseconds timeout) {
  const TimePoint deadline = clock_.now() + timeout;
  auto late = [&] {
    return Error{method + " " + access_.server + path + ": no complete answer within the call's " +
                 std::to_string(timeout.count()) + " ms"};
  };
  for (int attempt = 0; attempt < 2; ++attempt) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock_.now());
    if (left.count() <= 0) return late();
    Pooled pooled = acquire();
    httplib::ClientImpl& client = *pooled.client;
    set_timeout(client, left, options_.connect_timeout);
    if (std::string t = token(attempt > 0); !t.empty()) client.set_bearer_token_auth(t);
    bool expired = false;
    httplib::Result res = [&] {
      const BlockingRegion waiting;
      auto watch = deadlines_.watch(deadline, [&client] { client.stop(); });
      httplib::Result r = method == "POST"     ? client.Post(path, *body, "application/json")
                          : method == "PATCH"  ? client.Patch(path, *body, "application/merge-patch+json")
                          : method == "PUT"    ? client.Put(path, *body, "application/json")
                          : method == "DELETE" ? client.Delete(path)
                                               : client.Get(path);
      expired = watch.expired();
      return r;
    }();
    if (!res) {
      if (expired || clock_.now() >= deadline) return late();
      return Error{method + " " + access_.server + path + ": " + describe(res.error())};
    }
    ApiReply reply{res->status, std::move(res->body)};
    if (!expired) release(std::move(pooled));
    if (reply.status == 401 && attempt == 0 && !access_.token_file.empty()) continue;  // a rotated token
    return reply;
  }
  return Error{"unreachable"};
}

Result<ApiReply> ApiClient::get(const std::string& path, std::chrono::milliseconds timeout) {
  return send("GET", path, nullptr, timeout);
}

Result<ApiReply> ApiClient::merge_patch(const std::string& path, const std::string& json,
                                        std::chrono::milliseconds timeout) {
  return send("PATCH", path, &json, timeout);
}

Result<ApiReply> ApiClient::post(const std::string& path, const std::string& json, std::chrono::milliseconds timeout) {
  return send("POST", path, &json, timeout);
}

Result<ApiReply> ApiClient::put(const std::string& path, const std::string& json, std::chrono::milliseconds timeout) {
  return send("PUT", path, &json, timeout);
}

Result<ApiReply> ApiClient::remove(const std::string& path, std::chrono::milliseconds timeout) {
  return send("DELETE", path, nullptr, timeout);
}

Result<ApiReply> ApiClient::stream(const std::string& path, std::chrono::milliseconds idle_timeout,
                                   const std::function<bool(std::string_view)>& on_data, StreamHandle& handle,
                                   const std::function<void(int)>& on_status) {
  refresh_client_cert();
  auto client = std::move(make_client().client);
  set_timeout(*client, idle_timeout, options_.connect_timeout);
  client->set_keep_alive(false);
  if (std::string t = token(false); !t.empty()) client->set_bearer_token_auth(t);
  handle.attach(client.get());
  if (handle.cancelled()) {
    handle.attach(nullptr);
    return Error{"cancelled"};
  }
  int status = 0;
  std::string error_body;
  httplib::Result res = client->Get(
      path, httplib::Headers{},
      [&](const httplib::Response& response) {
        status = response.status;
        if (on_status) on_status(status);
        return !handle.cancelled();  // a cancel that came before the connection existed
      },
      [&](const char* data, size_t length) {
        if (handle.cancelled()) return false;
        if (status / 100 != 2) {
          if (error_body.size() < kMaxReplyBytes) error_body.append(data, length);
          return true;
        }
        return on_data(std::string_view(data, length));
      });
  handle.attach(nullptr);
  if (status == 401 && !access_.token_file.empty()) token(true);
  if (!res && status == 0) return Error{"GET " + access_.server + path + ": " + describe(res.error())};
  if (!res && status / 100 == 2) {
    return Error{"GET " + access_.server + path + ": the response broke off: " + describe(res.error())};
  }
  return ApiReply{status, std::move(error_body)};
}

}  // namespace extender::kube
