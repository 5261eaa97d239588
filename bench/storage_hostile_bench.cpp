// What hostile callers of the volume half cost a well-behaved kube-scheduler. For each scenario a
// fresh daemon (the built binary, kubernetes mode, no election, kubernetes.api_qps 50) watches the
// fake API server of tests/support, which holds 8 nodes of 8 GPUs: nodes 0-5 with 200 csi-baremetal
// SSD drives of 100Gi (AvailableCapacities naming the node by its nodes.csi-baremetal.dell.com/uuid
// annotation), nodes 6-7 with four 5Gi ones; a TopoLVM class whose CSIStorageCapacity is 1Ti on
// nodes 0-3 and 6-7 and 5Gi on nodes 4-5. The real client, keep-alive from 127.0.0.1, plays
// kube-scheduler: pending pods with one 10Gi claim (one csi-baremetal pod for seven TopoLVM ones)
// each get one /filter-unmanaged over the 8 nodes, then are placed (claim selected-node, pod bound)
// and removed, new ones created ahead of their turn; between them a 1-GPU pending pod's /filter
// (each pod filtered once, as kube-scheduler does in an attempt: a new GPU pod each time).
// An answer is right when exactly the nodes that fit pass (csi-baremetal 0-5, TopoLVM 0-3 and 6-7,
// GPU all 8) and it carries no error; anything else, or no answer, is wrong. Each scenario runs
// quiet, then with strangers on other loopback addresses attacking:
//  - forged (issue 40, finding 1): /filter and /filter-unmanaged for a real pending pod with no
//    volumes whose request spec mounts a 100Gi csi-baremetal claim (created beside it) and a 100Gi
//    csi-baremetal ephemeral volume, over every node, from 4 connections; counts the reservation
//    writes naming that pod (0 expected).
//  - wait (finding 3): 4 connections re-send made-up pods (uids the API server does not have)
//    mounting a real unplaced TopoLVM claim every 10 ms.
//  - writes (finding 6): one real pending csi-baremetal pod filtered from 16 connections (4
//    addresses), node lists alternating between nodes 0-2 and 3-5.
//  - reads (finding 8): pod reads take 1.5 s at the API server (both phases); 8 connections send
//    made-up csi-baremetal pods, a new uid each time.
// Prints one line per scenario: the real client's calls and wrong answers, its volume and GPU
// /filter p50 and p99 (quiet / attacked, and attacked p99 over quiet), the reservation writes
// (POST/PUT/DELETE) and pod reads per second the API server received (quiet / attacked), and
// whether the attacked phase's writes stayed within client-go's budget (kubernetes.api_qps a
// second plus one api_burst), the strangers' requests a second, and the daemon's CPU seconds a
// second (quiet / attacked; the strangers run on the same machine). The real client's own writes
// are a POST per csi-baremetal pod and, reservation_grace (10 s) after it was placed, the sweep's
// DELETE, so from the second phase on they are about twice the first's. Exits 1 when the real
// client got a wrong answer or when a forged request caused a write.
//
// usage: storage_hostile_bench [--seconds S] [--only NAME] [--idle-strangers]   (default 8 s a phase, about 90 s)
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include <unistd.h>

#include "daemon/daemon_process.h"
#include "scenario_flags.h"
#include "support/fake_cluster.h"
#include "support/temp_files.h"

namespace {

using namespace extender::testing;
using namespace extender::kube::testing;
using namespace std::chrono_literals;
using BenchClock = std::chrono::steady_clock;

constexpr int kNodes = 8;
constexpr int kApiQps = 50;
constexpr int kApiBurst = 100;
constexpr const char* kNs = "ml";
constexpr const char* kBm = "bm-ssd";
constexpr const char* kLvm = "topolvm";
constexpr const char* kAcrPath = "/apis/csi-baremetal.dell.com/v1/availablecapacityreservations";

std::string node_name(int i) { return "node-" + std::to_string(i); }
std::string node_uuid(int i) { return "6f1d0c2a-5e8b-4c3d-9a7e-00000000000" + std::to_string(i); }

std::vector<std::string> all_nodes() {
  std::vector<std::string> out;
  for (int i = 0; i < kNodes; ++i) out.push_back(node_name(i));
  return out;
}

json available_capacity(const std::string& name, int node, std::int64_t gib) {
  return {{"apiVersion", "csi-baremetal.dell.com/v1"},
          {"kind", "AvailableCapacity"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"Location", name + "-drive"}, {"NodeId", node_uuid(node)}, {"storageClass", "SSD"}, {"Size", gib << 30}}}};
}

void seed_cluster(FakeCluster& fake) {
  json bm = csi_class_object(kBm, "csi-baremetal");
  bm["parameters"] = {{"storageType", "SSD"}};
  fake.put(Kind::kClasses, bm);
  fake.put(Kind::kCsiDrivers, csi_driver_object("topolvm.io", true));
  fake.put(Kind::kClasses, csi_class_object(kLvm, "topolvm.io"));
  for (int i = 0; i < kNodes; ++i) {
    const std::string n = node_name(i);
    fake.put(Kind::kNodes, node_object(n, 8, {{"nodes.csi-baremetal.dell.com/uuid", node_uuid(i)}},
                                       {{"topology.topolvm.io/node", n}}));
    const bool big_drives = i < 6;
    for (int d = 0; d < (big_drives ? 200 : 4); ++d) {
      fake.put(Kind::kAvailableCapacities, available_capacity(n + "-d" + std::to_string(d), i, big_drives ? 100 : 5));
    }
    const bool big_volume_group = i < 4 || i >= 6;
    fake.put(Kind::kCapacities,
             capacity_object("cap-" + n, kLvm, "topology.topolvm.io/node", n, big_volume_group ? "1Ti" : "5Gi"));
  }
}

json pod_with_claim(const std::string& name, const std::string& claim) {
  json pod = pod_object(kNs, name, "uid-" + name, 0);
  if (!claim.empty()) pod["spec"]["volumes"] = {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", claim}}}}};
  return pod;
}

// The fake API server with the cluster above, pod reads (GET of one pod) answered from its objects
// after `read_delay`, and the daemon's kubeconfig.
// The API server's HTTP server sets TCP_NODELAY on every connection, as Go's net/http does:
// without it the fake's answers would wait on Nagle's algorithm for the daemon's delayed ACKs
// (about 40 ms a write once pod reads share the daemon's pooled connections).
std::unique_ptr<httplib::Server> api_http_server() {
  auto s = std::make_unique<httplib::Server>();
  s->set_tcp_nodelay(true);
  return s;
}

struct Cluster {
  FakeApiServer server{api_http_server()};
  FakeCluster fake{server};
  TempDir dir;
  std::atomic<int> read_delay_ms{0};
  std::string kubeconfig;

  Cluster() {
    seed_cluster(fake);
    server.route("GET", "/api/v1/namespaces/*/pods/*", [this](const httplib::Request& req, httplib::Response& res) {
      std::this_thread::sleep_for(std::chrono::milliseconds(read_delay_ms.load()));
      const auto parts = FakeApiServer::segments(req.path);
      if (auto pod = fake.object(Kind::kPods, parts[4] + "/" + parts[6])) return FakeApiServer::reply(res, 200, *pod);
      FakeApiServer::reply(res, 404, status_body(404, "NotFound", "pods \"" + parts[6] + "\" not found"));
    });
    kubeconfig = dir.write("kubeconfig",
                           "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
                           "clusters:\n- name: fake\n  cluster:\n    server: " +
                               server.url() +
                               "\nusers:\n- name: bench\n  user:\n    token: bench-token\n"
                               "contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: bench\n");
  }

  std::string config() const {
    return "mode: kubernetes\nadmin:\n  listen: 127.0.0.1:0\nkubernetes:\n  kubeconfig: " + kubeconfig +
           "\n  api_qps: " + std::to_string(kApiQps) + "\n  api_burst: " + std::to_string(kApiBurst) +
           "\nha:\n  enabled: false\n";
  }
};

struct Report {
  int calls = 0;
  int wrong = 0;
  std::vector<double> volume_ms, gpu_ms;
};

double at(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

std::string args_body(const json& pod, const std::vector<std::string>& nodes) {
  return json{{"Pod", pod}, {"NodeNames", nodes}}.dump();
}

std::vector<std::string> fitting(const std::string& cls) {
  std::vector<std::string> out;
  for (int i = 0; i < kNodes; ++i) {
    const bool fits = cls == kBm ? i < 6 : cls == kLvm ? (i < 4 || i >= 6) : true;
    if (fits) out.push_back(node_name(i));
  }
  return out;
}

// Why an answer is not the right one (empty: it is).
std::string judged(const httplib::Result& res, const std::vector<std::string>& expected) {
  if (!res) return httplib::to_string(res.error());
  if (res->status != 200) return "HTTP " + std::to_string(res->status);
  const json answer = json::parse(res->body, nullptr, false);
  if (!answer.is_object()) return "unreadable answer";
  if (!answer.value("Error", "").empty()) return answer["Error"].get<std::string>();
  std::vector<std::string> passed;
  if (answer.contains("NodeNames") && answer["NodeNames"].is_array())
    passed = answer["NodeNames"].get<std::vector<std::string>>();
  std::sort(passed.begin(), passed.end());
  if (passed == expected) return {};
  std::string text = "passed";
  for (const auto& n : passed) text += " " + n;
  return text;
}

// The well-behaved kube-scheduler: volume pods created ahead of their turn, each filtered once and
// then placed and removed; a GPU pod's /filter between them.
class RealClient {
 public:
  RealClient(Cluster& cluster, int port) : cluster_(cluster), http_("127.0.0.1", port) {
    http_.set_keep_alive(true);
    http_.set_tcp_nodelay(true);
    http_.set_read_timeout(10s);
    http_.set_connection_timeout(10s);
    for (int i = 0; i < 16; ++i) {
      create_next();
      create_next_gpu();
    }
  }

  Report run(const std::atomic<bool>& stop) {
    Report r;
    while (!stop) {
      one_call(r, serial_ % 2 == 0);
      std::this_thread::sleep_for(10ms);
    }
    return r;
  }

  // Filters until the answers are right (the daemon has synced): false after `timeout`.
  bool warm_up(std::chrono::seconds timeout) {
    const auto until = BenchClock::now() + timeout;
    while (BenchClock::now() < until) {
      Report r;
      for (int i = 0; i < 16; ++i) one_call(r, i % 2 == 0, /*quiet=*/true);
      if (r.wrong == 0) return true;
      std::this_thread::sleep_for(200ms);
    }
    return false;
  }

 private:
  struct VolumePod {
    json pod;
    std::string cls;
  };

  void create_next() {
    const int n = next_++;
    const std::string cls = n % 8 == 0 ? kBm : kLvm;
    const std::string name = (cls == kBm ? "bm-" : "lvm-") + std::to_string(n);
    cluster_.fake.put(Kind::kClaims, claim_object(kNs, name + "-data", "c-" + name, cls, "10Gi"));
    ahead_.push_back({pod_with_claim(name, name + "-data"), cls});
    cluster_.fake.put(Kind::kPods, ahead_.back().pod);
  }

  void create_next_gpu() {
    const std::string name = "gpu-" + std::to_string(next_gpu_++);
    gpu_ahead_.push_back(pod_object(kNs, name, "uid-" + name, 1));
    cluster_.fake.put(Kind::kPods, gpu_ahead_.back());
  }

  void place(const VolumePod& v, const std::string& node) {
    const std::string name = v.pod["metadata"]["name"];
    cluster_.fake.put(Kind::kClaims, claim_object(kNs, name + "-data", "c-" + name, v.cls, "10Gi", node));
    json bound = v.pod;
    bound["spec"]["nodeName"] = node;
    cluster_.fake.put(Kind::kPods, bound);
    cluster_.fake.remove(Kind::kPods, std::string(kNs) + "/" + name);
    cluster_.fake.remove(Kind::kClaims, std::string(kNs) + "/" + name + "-data");
  }

  void one_call(Report& r, bool volume, bool quiet = false) {
    ++serial_;
    const VolumePod v = volume ? ahead_.front() : VolumePod{gpu_ahead_.front(), ""};
    const auto expected = fitting(v.cls);
    const auto start = BenchClock::now();
    auto res = http_.Post(volume ? "/scheduler/filter-unmanaged" : "/scheduler/filter", args_body(v.pod, all_nodes()),
                          "application/json");
    const double ms = std::chrono::duration<double, std::milli>(BenchClock::now() - start).count();
    const std::string why = judged(res, expected);
    ++r.calls;
    (volume ? r.volume_ms : r.gpu_ms).push_back(ms);
    if (!why.empty()) {
      if (++r.wrong <= 3 && !quiet)
        std::fprintf(stderr, "  real client, %s: %s\n", v.pod["metadata"]["name"].get<std::string>().c_str(),
                     why.c_str());
      return;
    }
    if (!volume) {
      gpu_ahead_.pop_front();
      cluster_.fake.remove(Kind::kPods, std::string(kNs) + "/" + v.pod["metadata"]["name"].get<std::string>());
      create_next_gpu();
      return;
    }
    ahead_.pop_front();
    place(v, expected.front());
    create_next();
  }

  Cluster& cluster_;
  httplib::Client http_;
  std::deque<json> gpu_ahead_;
  std::deque<VolumePod> ahead_;
  int next_ = 0;
  int next_gpu_ = 0;
  long serial_ = 0;
};

using Attack = std::function<void(Cluster&, int port, const std::atomic<bool>& stop)>;

// `connections` keep-alive strangers (addresses 127.0.0.2 and up, `addresses` of them) each
// repeating send(client, connection, iteration) until `stop`.
// The strangers' requests sent so far, in every scenario.
std::atomic<long> stranger_calls{0};

void strangers(int port, const std::atomic<bool>& stop, int connections, int addresses,
               const std::function<void(httplib::Client&, int, long)>& send) {
  std::vector<std::thread> threads;
  for (int i = 0; i < connections; ++i) {
    threads.emplace_back([&, i] {
      httplib::Client c("127.0.0.1", port);
      c.set_interface("127.0.0." + std::to_string(2 + i % addresses));
      c.set_keep_alive(true);
      c.set_tcp_nodelay(true);
      c.set_read_timeout(30s);
      for (long n = 0; !stop; ++n) {
        send(c, i, n);
        stranger_calls.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (auto& t : threads) t.join();
}

json ephemeral_volume(const std::string& cls, const std::string& size) {
  return {{"name", "scratch"},
          {"ephemeral",
           {{"volumeClaimTemplate",
             {{"spec",
               {{"storageClassName", cls},
                {"accessModes", {"ReadWriteOnce"}},
                {"resources", {{"requests", {{"storage", size}}}}}}}}}}}};
}

void forged(Cluster& c, int port, const std::atomic<bool>& stop) {
  json pod = c.fake.object(Kind::kPods, std::string(kNs) + "/idle").value();
  pod["spec"]["volumes"] = {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "idle-data"}}}},
                            ephemeral_volume(kBm, "100Gi")};
  const std::string body = args_body(pod, all_nodes());
  strangers(port, stop, 4, 4, [&](httplib::Client& http, int, long n) {
    http.Post(n % 2 ? "/scheduler/filter" : "/scheduler/filter-unmanaged", body, "application/json");
  });
}

void wait_stall(Cluster&, int port, const std::atomic<bool>& stop) {
  strangers(port, stop, 4, 4, [&](httplib::Client& http, int i, long) {
    json pod = pod_with_claim("ghost-" + std::to_string(i), "stall-data");
    pod["metadata"]["uid"] = "made-up-" + std::to_string(i);
    http.Post("/scheduler/filter-unmanaged", args_body(pod, all_nodes()), "application/json");
    std::this_thread::sleep_for(10ms);
  });
}

void write_churn(Cluster& c, int port, const std::atomic<bool>& stop) {
  const json pod = c.fake.object(Kind::kPods, std::string(kNs) + "/churn").value();
  const std::string first = args_body(pod, {node_name(0), node_name(1), node_name(2)});
  const std::string second = args_body(pod, {node_name(3), node_name(4), node_name(5)});
  strangers(port, stop, 16, 4, [&](httplib::Client& http, int, long n) {
    http.Post("/scheduler/filter-unmanaged", n % 2 ? first : second, "application/json");
  });
}

void unknown_reads(Cluster&, int port, const std::atomic<bool>& stop) {
  strangers(port, stop, 8, 8, [&](httplib::Client& http, int i, long n) {
    const std::string name = "unknown-" + std::to_string(i) + "-" + std::to_string(n);
    json pod = pod_with_claim(name, "");
    pod["spec"]["volumes"] = {ephemeral_volume(kBm, "10Gi")};
    http.Post("/scheduler/filter-unmanaged", args_body(pod, all_nodes()), "application/json");
  });
}

// What one scenario adds to the cluster before the daemon starts.
void seed_targets(Cluster& c) {
  c.fake.put(Kind::kPods, pod_with_claim("idle", ""));
  c.fake.put(Kind::kClaims, claim_object(kNs, "idle-data", "c-idle-data", kBm, "100Gi"));
  c.fake.put(Kind::kClaims, claim_object(kNs, "stall-data", "c-stall-data", kLvm, "10Gi"));
  c.fake.put(Kind::kClaims, claim_object(kNs, "churn-data", "c-churn-data", kBm, "10Gi"));
  c.fake.put(Kind::kPods, pod_with_claim("churn", "churn-data"));
}

struct ApiCounts {
  long writes = 0;
  long reads = 0;
  long forged_writes = 0;
};

ApiCounts api_counts(const FakeApiServer& server) {
  ApiCounts out;
  for (const auto& r : server.requests()) {
    if (r.method == "GET" && r.path.rfind("/api/v1/namespaces/", 0) == 0 && r.path.find("/pods/") != std::string::npos)
      ++out.reads;
    if (r.path.rfind(kAcrPath, 0) != 0 || r.method == "GET") continue;
    ++out.writes;
    if (r.path.find("ml-idle") != std::string::npos || r.body.find("\"ml-idle\"") != std::string::npos)
      ++out.forged_writes;
  }
  return out;
}

struct Phase {
  Report real;
  double seconds = 0;
  long writes = 0;
  double writes_per_s = 0;
  double reads_per_s = 0;
  long forged_writes = 0;
  double stranger_calls_per_s = 0;
  double daemon_cpu = 0;  // the daemon's CPU seconds a second
};

// The process's user and system CPU time so far, in seconds; 0 when unreadable.
double cpu_seconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto end = text.rfind(')');
  if (end == std::string::npos) return 0;
  std::istringstream fields(text.substr(end + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i >= 14) ticks += std::stod(field);  // utime, stime
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

Phase run_phase(Cluster& c, RealClient& client, const DaemonProcess& d, const Attack* attack,
                const extender::bench::ScenarioFlags& flags) {
  const int seconds = flags.seconds;
  const int port = d.port();
  std::atomic<bool> stop{false};
  std::thread attacker;
  if (attack) {
    attacker = std::thread([&] {
      flags.become_stranger();
      (*attack)(c, port, stop);
    });
  }
  if (attack) std::this_thread::sleep_for(1s);
  const ApiCounts before = api_counts(c.server);
  const long calls_before = stranger_calls.load();
  const double cpu_before = cpu_seconds(d.pid());
  const auto start = BenchClock::now();
  std::atomic<bool> real_stop{false};
  Phase p;
  std::thread real([&] { p.real = client.run(real_stop); });
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  real_stop = true;
  real.join();
  const ApiCounts after = api_counts(c.server);
  const double elapsed = std::chrono::duration<double>(BenchClock::now() - start).count();
  p.stranger_calls_per_s = static_cast<double>(stranger_calls.load() - calls_before) / elapsed;
  p.daemon_cpu = (cpu_seconds(d.pid()) - cpu_before) / elapsed;
  stop = true;
  if (attacker.joinable()) attacker.join();
  p.seconds = elapsed;
  p.writes = after.writes - before.writes;
  p.writes_per_s = static_cast<double>(p.writes) / elapsed;
  p.reads_per_s = static_cast<double>(after.reads - before.reads) / elapsed;
  p.forged_writes = api_counts(c.server).forged_writes;
  return p;
}

double ratio(const std::vector<double>& quiet, const std::vector<double>& hit) {
  const double q = at(quiet, 0.99);
  return q > 0 ? at(hit, 0.99) / q : 0;
}

// Within client-go's budget: api_qps a second over the phase plus one api_burst.
bool within_budget(const Phase& p) { return static_cast<double>(p.writes) <= kApiQps * p.seconds + kApiBurst; }

bool report(const char* name, const Phase& quiet, const Phase& hit) {
  const Report& q = quiet.real;
  const Report& h = hit.real;
  std::printf(
      "%-7s calls %4d / %4d  wrong %d / %d | volume p50 %5.2f / %5.2f  p99 %6.2f / %6.2f ms (x%.1f, worst %6.2f)"
      " | gpu p50 %5.2f / %5.2f  p99 %6.2f / %6.2f ms (x%.1f) | writes/s %5.1f / %5.1f (api_qps %d, %s)"
      " | pod reads/s %4.1f / %4.1f | strangers' calls/s %.0f | daemon CPU %.2f / %.2f",
      name, q.calls, h.calls, q.wrong, h.wrong, at(q.volume_ms, 0.5), at(h.volume_ms, 0.5), at(q.volume_ms, 0.99),
      at(h.volume_ms, 0.99), ratio(q.volume_ms, h.volume_ms), at(h.volume_ms, 1.0), at(q.gpu_ms, 0.5),
      at(h.gpu_ms, 0.5), at(q.gpu_ms, 0.99), at(h.gpu_ms, 0.99), ratio(q.gpu_ms, h.gpu_ms), quiet.writes_per_s,
      hit.writes_per_s, kApiQps, within_budget(hit) ? "within budget" : "OVER budget", quiet.reads_per_s,
      hit.reads_per_s, hit.stranger_calls_per_s, quiet.daemon_cpu, hit.daemon_cpu);
  if (std::string(name) == "forged") std::printf(" | forged writes %ld", hit.forged_writes);
  std::printf("\n");
  std::fflush(stdout);
  return q.wrong == 0 && h.wrong == 0 && hit.forged_writes == 0;
}

bool run(const char* name, const Attack& attack, const extender::bench::ScenarioFlags& flags) {
  Cluster c;
  seed_targets(c);
  if (std::string(name) == "reads") c.read_delay_ms = 1500;
  DaemonProcess d({}, c.config());
  RealClient client(c, d.port());
  if (!client.warm_up(60s)) {
    std::fprintf(stderr, "%s: the daemon never answered right:\n%s\n", name, d.log().c_str());
    return false;
  }
  const Phase quiet = run_phase(c, client, d, nullptr, flags);
  const Phase hit = run_phase(c, client, d, &attack, flags);
  return report(name, quiet, hit);
}

}  // namespace

int main(int argc, char** argv) {
  const auto flags = extender::bench::parse_scenario_flags(argc, argv, "storage_hostile_bench", 8);
  if (!flags) return 2;
  const int seconds = flags->seconds;
  const std::pair<const char*, Attack> scenarios[] = {
      {"forged", forged}, {"wait", wait_stall}, {"writes", write_churn}, {"reads", unknown_reads}};
  std::printf(
      "each figure: quiet / attacked, %d s a phase; the real client: 1 csi-baremetal pod in 8 volume pods, "
      "a GPU /filter between volume pods; the strangers %s\n",
      seconds, flags->idle_strangers ? "under SCHED_IDLE" : "at normal priority");
  bool ok = true;
  for (const auto& [name, attack] : scenarios) {
    if (!flags->wanted(name)) continue;
    ok = run(name, attack, *flags) && ok;
  }
  return ok ? 0 : 1;
}
