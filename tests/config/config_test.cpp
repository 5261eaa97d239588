#include "extender/config/config.h"

#include "extender/common/yaml_reader.h"

#include <gtest/gtest.h>

#include "extender/model/supply.h"
#include "extender/wire/extender_args.h"

#include "support/files.h"

namespace extender::config {
namespace {

TEST(Config, DefaultsWithoutAFile) {
  auto c = parse_config("", "<empty>");
  ASSERT_TRUE(c) << c.message();
  EXPECT_EQ(c->mode, Mode::kStandalone);
  EXPECT_EQ(c->server.listen, "127.0.0.1:8888");
  EXPECT_EQ(c->server.max_body_bytes, std::int64_t{128} << 20);
  ASSERT_EQ(c->gpu.resources.size(), 1u);
  EXPECT_EQ(c->gpu.resources[0].name, "nvidia.com/gpu");
  EXPECT_EQ(c->gpu.resources[0].memory_label, "nvidia.com/gpu.memory");
  EXPECT_EQ(c->gpu.resources[0].memory_label_unit, 1 << 20);
  EXPECT_EQ(c->scoring.volume_balance_weight, 1);
  EXPECT_EQ(c->scoring.gpu_packing_weight, 1);
  EXPECT_EQ(c->scoring.packing, policy::PackingStrategy::kBinpack);
}

TEST(Config, TheDocumentedExampleLoadsAndEqualsTheDefaults) {
  auto c = load_config_file(std::string(EXTENDER_SOURCE_DIR) + "/examples/config.yaml");
  ASSERT_TRUE(c) << c.message();
  auto d = parse_config("", "<empty>");
  EXPECT_EQ(c->server.listen, d->server.listen);
  EXPECT_EQ(c->server.threads, d->server.threads);
  EXPECT_EQ(c->server.read_timeout, d->server.read_timeout);
  EXPECT_EQ(c->state.reservation_ttl, d->state.reservation_ttl);
  EXPECT_EQ(c->storage.classes, d->storage.classes);
  EXPECT_EQ(c->storage.default_claim_bytes, d->storage.default_claim_bytes);
  EXPECT_EQ(c->kubernetes.bind_timeout, d->kubernetes.bind_timeout);
  EXPECT_EQ(c->admin.listen, d->admin.listen);
  EXPECT_EQ(c->server.bind_threads, d->server.bind_threads);
  EXPECT_EQ(c->server.max_header_bytes, d->server.max_header_bytes);
  EXPECT_EQ(c->server.max_header_count, d->server.max_header_count);
  EXPECT_EQ(c->server.header_timeout, d->server.header_timeout);
  EXPECT_EQ(c->server.min_body_rate, d->server.min_body_rate);
  EXPECT_EQ(c->server.max_connections, d->server.max_connections);
  EXPECT_EQ(c->server.max_connections_per_peer, d->server.max_connections_per_peer);
  EXPECT_EQ(c->server.max_buffered_bytes, d->server.max_buffered_bytes);
  EXPECT_EQ(c->server.max_nodes_per_request, d->server.max_nodes_per_request);
  EXPECT_EQ(c->server.pacing.hold, d->server.pacing.hold);
  EXPECT_EQ(c->server.pacing.repeats_per_second, d->server.pacing.repeats_per_second);
  EXPECT_EQ(c->server.pacing.errors_per_second, d->server.pacing.errors_per_second);
  EXPECT_EQ(c->standalone.max_request_nodes, d->standalone.max_request_nodes);
  EXPECT_EQ(c->server.tls.client_names, d->server.tls.client_names);
  EXPECT_EQ(c->kubernetes.watch_timeout, d->kubernetes.watch_timeout);
  EXPECT_EQ(c->kubernetes.stale_after, d->kubernetes.stale_after);
  EXPECT_EQ(c->kubernetes.scheduler_names, d->kubernetes.scheduler_names);
  EXPECT_EQ(c->kubernetes.api_qps, d->kubernetes.api_qps);
  EXPECT_EQ(c->kubernetes.api_burst, d->kubernetes.api_burst);
  EXPECT_EQ(c->kubernetes.dra.drivers, d->kubernetes.dra.drivers);
  EXPECT_EQ(c->gpu.share.memory_resource, d->gpu.share.memory_resource);
  EXPECT_EQ(c->gpu.share.count_resource, d->gpu.share.count_resource);
  EXPECT_EQ(c->gpu.share.unit_bytes, d->gpu.share.unit_bytes);
  EXPECT_EQ(c->scoring.packing, d->scoring.packing);
  EXPECT_EQ(c->scoring.fragmentation_window, d->scoring.fragmentation_window);
  EXPECT_EQ(c->scoring.fragmentation_size_exponent, d->scoring.fragmentation_size_exponent);
  EXPECT_EQ(c->scoring.fragmentation_fit_weight, d->scoring.fragmentation_fit_weight);
  EXPECT_EQ(c->scoring.fragmentation_cpu_scarce_bin, d->scoring.fragmentation_cpu_scarce_bin);
  EXPECT_EQ(c->scoring.fragmentation_prior, d->scoring.fragmentation_prior);
  EXPECT_EQ(c->logging.lines_per_caller, d->logging.lines_per_caller);
  EXPECT_EQ(c->ha.enabled, d->ha.enabled);
  EXPECT_EQ(c->ha.lease_name, d->ha.lease_name);
  EXPECT_EQ(c->ha.lease_namespace, d->ha.lease_namespace);
  EXPECT_EQ(c->ha.lease_duration, d->ha.lease_duration);
  EXPECT_EQ(c->ha.renew_deadline, d->ha.renew_deadline);
  EXPECT_EQ(c->ha.retry_period, d->ha.retry_period);
  EXPECT_EQ(c->ha.leader_label, d->ha.leader_label);
  EXPECT_EQ(c->standalone.inventory, std::string(EXTENDER_SOURCE_DIR) + "/examples/inventory.yaml")
      << "relative paths are relative to the config file";
}

TEST(Config, ReadsEveryKind) {
  auto c = parse_config(R"(
mode: kubernetes
server:
  listen: 0.0.0.0:9443
  path_prefix: /gpu/
  threads: 16
  max_body_bytes: 10Mi
  read_timeout: 1m30s
  request_deadline: 500ms
  max_nodes_per_request: 20000
  pacing: {hold: 20ms, repeats_per_second: 4, errors_per_second: 2.5}
  tls: {cert_file: /c.pem, key_file: /k.pem, client_ca_file: /ca.pem}
standalone: {max_request_nodes: 0}
gpu:
  resources:
    - {name: nvidia.com/gpu, memory_label: gpu.nvidia.com/memory, memory_label_unit: Gi}
    - {name: amd.com/gpu}
storage:
  classes: {fast: nvme, slow: hdd}
  default_claim_size: 1Gi
  capacity_classes: [topolvm-provisioner]
  capacity_settle: 90s
  selected_claim_timeout: 5m
  baremetal: {provisioner: bm, node_id_annotation: csi-baremetal.dell.com/uuid, node_selector: {disks: "yes"}}
scoring: {volume_balance_weight: 3, gpu_packing_weight: 0, gpu_packing: spread, capacity_weight: 2,
          capacity_preference: less_free, fragmentation_size_exponent: 1.5, fragmentation_fit_weight: 0.05,
          fragmentation_cpu_scarce_bin: 0.5}
logging: {level: debug, format: json, lines_per_caller: 2.5}
)",
                        "test");
  ASSERT_TRUE(c) << c.message();
  EXPECT_EQ(c->mode, Mode::kKubernetes);
  EXPECT_EQ(c->server.path_prefix, "/gpu");
  EXPECT_EQ(c->server.threads, 16);
  EXPECT_EQ(c->server.max_body_bytes, 10 << 20);
  EXPECT_EQ(c->server.read_timeout, std::chrono::milliseconds(90'000));
  EXPECT_EQ(c->server.request_deadline, std::chrono::milliseconds(500));
  EXPECT_EQ(c->server.max_nodes_per_request, 20000);
  EXPECT_EQ(c->server.pacing.hold, std::chrono::milliseconds(20));
  EXPECT_EQ(c->server.pacing.repeats_per_second, 4);
  EXPECT_DOUBLE_EQ(c->server.pacing.errors_per_second, 2.5);
  EXPECT_EQ(c->decode_limits().max_nodes, 20000u);
  EXPECT_EQ(c->standalone.max_request_nodes, 0);
  EXPECT_EQ(c->server.tls.client_ca_file, "/ca.pem");
  ASSERT_EQ(c->gpu.resources.size(), 2u);
  EXPECT_EQ(c->gpu.resources[0].memory_label, "gpu.nvidia.com/memory");
  EXPECT_EQ(c->gpu.resources[0].memory_label_unit, std::int64_t{1} << 30);
  EXPECT_EQ(c->gpu.resources[1].memory_label, "amd.com/gpu.memory");
  EXPECT_EQ(c->storage.classes.at("slow"), "hdd");
  EXPECT_TRUE(c->storage.capacity_tracking) << "on by default";
  EXPECT_EQ(c->kube_cluster_options().capacity.classes, std::vector<std::string>{"topolvm-provisioner"});
  EXPECT_EQ(c->kube_cluster_options().capacity.rule.settle, std::chrono::milliseconds(90'000));
  EXPECT_EQ(c->kube_cluster_options().capacity.rule.selected_hold, std::chrono::minutes(5));
  EXPECT_TRUE(c->kube_cluster_options().baremetal.enabled) << "on by default";
  EXPECT_EQ(c->kube_cluster_options().baremetal.provisioner, "bm");
  EXPECT_EQ(c->kube_cluster_options().baremetal.node_id_annotation, "csi-baremetal.dell.com/uuid");
  EXPECT_EQ(c->kube_cluster_options().baremetal.node_selector, (model::StringMap{{"disks", "yes"}}));
  EXPECT_EQ(c->scoring.volume_balance_weight, 3);
  EXPECT_EQ(c->scoring.gpu_packing_weight, 0);
  EXPECT_EQ(c->scoring.capacity_weight, 2);
  EXPECT_FALSE(c->scoring.capacity_more_free);
  EXPECT_EQ(c->scoring.packing, policy::PackingStrategy::kSpread);
  EXPECT_DOUBLE_EQ(c->scoring.fragmentation_size_exponent, 1.5);
  EXPECT_DOUBLE_EQ(c->scoring.fragmentation_fit_weight, 0.05);
  EXPECT_DOUBLE_EQ(c->scoring.fragmentation_cpu_scarce_bin, 0.5);
  EXPECT_EQ(c->logging.format, "json");
  EXPECT_DOUBLE_EQ(c->logging.lines_per_caller, 2.5);
  model::DemandRules rules = c->demand_rules();
  EXPECT_EQ(rules.gpu_resources, (std::vector<std::string>{"nvidia.com/gpu", "amd.com/gpu"}));
  EXPECT_EQ(rules.default_claim_bytes, 1 << 30);
}

struct Bad {
  const char* yaml;
  const char* mentions;
};

TEST(Config, ErrorsNameTheKeyAndTheLine) {
  const Bad cases[] = {
      {"server:\n  listen: 1.2.3.4:8888\n  thread: 4\n", "test:3: server.thread: unknown key"},
      {"bogus: 1\n", "test:1: bogus: unknown key"},
      {"server:\n  threads: many\n", "test:2: server.threads: expected an integer"},
      {"server:\n  threads: 0\n", "server.threads: must be at least 1"},
      {"server:\n  max_connections_per_peer: 1\n", "server.max_connections_per_peer: must be at least 4"},
      {"server:\n  max_nodes_per_request: 0\n", "test:2: server.max_nodes_per_request: must be at least 1"},
      {"standalone:\n  max_request_nodes: -1\n", "test:2: standalone.max_request_nodes: must be at least 0"},
      {"server:\n  tls: {client_names: [a]}\n", "server.tls.client_names: needs client_ca_file"},
      {"server:\n  tls: {cert_file: c, key_file: k, client_ca_file: ca, client_names: a}\n",
       "server.tls.client_names: expected a list of strings"},
      {"server:\n  tls:\n    cert_file: c\n    key_file: k\n    client_ca_file: ca\n    client_names:\n"
       "      - kube-scheduler\n      - \"\"\n",
       "test:8: server.tls.client_names: an empty name would admit certificates without a name"},
      {"server:\n  tls: {cert_file: c, key_file: k, client_ca_file: ca, client_names: ['']}\n",
       "test:2: server.tls.client_names: an empty name"},
      {"kubernetes:\n  watch_timeout: 5m\n", "kubernetes.watch_timeout: must be between 1s and 45s"},
      {"kubernetes:\n  scheduler_names: []\n", "kubernetes.scheduler_names: must name at least one scheduler"},
      {"server:\n  listen: nowhere\n", "server.listen: invalid address"},
      {"server:\n  read_timeout: 5\n", "server.read_timeout: invalid duration"},
      {"server:\n  max_body_bytes: 10Q\n", "server.max_body_bytes"},
      {"server:\n  path_prefix: scheduler\n", "must start with /"},
      {"server:\n  tls: {cert_file: /a}\n", "cert_file and key_file go together"},
      {"mode: cluster\n", "mode: expected standalone or kubernetes"},
      {"scoring:\n  gpu_packing: tight\n", "expected binpack, spread or fragmentation"},
      {"scoring:\n  capacity_preference: most\n", "expected more_free or less_free"},
      {"scoring:\n  gpu_packing_weight: -1\n", "must be at least 0"},
      {"scoring:\n  fragmentation_size_exponent: 3\n",
       "scoring.fragmentation_size_exponent: expected a number from 0 to 2"},
      {"scoring:\n  fragmentation_fit_weight: -0.1\n",
       "scoring.fragmentation_fit_weight: expected a number from 0 to 100"},
      {"scoring:\n  fragmentation_fit_weight: a lot\n", "scoring.fragmentation_fit_weight: expected a number"},
      {"scoring:\n  fragmentation_fit_weight: nan\n", "scoring.fragmentation_fit_weight: expected a number"},
      {"scoring:\n  fragmentation_cpu_scarce_bin: -1\n",
       "scoring.fragmentation_cpu_scarce_bin: expected a number from 0 to 1000"},
      {"gpu:\n  resources:\n    - memory_label: x\n", "gpu.resources[0].name: is required"},
      {"gpu:\n  resources:\n    - {name: a}\n    - {name: a}\n", "listed twice"},
      {"gpu:\n  resources:\n    - {name: a, memory_label_unit: bananas}\n", "memory_label_unit"},
      {"logging:\n  level: loud\n", "logging.level"},
      {"logging:\n  format: xml\n", "expected text or json"},
      {"logging:\n  lines_per_caller: -1\n", "logging.lines_per_caller: expected a number from 0 to 1e+06"},
      {"server:\n  pacing: {hold: 11s}\n", "server.pacing.hold: expected a duration from 0 to 10s"},
      {"server:\n  pacing: {repeats_per_second: 1}\n", "server.pacing.repeats_per_second: must be at least 2"},
      {"server:\n  pacing: {repeats_per_second: 2000000}\n", "server.pacing.repeats_per_second: must be at most"},
      {"server:\n  pacing: {errors_per_second: 0}\n", "server.pacing.errors_per_second: expected a number from 1"},
      {"server:\n  pacing: {hold_for: 1s}\n", "hold_for"},
      {"storage:\n  classes: [a]\n", "storage.classes"},
      {"storage:\n  capacity_settle: 0s\n", "storage.capacity_settle: must be longer than 0"},
      {"storage:\n  selected_claim_timeout: 0s\n", "storage.selected_claim_timeout: must be longer than 0"},
      {"storage:\n  capacity_tracking: maybe\n", "storage.capacity_tracking"},
      {"storage:\n  baremetal: {provisioner: \"\"}\n", "storage.baremetal.provisioner: must not be empty"},
      {"storage:\n  baremetal: {node_selector: [a]}\n", "storage.baremetal.node_selector"},
      {"storage:\n  baremetal: {nodeid: x}\n", "nodeid"},
      {"- a\n- b\n", "expected a mapping"},
      {"server: [\n", "not valid YAML"},
      {"kubernetes:\n  bind_timeout: 0s\n", "must be longer than 0"},
      {"kubernetes:\n  api_qps: -1\n", "test:2: kubernetes.api_qps: must be at least 0"},
      {"kubernetes:\n  api_burst: 0\n", "test:2: kubernetes.api_burst: must be at least 1"},
      {"kubernetes:\n  api_qps: 2.5\n", "test:2: kubernetes.api_qps: expected an integer"},
  };
  for (const auto& c : cases) {
    auto r = parse_config(c.yaml, "test");
    ASSERT_FALSE(r) << c.yaml;
    EXPECT_NE(r.message().find(c.mentions), std::string::npos) << c.yaml << " -> " << r.message();
  }
}

TEST(Config, TheApiWriteLimitIsClientGosQpsAndBurst) {
  struct Case {
    const char* yaml;
    std::int64_t qps, burst;
  };
  const Case cases[] = {
      {"", 50, 100},  // kube-scheduler's own client
      {"kubernetes: {api_qps: 20, api_burst: 5}\n", 20, 5},
      {"kubernetes: {api_qps: 0}\n", 0, 100},  // no limit
  };
  for (const auto& c : cases) {
    auto r = parse_config(c.yaml, "test");
    ASSERT_TRUE(r) << c.yaml << r.message();
    EXPECT_EQ(r->kubernetes.api_qps, c.qps) << c.yaml;
    EXPECT_EQ(r->kubernetes.api_burst, c.burst) << c.yaml;
  }
}

TEST(Config, DraDriversAreNamedUnderKubernetesDraAndReachTheInventoryRules) {
  struct Case {
    const char* yaml;
    std::vector<std::string> drivers;
  };
  const Case cases[] = {
      {"", {"gpu.nvidia.com"}},  // NVIDIA's driver by default
      {"kubernetes: {dra: {}}\n", {"gpu.nvidia.com"}},
      {"kubernetes:\n  dra:\n    drivers: [gpu.example.com]\n", {"gpu.example.com"}},
      {"kubernetes:\n  dra:\n    drivers: [gpu.nvidia.com, gpu.amd.com, x-1.y2]\n",
       {"gpu.nvidia.com", "gpu.amd.com", "x-1.y2"}},
  };
  for (const auto& c : cases) {
    auto r = parse_config(c.yaml, "test");
    ASSERT_TRUE(r) << c.yaml << r.message();
    EXPECT_EQ(r->kubernetes.dra.drivers, c.drivers) << c.yaml;
    EXPECT_EQ(r->kube_cluster_options().dra.drivers, c.drivers) << c.yaml;
  }
  const std::string seventeen =
      "kubernetes:\n  dra:\n    drivers: [a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, b0, b1, b2, b3, b4, b5, b6]\n";
  const std::string long_label = "kubernetes:\n  dra:\n    drivers: [" + std::string(64, 'a') + ".com]\n";
  const Bad bad[] = {
      {"kubernetes:\n  dra:\n    drivers: []\n", "test:3: kubernetes.dra.drivers: must name at least one driver"},
      {"kubernetes:\n  dra:\n    drivers: gpu.nvidia.com\n",
       "test:3: kubernetes.dra.drivers: expected a list of strings"},
      {"kubernetes:\n  dra:\n    drivers:\n      - gpu.nvidia.com\n      - \"\"\n",
       "test:5: kubernetes.dra.drivers: \"\" is not a driver name"},
      {"kubernetes:\n  dra:\n    drivers: [GPU.nvidia.com]\n",
       "kubernetes.dra.drivers: \"GPU.nvidia.com\" is not a driver name"},
      {"kubernetes:\n  dra:\n    drivers: [gpu.nvidia.com/x]\n", "is not a driver name"},
      {"kubernetes:\n  dra:\n    drivers: [-gpu.com]\n", "is not a driver name"},
      {"kubernetes:\n  dra:\n    drivers: [gpu-.com]\n", "is not a driver name"},
      {"kubernetes:\n  dra:\n    drivers: [gpu..com]\n", "is not a driver name"},
      {"kubernetes:\n  dra:\n    drivers: [gpu.com.]\n", "is not a driver name"},
      {long_label.c_str(), "is not a driver name"},
      {"kubernetes:\n  dra:\n    drivers: [a.b, c.d, a.b]\n", "kubernetes.dra.drivers: \"a.b\" is listed twice"},
      {seventeen.c_str(), "kubernetes.dra.drivers: at most 16 drivers"},
      {"kubernetes:\n  dra:\n    driver: [a]\n", "test:3: kubernetes.dra.driver: unknown key"},
  };
  for (const auto& c : bad) {
    auto r = parse_config(c.yaml, "test");
    ASSERT_FALSE(r) << c.yaml;
    EXPECT_NE(r.message().find(c.mentions), std::string::npos) << c.yaml << " -> " << r.message();
  }
}

TEST(Config, AliasBombsAreRejectedWithoutExpanding) {
  std::string yaml = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char name = 'b'; name <= 'k'; ++name) {
    yaml += std::string(1, name) + ": &" + name + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" +
            prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n";
    prev = name;
  }
  yaml += "storage:\n  classes:\n    x: *k\n";
  auto r = parse_config(yaml, "bomb");
  EXPECT_FALSE(r);
}

TEST(Config, TheNodesFormFieldFilterKeepsWhatThePolicyReads) {
  Config c;
  const std::string body =
      R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[{"metadata":{"name":"n1","labels":{)"
      R"("nvidia.com/gpu.memory":"81920","nvidia.com/gpu.product":"H100","kubernetes.io/hostname":"n1"},)"
      R"("annotations":{"scheduler-extender.io/pool.local":"2Ti","other.io/x":"y"}},)"
      R"("status":{"allocatable":{"nvidia.com/gpu":"8","cpu":"64"}}}]}})";
  wire::PaddedBody padded(body);
  auto args = wire::decode_extender_args(padded, c.node_fields());
  ASSERT_TRUE(args) << args.message();
  const model::Node& n = (*args->nodes)[0].node;
  EXPECT_EQ(n.labels, (model::StringMap{{"nvidia.com/gpu.memory", "81920"}}));
  EXPECT_EQ(n.annotations, (model::StringMap{{"scheduler-extender.io/pool.local", "2Ti"}}));
  EXPECT_EQ(n.allocatable, (model::StringMap{{"nvidia.com/gpu", "8"}}));
  const model::NodeSupply supply = model::supply_from_node(n, c.supply_rules());
  EXPECT_EQ(supply.gpu_memory_bytes.at("nvidia.com/gpu"), std::int64_t{81920} << 20);
  ASSERT_EQ(supply.pools.size(), 1u);
  EXPECT_EQ(supply.pools[0].capacity_bytes, std::int64_t{2} << 40);
}

TEST(Config, HaDefaultsFailOverInSeconds) {
  auto c = parse_config("", "<empty>");
  ASSERT_TRUE(c) << c.message();
  EXPECT_TRUE(c->ha.enabled);
  EXPECT_EQ(c->ha.lease_duration, std::chrono::seconds(2));
  EXPECT_EQ(c->ha.renew_deadline, std::chrono::milliseconds(1'500));
  EXPECT_EQ(c->ha.retry_period, std::chrono::milliseconds(500));
}

TEST(Config, HaTimingsMustFence) {
  struct Case {
    const char* yaml;
    const char* error;  // empty: accepted
  };
  const Case cases[] = {
      {"ha: {lease_duration: 30s, renew_deadline: 20s, retry_period: 5s}", ""},
      {"ha: {lease_duration: 10s, renew_deadline: 10s}", "renew_deadline must be shorter than lease_duration"},
      {"ha: {lease_duration: 15s, renew_deadline: 2s, retry_period: 2s}", "1.2 x retry_period"},
      {"ha: {lease_duration: 3s, renew_deadline: 2600ms}", "exceed renew_deadline by 500ms"},
      {"ha: {lease_duration: 3s, renew_deadline: 2500ms}", ""},
      {"kubernetes: {bind_timeout: 10s}\nha: {lease_duration: 3s, renew_deadline: 2s}", ""},
      {"ha: {lease_name: \"\"}", "ha.lease_name"},
      {"ha: {leader: x}", "leader"},
  };
  for (const Case& c : cases) {
    auto parsed = parse_config(c.yaml, "t.yaml");
    if (std::string(c.error).empty()) {
      EXPECT_TRUE(parsed) << c.yaml << ": " << parsed.message();
    } else {
      ASSERT_FALSE(parsed) << c.yaml;
      EXPECT_NE(parsed.message().find(c.error), std::string::npos) << parsed.message();
    }
  }
}

TEST(CommandLine, FlagsOverrideTheFile) {
  const char* argv[] = {"scheduler-extender", "--listen", "127.0.0.1:9999",
                        "--log-level=debug",  "--mode",   "kubernetes"};
  auto cli = parse_command_line(6, argv);
  ASSERT_TRUE(cli) << cli.message();
  auto c = resolve_config(*cli);
  ASSERT_TRUE(c) << c.message();
  EXPECT_EQ(c->server.listen, "127.0.0.1:9999");
  EXPECT_EQ(c->logging.level, "debug");
  EXPECT_EQ(c->mode, Mode::kKubernetes);

  const char* unknown[] = {"x", "--frobnicate"};
  EXPECT_FALSE(parse_command_line(2, unknown));
  const char* missing[] = {"x", "--config"};
  EXPECT_FALSE(parse_command_line(2, missing));
  const char* bad_level[] = {"x", "--log-level", "loud"};
  EXPECT_FALSE(resolve_config(*parse_command_line(3, bad_level)));
  const char* no_file[] = {"x", "--config", "/nonexistent/config.yaml"};
  auto nf = resolve_config(*parse_command_line(3, no_file));
  ASSERT_FALSE(nf);
  EXPECT_NE(nf.message().find("/nonexistent/config.yaml"), std::string::npos);
}

TEST(ParseDuration, Table) {
  EXPECT_EQ(*extender::parse_duration("500ms"), std::chrono::milliseconds(500));
  EXPECT_EQ(*extender::parse_duration("5s"), std::chrono::milliseconds(5000));
  EXPECT_EQ(*extender::parse_duration("1h2m3s"), std::chrono::milliseconds(3'723'000));
  EXPECT_EQ(*extender::parse_duration("0"), std::chrono::milliseconds(0));
  for (const char* bad : {"", "5", "s", "5x", "1.5s", "-1s", "99999999999999999999h"}) {
    EXPECT_FALSE(extender::parse_duration(bad)) << bad;
  }
}

}  // namespace
}  // namespace extender::config
