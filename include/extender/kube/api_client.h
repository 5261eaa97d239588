#pragma once
// ApiClient: HTTP(S) requests to the Kubernetes API server with the daemon's credentials. The
// server's certificate is always verified (against the given CA, else the system's roots); a
// bearer token from a file is read again every `token_reload` and after any 401. A client
// certificate and key named as files are read again when the files change (checked at most once
// a second, as connections are made): new connections present the new pair, pooled ones are
// dropped, requests in flight finish on theirs. Every connection has TCP keepalive on.
// Connections are pooled for plain requests; each stream (a watch) has a connection of its own and can be
// cancelled from another thread through its StreamHandle. A plain request (get, post, put,
// merge_patch) ends by one deadline, its start plus `timeout`, whatever the server does: the
// retry after a 401 shares it, every connect, read and write waits at most what is left of it,
// and a connection still busy at the deadline is stopped from the DeadlineWatch's thread (a
// trickled answer cannot stretch a call). The TLS handshake of a new connection is the one step
// the stop waits for; each of its round trips is bounded by what was left at its start.
// Thread-safe.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "extender/common/clock.h"
#include "extender/common/result.h"
#include "extender/kube/credentials.h"
#include "extender/kube/deadline_watch.h"

namespace httplib {
class ClientImpl;
}

namespace extender::kube {

struct ApiReply {
  int status = 0;
  std::string body;
};

// Cancels the stream it is given to, from any thread.
class StreamHandle {
 public:
  void cancel();
  bool cancelled() const;

 private:
  friend class ApiClient;
  void attach(httplib::ClientImpl* client);
  mutable std::mutex mu_;
  httplib::ClientImpl* client_ = nullptr;
  bool cancelled_ = false;
};

class ApiClient {
 public:
  struct Options {
    std::string user_agent = "scheduler-extender";
    std::chrono::milliseconds token_reload{60'000};
    std::chrono::milliseconds connect_timeout{5'000};
    // Calls' deadlines, token and certificate re-reads (it outlives the client); null: steady_clock().
    // The sockets' own timeouts are cpp-httplib's, set from the time left on this clock.
    const Clock* clock = nullptr;
  };

  static Result<std::unique_ptr<ApiClient>> create(ClusterAccess access, Options options);
  ~ApiClient();

  Result<ApiReply> get(const std::string& path, std::chrono::milliseconds timeout);
  Result<ApiReply> post(const std::string& path, const std::string& json, std::chrono::milliseconds timeout);
  // Replaces the object at `path` (an update; a stale metadata.resourceVersion is answered 409).
  Result<ApiReply> put(const std::string& path, const std::string& json, std::chrono::milliseconds timeout);
  // Deletes the object at `path` (DELETE; 404 when it is gone already).
  Result<ApiReply> remove(const std::string& path, std::chrono::milliseconds timeout);
  // A JSON merge patch (application/merge-patch+json).
  Result<ApiReply> merge_patch(const std::string& path, const std::string& json, std::chrono::milliseconds timeout);

  // GETs `path` and hands the body to `on_data` as it arrives, until the server ends it, `on_data`
  // returns false, nothing arrives for `idle_timeout` (a silent or half-open connection), or
  // `handle` is cancelled. `on_status`, if given, sees the status once the headers are in; a
  // non-2xx body is collected into the returned reply instead of going to `on_data`. The reply
  // (with an empty body for 2xx) means the server ended the response; an error means it never
  // answered or the response broke off (idle timeout, reset, cancelled, `on_data` said stop).
  Result<ApiReply> stream(const std::string& path, std::chrono::milliseconds idle_timeout,
                          const std::function<bool(std::string_view)>& on_data, StreamHandle& handle,
                          const std::function<void(int)>& on_status = nullptr);

  const std::string& server() const { return access_.server; }

 private:
  struct Pooled {
    std::uint64_t generation = 0;  // of the client certificate it presents
    std::unique_ptr<httplib::ClientImpl> client;
  };
  ApiClient(ClusterAccess access, Options options);
  Pooled make_client();
  Pooled acquire();
  void release(Pooled pooled);
  // Reads the client certificate and key files again if they changed since the last look (at
  // most once a second); a new valid pair replaces the old one and empties the pool.
  void refresh_client_cert();
  std::string token(bool force_reload);
  Result<ApiReply> send(const std::string& method, const std::string& path, const std::string* body,
                        std::chrono::milliseconds timeout);

  ClusterAccess access_;
  Options options_;
  const Clock& clock_;
  bool https_ = true;
  std::string host_;
  int port_ = 443;
  // CA data (not a file) is handed to TLS as an in-memory file: given as a file, the CA is the
  // only one trusted; given as an X509_STORE, httplib trusts the system's roots besides.
  int ca_data_fd_ = -1;
  std::string ca_data_path_;

  std::mutex token_mu_;
  std::string token_;
  TimePoint token_read_{};

  std::mutex cert_mu_;  // before pool_mu_ when both are held
  std::string cert_pem_;
  std::string key_pem_;
  std::string cert_stamp_;  // device, inode, size and mtime of each file when last read
  std::string key_stamp_;
  TimePoint cert_checked_{};
  std::atomic<std::uint64_t> cert_generation_{0};

  std::mutex pool_mu_;
  std::vector<Pooled> pool_;

  DeadlineWatch deadlines_;
};

// TCP keepalive as every API connection has it, so that a peer gone without a word is noticed in
// about 30 seconds: SO_KEEPALIVE, first probe after 15s idle, then every 5s, 3 unanswered = dead.
void set_keepalive(int socket);

// The message of a Kubernetes Status body ({"kind":"Status","message":...}), else the body itself
// (truncated), for error reports.
std::string status_message(const ApiReply& reply);

}  // namespace extender::kube
