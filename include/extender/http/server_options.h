#pragma once
// ServerOptions: the settings of an HTTP listener and their defaults, owned here and nowhere else
// (config's ServerConfig extends this struct and reads its YAML keys; ParseLimits takes its
// defaults from the same constants). Value types; no I/O.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace extender::http {

namespace defaults {
inline constexpr std::int64_t kMaxBodyBytes = std::int64_t{128} << 20;
inline constexpr std::int64_t kMaxHeaderBytes = std::int64_t{64} << 10;  // request line and headers together
inline constexpr std::int64_t kMaxHeaderCount = 100;
}  // namespace defaults

struct TlsOptions {
  std::string cert_file;  // serve TLS when cert_file and key_file are set (re-read when they change)
  std::string key_file;
  std::string client_ca_file;  // also require client certificates signed by this CA
  // With client_ca_file: only certificates naming one of these (subject CN, SAN DNS or URI) may
  // call; empty: any certificate the CA signed.
  std::vector<std::string> client_names;
};

struct ServerOptions {
  std::int64_t threads = 8;        // workers of Lane::kCompute (CPU-bound handlers)
  std::int64_t bind_threads = 64;  // workers of Lane::kBlocking (handlers that wait on another service)
  std::int64_t light_threads = 2;  // workers of Lane::kLight (cheap reads; not a config key)
  // Of the kCompute workers, how many compute at once (one waiting on the network or a signal does
  // not count); 0: the CPUs the process may use (usable_cpus). Not a config key.
  std::int64_t computing = 0;
  std::int64_t max_body_bytes = defaults::kMaxBodyBytes;
  std::int64_t max_header_bytes = defaults::kMaxHeaderBytes;
  std::int64_t max_header_count = defaults::kMaxHeaderCount;
  std::chrono::milliseconds header_timeout{5'000};     // a request head must arrive within this
  std::chrono::milliseconds read_timeout{10'000};      // a body within this plus its bytes received at min_body_rate
  std::int64_t min_body_rate = std::int64_t{1} << 20;  // bytes per second
  std::chrono::milliseconds write_timeout{10'000};     // an answer within this plus its size at min_body_rate
  std::chrono::milliseconds keep_alive_timeout{5'000};
  std::int64_t keep_alive_max_requests = 1000;
  std::int64_t max_connections = 4096;
  std::int64_t max_connections_per_peer = 256;
  std::int64_t max_buffered_bytes = std::int64_t{512} << 20;  // request bodies held at once
  TlsOptions tls;
};

}  // namespace extender::http
