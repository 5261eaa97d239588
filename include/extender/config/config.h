#pragma once
// Config: every setting of the daemon, with a default for each, loaded from a YAML file
// (--config) and command-line flags. Validation errors name the key and its line; unknown keys are
// errors. The reference of every key is examples/config.yaml. A value type; thread-safe once built.
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "extender/common/result.h"
#include "extender/engine/options.h"
#include "extender/http/server_options.h"
#include "extender/model/demand.h"
#include "extender/model/dra.h"
#include "extender/model/supply.h"
#include "extender/policy/score.h"
#include "extender/sources/kube_cluster_options.h"
#include "extender/wire/extender_args.h"

namespace extender::config {

using std::chrono::milliseconds;

enum class Mode { kStandalone, kKubernetes };

// The listener's settings and their defaults belong to the server module (server_options.h);
// config reads their YAML keys and adds what only the daemon uses.
using TlsConfig = http::TlsOptions;

struct ServerConfig : http::ServerOptions {
  std::string listen = "127.0.0.1:8888";
  std::string path_prefix = "/scheduler";  // verbs answer at /<verb> and at <path_prefix>/<verb>
  milliseconds request_deadline{4'000};    // filter and prioritize answer within this
  // Nodes in one filter or prioritize request, refused at the next one while decoding (above the
  // 65,000 of the largest managed clusters; see wire::DecodeLimits).
  std::int64_t max_nodes_per_request = 100'000;
  // Answers held for a caller looping on calls kube-scheduler never makes (server/call_pacing.h):
  // a call past `repeats_per_second` calls of its verb for one pod from its caller within a second
  // (held `hold`, twice that past twice the limit), or an error answer past the caller's
  // `errors_per_second` (held `hold`); 0: never.
  struct Pacing {
    milliseconds hold{50};
    std::int64_t repeats_per_second = 10;
    double errors_per_second = 20;
  } pacing;
};

struct AdminConfig {
  std::string listen = "127.0.0.1:8889";  // /admin/* and /debug/*; empty: served on server.listen
};

struct LoggingConfig {
  std::string level = "info";   // trace, debug, info, warn, error
  std::string format = "text";  // text or json
  // Per-call lines (a verb's answer, a refusal) one caller may have written a second; past it
  // they are counted, and the count goes with the caller's next line (server/log_budget.h). 0:
  // every line.
  double lines_per_caller = 100;
};

struct GpuConfig {
  std::vector<model::GpuResourceRule> resources = {{"nvidia.com/gpu", "nvidia.com/gpu.memory", std::int64_t{1} << 20}};
  std::string memory_annotation = "scheduler-extender.io/gpu-memory";
  model::GpuShareRule share;  // GPU sharing as the gpushare device plugin offers it
};

struct StorageConfig {
  std::map<std::string, std::string, std::less<>> classes = {{"local-storage", "local"}};  // class -> pool
  std::string default_class;  // for claim templates without a class
  std::string default_pool = "local";
  std::int64_t default_claim_bytes = std::int64_t{10} << 30;
  std::string pool_annotation_prefix = "scheduler-extender.io/pool.";
  // Classes whose CSI driver publishes capacity (CSIStorageCapacity) are managed without an entry
  // in `classes` (kubernetes mode): all of them, or only capacity_classes when it names some (which
  // restricts the classes of local PersistentVolumes, read whatever capacity_tracking says, too).
  bool capacity_tracking = true;
  std::vector<std::string> capacity_classes;
  // How long after a claim's volume appeared the published figure is taken to reflect it when no
  // change was seen (at least the driver's poll interval; see policy/capacity_accounting.h).
  milliseconds capacity_settle{120'000};
  // How long a claim selected for a node (volume.kubernetes.io/selected-node) without a volume
  // counts against the node's published pool (kube-scheduler's bindTimeoutSeconds by default).
  milliseconds selected_claim_timeout{600'000};
  // How long a filter waits, at most, for kube-scheduler's placement of the previous pod with
  // claims to place to show on its claims (engine::ExtenderOptions::placement_wait).
  milliseconds placement_wait{100};
  // csi-baremetal's drives (kubernetes mode): its provisioner, node ids and node selector.
  sources::BaremetalOptions baremetal;
};

struct StateConfig : engine::ReservationOptions {
  std::int64_t demand_cache_size = 10'000;
  milliseconds demand_cache_ttl{900'000};
};

struct StandaloneConfig {
  std::string inventory;             // YAML inventory file, loaded at start
  bool upsert_request_nodes = true;  // remember nodes carried in Nodes requests
  // Request nodes remembered at most (inventory nodes aside); past it new names are not remembered.
  std::int64_t max_request_nodes = 10'000;
};

// Dynamic Resource Allocation (kubernetes mode): GPUs are read from the node-local ResourceSlices
// of these drivers only (DNS subdomains, at most kMaxDraDrivers, none twice).
struct DraConfig {
  static constexpr std::size_t kMaxDraDrivers = 16;
  std::vector<std::string> drivers{model::kNvidiaGpuDriver};
};

// bind_timeout and scheduler_names: engine::BindOptions; watch_timeout and stale_after:
// sources::WatchOptions.
struct KubernetesConfig : engine::BindOptions, sources::WatchOptions {
  std::string kubeconfig;  // empty: in-cluster credentials
  milliseconds token_reload{60'000};
  std::string user_agent = "scheduler-extender";
  // Client-side limit of the writes a bind makes (claim and pod patches, Bindings), as client-go's
  // QPS and burst (kube-scheduler's own client: 50 and 100); api_qps 0: no limit. Lease and
  // leader-label writes are not counted (their own few a second, never behind a burst of binds).
  std::int64_t api_qps = 50;
  std::int64_t api_burst = 100;
  DraConfig dra;
};

// Kubernetes mode: replicas elect one leader on a coordination.k8s.io/v1 Lease (client-go's
// semantics); only the leader decides verbs. Standalone mode ignores this.
struct HaConfig {
  bool enabled = true;
  std::string lease_name = "scheduler-extender";
  std::string lease_namespace;         // empty: POD_NAMESPACE, else "default"
  milliseconds lease_duration{2'000};  // a standby takes an unrenewed lease after this
  milliseconds renew_deadline{1'500};  // a leader that could not renew for this long stops deciding
  milliseconds retry_period{500};      // between attempts to acquire or renew
  std::string leader_label = "scheduler-extender.io/leader";  // on the leader's pod; empty: none
};

struct Config {
  Mode mode = Mode::kStandalone;
  ServerConfig server;
  AdminConfig admin;
  LoggingConfig logging;
  GpuConfig gpu;
  StorageConfig storage;
  policy::ScoringRules scoring;
  StateConfig state;
  StandaloneConfig standalone;
  KubernetesConfig kubernetes;
  HaConfig ha;

  model::DemandRules demand_rules() const;
  model::SupplyRules supply_rules() const;
  // The node fields the rules above read, so decoding can skip the rest.
  wire::NodeFieldFilter node_fields() const;
  wire::DecodeLimits decode_limits() const;
  engine::ExtenderOptions extender_options() const;
  // fetch_timeout: half of kubernetes.bind_timeout (a pod read while binding).
  sources::KubeClusterOptions kube_cluster_options() const;
};

// Parses a YAML document over the defaults; `source` names it in errors.
Result<Config> parse_config(std::string text, std::string source);
Result<Config> load_config_file(const std::string& path);

// The command line. Flags override the file.
struct CommandLine {
  std::string config_file;
  std::string listen;
  std::string admin_listen;
  std::string log_level;
  std::string inventory;
  std::string kubeconfig;
  std::string mode;
  bool show_version = false;
  bool show_help = false;
};
Result<CommandLine> parse_command_line(int argc, const char* const* argv);
std::string usage_text();

// Loads the file (if any) and applies the flags.
Result<Config> resolve_config(const CommandLine& cli);

}  // namespace extender::config
