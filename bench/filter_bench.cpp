// Measures /filter on realistic bodies (made by bench/gen_extender_args.py): decoding
// with nlohmann's DOM against simdjson on-demand, the engine's filter, and the whole HTTP round
// trip through the daemon's listener on loopback (keep-alive), for the Nodes form and for the
// NodeNames form of the same request. The floor for the Nodes form is a bare simdjson
// decode-and-echo of the same body behind the same listener (every node passes, nothing is
// decided); the Nodes-form /filter is reported as a multiple of it, asked to stay within 1.3x.
// A second Nodes-form /filter of the same nodes must find the state unchanged: the bench reports
// whether the state was republished. Prints medians and 90th percentiles.
//
// usage: filter_bench BODY.json [BODY.json ...] [--runs N]
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <simdjson.h>
#include <thread>

#include "extender/engine/extender.h"
#include "extender/server/api.h"
#include "extender/server/listener.h"
#include "extender/sources/request_nodes.h"
#include "extender/wire/extender_args.h"

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
server::HttpResponse decode_and_echo(const server::HttpRequest& request) {
  thread_local simdjson::ondemand::parser parser;
  std::optional<simdjson::padded_string> copy;
  simdjson::padded_string_view body(request.body.data(), request.body.size(), request.body.capacity());
  if (request.body.capacity() < request.body.size() + simdjson::SIMDJSON_PADDING) body = copy.emplace(request.body);
  std::string out = R"({"Nodes":{"metadata":{},"items":[)";
  out.reserve(request.body.size() + 256);
  simdjson::ondemand::document doc;
  simdjson::ondemand::array items;
  if (parser.iterate(body).get(doc) || doc["Nodes"]["items"].get_array().get(items)) return {400, "{}", "application/json", {}};
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

}  // namespace

int main(int argc, char** argv) {
  int runs = 30;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: filter_bench BODY.json [BODY.json ...] [--runs N]\n");
    return 2;
  }
  spdlog::set_level(spdlog::level::warn);

  config::Config cfg;
  state::ClusterState cluster;
  state::DemandCache demands(10000, std::chrono::minutes(10));
  sources::RequestNodes request_nodes(cluster, {}, cfg.supply_rules());
  engine::ExtenderDeps deps;
  deps.state = &cluster;
  deps.demands = &demands;
  deps.request_nodes = &request_nodes;
  engine::Extender extender(cfg, std::move(deps));
  server::Metrics metrics;
  server::Api api({&extender, &cluster, &metrics, {}, "standalone", std::chrono::seconds(60), true, cfg.node_fields()},
                  {"/scheduler", true, true, true});
  server::ListenerOptions options;
  options.name = "bench";
  server::Listener listener(options, [&](const server::HttpRequest& r) { return api.handle(r); });
  if (auto st = listener.bind("127.0.0.1", 0); !st) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  std::thread serving([&] { listener.serve(); });
  server::Listener echo_listener(options, [](const server::HttpRequest& r) { return decode_and_echo(r); });
  if (auto st = echo_listener.bind("127.0.0.1", 0); !st) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  std::thread echo_serving([&] { echo_listener.serve(); });
  httplib::Client echo_client("127.0.0.1", echo_listener.port());
  echo_client.set_keep_alive(true);
  echo_client.set_tcp_nodelay(true);
  echo_client.set_read_timeout(60, 0);
  httplib::Client client("127.0.0.1", listener.port());
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);  // as Go's client does
  client.set_read_timeout(60, 0);

  std::printf("%-28s %8s %10s | %-34s %10s %10s\n", "body", "nodes", "MB", "stage", "median ms", "p90 ms");
  for (const auto& file : files) {
    const std::string body = read_file(file);
    const std::string names = names_form(body);
    simdjson::padded_string padded(body);
    auto args = wire::decode_extender_args(padded);
    if (!args) {
      std::fprintf(stderr, "%s: %s\n", file.c_str(), args.message().c_str());
      return 1;
    }
    const std::size_t n = args->nodes->size();
    auto row = [&](const char* stage, Stats s) {
      std::printf("%-28s %8zu %10.1f | %-34s %10.2f %10.2f\n", file.substr(file.rfind('/') + 1).c_str(), n,
                  static_cast<double>(body.size()) / 1e6, stage, s.median_ms, s.p90_ms);
    };
    row("decode: nlohmann DOM", measure(runs, [&] { (void)nlohmann::json::parse(body); }));
    row("decode: simdjson, every field", measure(runs, [&] { (void)wire::decode_extender_args(padded); }));
    const wire::NodeFieldFilter fields = cfg.node_fields();
    row("decode: simdjson, policy fields", measure(runs, [&] { (void)wire::decode_extender_args(padded, fields); }));
    row("engine filter (decoded)", measure(runs, [&] { (void)extender.filter(*args); }));
    const auto [floor, nodes_form] = measure_pair(
        runs,
        [&] {
          auto res = echo_client.Post("/filter", body, "application/json");
          if (!res || res->status != 200) std::abort();
        },
        [&] {
          auto res = client.Post("/scheduler/filter", body, "application/json");
          if (!res || res->status != 200) std::abort();
        });
    row("HTTP simdjson decode-and-echo", floor);
    row("HTTP /filter, Nodes form", nodes_form);
    std::printf("%-28s %8zu %10.1f | %-34s %10.2fx %9s\n", file.substr(file.rfind('/') + 1).c_str(), n,
                static_cast<double>(body.size()) / 1e6, "Nodes form / decode-and-echo", nodes_form.median_ms / floor.median_ms,
                nodes_form.median_ms <= 1.3 * floor.median_ms ? "ok" : "OVER 1.3x");
    {
      const auto before = cluster.snapshot();
      auto res = client.Post("/scheduler/filter", body, "application/json");
      if (!res || res->status != 200) std::abort();
      const auto after = cluster.snapshot();
      std::size_t rebuilt = 0;
      for (const auto& [name, entry] : after.nodes()) {
        auto it = before.nodes().find(name);
        rebuilt += it == before.nodes().end() || it->second != entry;
      }
      std::printf("%-28s %8zu %10.1f | %-34s %10zu %10s\n", file.substr(file.rfind('/') + 1).c_str(), n,
                  static_cast<double>(body.size()) / 1e6, "unchanged nodes: entries rebuilt", rebuilt,
                  rebuilt == 0 ? "ok" : "REBUILT");
    }
    row("HTTP /filter, NodeNames form", measure(runs, [&] {
          auto res = client.Post("/scheduler/filter", names, "application/json");
          if (!res || res->status != 200) std::abort();
        }));
    row("HTTP /prioritize, NodeNames form", measure(runs, [&] {
          auto res = client.Post("/scheduler/prioritize", names, "application/json");
          if (!res || res->status != 200) std::abort();
        }));
  }
  listener.stop();
  serving.join();
  echo_listener.stop();
  echo_serving.join();
  return 0;
}
