// Measures /filter on realistic bodies (made by bench/gen_extender_args.py): decoding
// with nlohmann's DOM against simdjson on-demand, the engine's filter, and the whole HTTP round
// trip through the daemon's listener on loopback (keep-alive), for the Nodes form and for the
// NodeNames form of the same request. The floor for the Nodes form is a bare simdjson
// decode-and-echo of the same body behind the same listener (every node passes, nothing is
// decided); the Nodes-form /filter is reported as a multiple of it, asked to stay within 1.3x.
// A second Nodes-form /filter of the same nodes must find the state unchanged: the bench reports
// whether the state was republished. The NodeNames form (nodes from the daemon's cache) has its
// own floor: a bare simdjson decode of the names echoed back as a FilterResult, behind the same
// listener. The HTTP stages use a minimal keep-alive client (one send per request, TCP_NODELAY,
// reads exactly Content-Length), so that what is timed is the daemon. Prints medians and 90th
// percentiles.
//
// usage: filter_bench BODY.json [BODY.json ...] [--runs N] [--names-only]
//   --names-only: only the NodeNames-form stages (one Nodes-form /filter fills the cache first)
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <simdjson.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "extender/config/config.h"
#include "extender/engine/engine_builder.h"
#include "extender/http/listener.h"
#include "extender/server/api.h"
#include "extender/sources/local_binder.h"
#include "extender/sources/request_nodes.h"
#include "extender/wire/extender_args.h"
#include "extender/wire/json_text.h"
#include "extender/wire/results.h"

namespace {

using namespace extender;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}
using Clock = std::chrono::steady_clock;

struct Stats {
  double median_ms;
  double p90_ms;
};

template <class F>
Stats measure(int runs, F&& f) {
  f();  // warm-up
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 9 / 10)]};
}

// Two stages measured in alternation, so that both see the same machine (other load, caches).
template <class F, class G>
std::pair<Stats, Stats> measure_pair(int runs, F&& f, G&& g) {
  f();
  g();
  std::vector<double> a, b;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    f();
    auto t1 = Clock::now();
    g();
    auto t2 = Clock::now();
    a.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    b.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
  }
  auto stats = [](std::vector<double>& ms) {
    std::sort(ms.begin(), ms.end());
    return Stats{ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 9 / 10)]};
  };
  return {stats(a), stats(b)};
}

// A blocking HTTP/1.1 keep-alive client, as little of one as the bench needs: head and body leave
// in one writev, the answer is read up to its Content-Length into a buffer kept across requests.
// A connection idle for a second (between stages) is replaced before it is used, as the daemon
// closes idle connections after server.keep_alive_timeout.
class RawClient {
 public:
  explicit RawClient(int port) : port_(port) {}
  ~RawClient() { disconnect(); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  // POSTs `body` to `path` and returns the answer's status; aborts on a broken connection.
  int post(const std::string& path, const std::string& body) {
    if (fd_ >= 0 && Clock::now() - last_used_ > std::chrono::seconds(1)) disconnect();
    if (fd_ < 0) connect();
    head_ = "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
            std::to_string(body.size()) + "\r\n\r\n";
    iovec iov[2] = {{head_.data(), head_.size()}, {const_cast<char*>(body.data()), body.size()}};
    std::size_t left = head_.size() + body.size();
    int at = 0;
    while (left > 0) {
      const ssize_t n = ::writev(fd_, iov + at, 2 - at);
      if (n <= 0) fail("writev");
      left -= static_cast<std::size_t>(n);
      for (std::size_t k = static_cast<std::size_t>(n); k > 0;) {
        const std::size_t step = std::min(k, iov[at].iov_len);
        iov[at].iov_base = static_cast<char*>(iov[at].iov_base) + step;
        iov[at].iov_len -= step;
        k -= step;
        if (iov[at].iov_len == 0 && at < 1) ++at;
      }
    }
    std::size_t have = 0;
    std::size_t head_end = std::string::npos;
    if (in_.size() < (1 << 16)) in_.resize(1 << 16);
    while (head_end == std::string::npos) {
      have += receive(have);
      const std::string_view seen(in_.data(), have);
      head_end = seen.find("\r\n\r\n");
    }
    const std::string_view head(in_.data(), head_end);
    const std::size_t cl = head.find("Content-Length: ");
    if (head.size() < 12 || cl == std::string_view::npos) fail("answer head");
    const std::size_t length = std::strtoull(head.data() + cl + 16, nullptr, 10);
    const int status = std::atoi(head.data() + 9);
    const std::size_t total = head_end + 4 + length;
    if (in_.size() < total) in_.resize(total);
    while (have < total) have += receive(have);
    if (have != total) fail("more bytes than Content-Length");
    last_used_ = Clock::now();
    return status;
  }

 private:
  void connect() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) fail("connect");
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // as Go's client does
  }
  void disconnect() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  std::size_t receive(std::size_t at) {
    const ssize_t n = ::recv(fd_, in_.data() + at, in_.size() - at, 0);
    if (n <= 0) fail("recv");
    return static_cast<std::size_t>(n);
  }
  [[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "bench client: %s: %s\n", what, std::strerror(errno));
    std::abort();
  }

  int port_;
  int fd_ = -1;
  Clock::time_point last_used_;
  std::string head_;
  std::string in_;
};

// The same request in the NodeNames form (what nodeCacheCapable: true sends).
std::string names_form(const std::string& body) {
  nlohmann::json doc = nlohmann::json::parse(body);
  nlohmann::json names = nlohmann::json::array();
  for (const auto& n : doc["Nodes"]["items"]) names.push_back(n["metadata"]["name"]);
  nlohmann::json out;
  out["Pod"] = doc["Pod"];
  out["Nodes"] = nullptr;
  out["NodeNames"] = names;
  return out.dump();
}

// The least any extender does with a Nodes-form body: decode it with simdjson on-demand and echo
// every node back, raw, in a FilterResult.
http::HttpResponse decode_and_echo(const http::HttpRequest& request) {
  thread_local simdjson::ondemand::parser parser;
  std::optional<simdjson::padded_string> copy;
  simdjson::padded_string_view body(request.body.data(), request.body.size(), request.body.capacity());
  if (request.body.capacity() < request.body.size() + simdjson::SIMDJSON_PADDING) body = copy.emplace(request.body);
  std::string out = R"({"Nodes":{"metadata":{},"items":[)";
  out.reserve(request.body.size() + 256);
  simdjson::ondemand::document doc;
  simdjson::ondemand::array items;
  if (parser.iterate(body).get(doc) || doc["Nodes"]["items"].get_array().get(items))
    return {400, "{}", "application/json", {}};
  bool first = true;
  for (auto item : items) {
    simdjson::ondemand::object node;
    std::string_view raw;
    if (item.get_object().get(node) || node.raw_json().get(raw)) return {400, "{}", "application/json", {}};
    if (!first) out += ',';
    first = false;
    out += raw;
  }
  out += R"(]},"NodeNames":null,"FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""})";
  return {200, std::move(out), "application/json", {}};
}

// The least any extender does with a NodeNames-form body: decode it with simdjson on-demand and
// echo every name back, JSON-escaped, in a FilterResult.
http::HttpResponse decode_and_echo_names(const http::HttpRequest& request) {
  thread_local simdjson::ondemand::parser parser;
  std::optional<simdjson::padded_string> copy;
  simdjson::padded_string_view body(request.body.data(), request.body.size(), request.body.capacity());
  if (request.body.capacity() < request.body.size() + simdjson::SIMDJSON_PADDING) body = copy.emplace(request.body);
  std::string out = R"({"Nodes":null,"NodeNames":[)";
  out.reserve(request.body.size() + 256);
  simdjson::ondemand::document doc;
  simdjson::ondemand::array names;
  if (parser.iterate(body).get(doc) || doc["NodeNames"].get_array().get(names))
    return {400, "{}", "application/json", {}};
  bool first = true;
  for (auto item : names) {
    std::string_view name;
    if (item.get_string().get(name)) return {400, "{}", "application/json", {}};
    if (!first) out += ',';
    first = false;
    wire::append_json_string(out, name);
  }
  out += R"(],"FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""})";
  return {200, std::move(out), "application/json", {}};
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 30;
  bool names_only = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (a == "--names-only") {
      names_only = true;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: filter_bench BODY.json [BODY.json ...] [--runs N] [--names-only]\n");
    return 2;
  }
  spdlog::set_level(spdlog::level::warn);

  config::Config cfg;
  state::ClusterState cluster;
  state::DemandCache demands(10000, std::chrono::minutes(10));
  sources::RequestNodes request_nodes(cluster, {}, cfg.supply_rules(),
                                      static_cast<std::size_t>(cfg.standalone.max_request_nodes));
  sources::LocalBinder binder(cluster);
  engine::Extender extender =
      engine::EngineBuilder(cfg.extender_options(), cluster, demands, binder).request_nodes(&request_nodes).build();
  server::Metrics metrics;
  server::ApiDeps api_deps;
  api_deps.extender = &extender;
  api_deps.state = &cluster;
  api_deps.metrics = &metrics;
  api_deps.mode = "standalone";
  api_deps.request_deadline = std::chrono::seconds(60);
  api_deps.node_fields = cfg.node_fields();
  server::Api api(std::move(api_deps), {"/scheduler", true, true, true});
  http::ListenerOptions options;
  options.name = "bench";
  std::vector<std::unique_ptr<http::Listener>> listeners;
  std::vector<std::thread> serving;
  auto serve = [&](http::Dispatch dispatch) -> int {
    auto& l = *listeners.emplace_back(std::make_unique<http::Listener>(options, std::move(dispatch)));
    if (auto st = l.bind("127.0.0.1", 0); !st) {
      std::fprintf(stderr, "%s\n", st.message().c_str());
      std::exit(1);
    }
    serving.emplace_back([&l] { l.serve(); });
    return l.port();
  };
  RawClient client(serve([&](const http::HttpRequest& r) { return api.handle(r); }));
  RawClient echo_client(serve([](const http::HttpRequest& r) { return decode_and_echo(r); }));
  RawClient names_echo_client(serve([](const http::HttpRequest& r) { return decode_and_echo_names(r); }));
  auto post = [](RawClient& c, const char* path, const std::string& body) {
    if (c.post(path, body) != 200) std::abort();
  };

  std::printf("%-28s %8s %10s | %-34s %10s %10s\n", "body", "nodes", "MB", "stage", "median ms", "p90 ms");
  for (const auto& file : files) {
    const std::string body = read_file(file);
    const std::string names = names_form(body);
    wire::PaddedBody padded(body);
    auto args = wire::decode_extender_args(padded);
    if (!args) {
      std::fprintf(stderr, "%s: %s\n", file.c_str(), args.message().c_str());
      return 1;
    }
    const std::size_t n = args->nodes->size();
    const std::string label = file.substr(file.rfind('/') + 1);
    auto row = [&](const char* stage, Stats s) {
      std::printf("%-28s %8zu %10.1f | %-34s %10.2f %10.2f\n", label.c_str(), n, static_cast<double>(body.size()) / 1e6,
                  stage, s.median_ms, s.p90_ms);
    };
    auto ratio = [&](const char* stage, Stats s, Stats floor, const char* verdict) {
      std::printf("%-28s %8zu %10.1f | %-34s %10.2fx %9s\n", label.c_str(), n, static_cast<double>(body.size()) / 1e6,
                  stage, s.median_ms / floor.median_ms, verdict);
    };
    if (names_only) {
      post(client, "/scheduler/filter", body);
    } else {
      row("decode: nlohmann DOM", measure(runs, [&] {
            auto doc = nlohmann::json::parse(body);
            (void)doc;
          }));
      row("decode: simdjson, every field", measure(runs, [&] { (void)wire::decode_extender_args(padded); }));
      const wire::NodeFieldFilter fields = cfg.node_fields();
      row("decode: simdjson, policy fields", measure(runs, [&] { (void)wire::decode_extender_args(padded, fields); }));
      row("engine filter (decoded)", measure(runs, [&] { (void)extender.filter(*args); }));
      const auto [floor, nodes_form] = measure_pair(
          runs, [&] { post(echo_client, "/filter", body); }, [&] { post(client, "/scheduler/filter", body); });
      row("HTTP simdjson decode-and-echo", floor);
      row("HTTP /filter, Nodes form", nodes_form);
      ratio("Nodes form / decode-and-echo", nodes_form, floor,
            nodes_form.median_ms <= 1.3 * floor.median_ms ? "ok" : "OVER 1.3x");
      const auto before = cluster.snapshot();
      post(client, "/scheduler/filter", body);
      const auto after = cluster.snapshot();
      std::size_t rebuilt = 0;
      for (const auto& [name, entry] : after.nodes()) {
        auto it = before.nodes().find(name);
        rebuilt += it == before.nodes().end() || it->second != entry;
      }
      std::printf("%-28s %8zu %10.1f | %-34s %10zu %10s\n", label.c_str(), n, static_cast<double>(body.size()) / 1e6,
                  "unchanged nodes: entries rebuilt", rebuilt, rebuilt == 0 ? "ok" : "REBUILT");
    }
    wire::PaddedBody names_padded(names);
    auto names_args = wire::decode_extender_args(names_padded);
    if (!names_args) {
      std::fprintf(stderr, "%s (NodeNames form): %s\n", file.c_str(), names_args.message().c_str());
      return 1;
    }
    row("NodeNames: decode", measure(runs, [&] { (void)wire::decode_extender_args(names_padded); }));
    row("NodeNames: engine filter", measure(runs, [&] { (void)extender.filter(*names_args); }));
    const engine::FilterAnswer names_answer = extender.filter(*names_args);
    row("NodeNames: encode filter answer",
        measure(runs, [&] { (void)wire::encode_filter_result(names_answer.result); }));
    row("NodeNames: engine prioritize", measure(runs, [&] { (void)extender.prioritize(*names_args); }));
    http::HttpRequest names_request;
    names_request.method = "POST";
    names_request.path = "/scheduler/filter";
    names_request.body = names;
    names_request.body.reserve(names.size() + simdjson::SIMDJSON_PADDING);
    names_request.peer_loopback = true;
    row("NodeNames: Api /filter, no HTTP", measure(runs, [&] {
          if (api.handle(names_request).status != 200) std::abort();
        }));
    const auto [names_floor, names_filter] = measure_pair(
        runs, [&] { post(names_echo_client, "/filter", names); }, [&] { post(client, "/scheduler/filter", names); });
    row("HTTP NodeNames decode-and-echo", names_floor);
    row("HTTP /filter, NodeNames form", names_filter);
    ratio("NodeNames /filter / echo", names_filter, names_floor,
          n < 5000                       ? ""
          : names_filter.median_ms < 3.0 ? "ok"
                                         : "OVER 3 ms");
    row("HTTP /prioritize, NodeNames form", measure(runs, [&] { post(client, "/scheduler/prioritize", names); }));
  }
  for (auto& l : listeners) l->stop();
  for (auto& t : serving) t.join();
  return 0;
}
