#include "extender/config/config.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "extender/common/quantity.h"
#include "extender/common/yaml_reader.h"
#include "extender/policy/packing.h"
#include "extender/policy/score.h"

#include "log_level.h"

namespace extender::config {
namespace {

// The least gap between ha.renew_deadline and ha.lease_duration (see load_ha).
constexpr std::chrono::milliseconds kMinFenceGap{500};

// Reads an integer that must be at least `min`.
Status read_at_least(YamlReader& r, const YAML::Node& map, std::string_view key, std::string_view path,
                     std::int64_t& out, std::int64_t min = 1) {
  EXTENDER_TRY(r.read(map, key, path, out));
  if (out < min) {
    return r.error_at(map[std::string(key)], std::string(path) + "." + std::string(key),
                      "must be at least " + std::to_string(min));
  }
  return {};
}

// Reads a decimal number from `low` to `high` (both included).
Status read_decimal(YamlReader& r, const YAML::Node& map, std::string_view key, std::string_view path, double& out,
                    double low, double high) {
  std::string text;
  EXTENDER_TRY(r.read(map, key, path, text));
  if (text.empty()) return {};
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || !(value >= low && value <= high)) {
    char range[64];
    std::snprintf(range, sizeof range, "expected a number from %g to %g", low, high);
    return r.error_at(map[std::string(key)], std::string(path) + "." + std::string(key), range);
  }
  out = value;
  return {};
}

// Reads a duration that must be longer than 0.
Status read_positive_duration(YamlReader& r, const YAML::Node& map, std::string_view key, std::string_view path,
                              milliseconds& out) {
  EXTENDER_TRY(r.read_duration(map, key, path, out));
  if (out.count() <= 0) {
    return r.error_at(map[std::string(key)], std::string(path) + "." + std::string(key), "must be longer than 0");
  }
  return {};
}

Status load_server_tls(YamlReader& r, const YAML::Node& tls, http::TlsOptions& t) {
  EXTENDER_TRY(r.expect_keys(tls, "server.tls", {"cert_file", "key_file", "client_ca_file", "client_names"}));
  if (!tls.IsDefined() || tls.IsNull()) return {};
  EXTENDER_TRY(r.read(tls, "cert_file", "server.tls", t.cert_file));
  EXTENDER_TRY(r.read(tls, "key_file", "server.tls", t.key_file));
  EXTENDER_TRY(r.read(tls, "client_ca_file", "server.tls", t.client_ca_file));
  EXTENDER_TRY(r.read(tls, "client_names", "server.tls", t.client_names));
  for (std::size_t i = 0; i < t.client_names.size(); ++i) {
    if (t.client_names[i].empty()) {
      return r.error_at(tls["client_names"][i], "server.tls.client_names",
                        "an empty name would admit certificates without a name; list the names to admit");
    }
  }
  if (!t.client_names.empty() && t.client_ca_file.empty()) {
    return r.error_at(tls["client_names"], "server.tls.client_names",
                      "needs client_ca_file (names are read from client certificates)");
  }
  if (t.cert_file.empty() != t.key_file.empty()) {
    return r.error_at(tls, "server.tls", "cert_file and key_file go together");
  }
  if (!t.client_ca_file.empty() && t.cert_file.empty()) {
    return r.error_at(tls, "server.tls.client_ca_file",
                      "needs cert_file and key_file (client verification is a TLS feature)");
  }
  return {};
}

Status load_server_pacing(YamlReader& r, const YAML::Node& n, ServerConfig::Pacing& p) {
  EXTENDER_TRY(r.expect_keys(n, "server.pacing", {"hold", "repeats_per_second", "errors_per_second"}));
  if (!n.IsDefined() || n.IsNull()) return {};
  EXTENDER_TRY(r.read_duration(n, "hold", "server.pacing", p.hold));
  if (p.hold.count() < 0 || p.hold > std::chrono::seconds(10)) {
    return r.error_at(n["hold"], "server.pacing.hold", "expected a duration from 0 to 10s");
  }
  EXTENDER_TRY(read_at_least(r, n, "repeats_per_second", "server.pacing", p.repeats_per_second, 2));
  if (p.repeats_per_second > 1'000'000) {
    return r.error_at(n["repeats_per_second"], "server.pacing.repeats_per_second", "must be at most 1000000");
  }
  EXTENDER_TRY(read_decimal(r, n, "errors_per_second", "server.pacing", p.errors_per_second, 1, 1e6));
  return {};
}

// server.listen and server.path_prefix (without its trailing slashes).
Status load_server_address(YamlReader& r, const YAML::Node& n, ServerConfig& s) {
  EXTENDER_TRY(r.read(n, "listen", "server", s.listen));
  if (auto hp = parse_host_port(s.listen); !hp) return r.error_at(n["listen"], "server.listen", hp.message());
  EXTENDER_TRY(r.read(n, "path_prefix", "server", s.path_prefix));
  if (!s.path_prefix.empty() && s.path_prefix[0] != '/') {
    return r.error_at(n["path_prefix"], "server.path_prefix", "must start with /");
  }
  while (s.path_prefix.size() > 1 && s.path_prefix.back() == '/') s.path_prefix.pop_back();
  if (s.path_prefix == "/") s.path_prefix.clear();
  return {};
}

Status load_server(YamlReader& r, const YAML::Node& n, ServerConfig& s) {
  EXTENDER_TRY(r.expect_keys(n, "server",
                             {"listen",
                              "path_prefix",
                              "threads",
                              "bind_threads",
                              "max_body_bytes",
                              "max_header_bytes",
                              "max_header_count",
                              "header_timeout",
                              "read_timeout",
                              "min_body_rate",
                              "write_timeout",
                              "keep_alive_timeout",
                              "keep_alive_max_requests",
                              "max_connections",
                              "max_connections_per_peer",
                              "max_buffered_bytes",
                              "request_deadline",
                              "max_nodes_per_request",
                              "tls",
                              "pacing"}));
  if (!n.IsDefined() || n.IsNull()) return {};
  EXTENDER_TRY(load_server_address(r, n, s));
  EXTENDER_TRY(read_at_least(r, n, "threads", "server", s.threads, 1));
  EXTENDER_TRY(read_at_least(r, n, "bind_threads", "server", s.bind_threads, 1));
  if (s.threads > 1024 || s.bind_threads > 1024) {
    return r.error_at(n, "server", "threads and bind_threads must be at most 1024");
  }
  EXTENDER_TRY(r.read_quantity(n, "max_body_bytes", "server", s.max_body_bytes));
  if (s.max_body_bytes < 1024) return r.error_at(n["max_body_bytes"], "server.max_body_bytes", "must be at least 1024");
  EXTENDER_TRY(r.read_quantity(n, "max_header_bytes", "server", s.max_header_bytes));
  if (s.max_header_bytes < 1024) {
    return r.error_at(n["max_header_bytes"], "server.max_header_bytes", "must be at least 1024");
  }
  EXTENDER_TRY(read_at_least(r, n, "max_header_count", "server", s.max_header_count, 8));
  EXTENDER_TRY(read_positive_duration(r, n, "header_timeout", "server", s.header_timeout));
  EXTENDER_TRY(read_positive_duration(r, n, "read_timeout", "server", s.read_timeout));
  EXTENDER_TRY(r.read_quantity(n, "min_body_rate", "server", s.min_body_rate));
  if (s.min_body_rate < 1024) {
    return r.error_at(n["min_body_rate"], "server.min_body_rate", "must be at least 1Ki (bytes per second)");
  }
  EXTENDER_TRY(read_at_least(r, n, "max_connections", "server", s.max_connections, 16));
  EXTENDER_TRY(read_at_least(r, n, "max_connections_per_peer", "server", s.max_connections_per_peer, 4));
  EXTENDER_TRY(r.read_quantity(n, "max_buffered_bytes", "server", s.max_buffered_bytes));
  if (s.max_buffered_bytes < s.max_body_bytes) {
    return r.error_at(n, "server.max_buffered_bytes", "must be at least server.max_body_bytes");
  }
  EXTENDER_TRY(read_positive_duration(r, n, "write_timeout", "server", s.write_timeout));
  EXTENDER_TRY(read_positive_duration(r, n, "keep_alive_timeout", "server", s.keep_alive_timeout));
  EXTENDER_TRY(read_at_least(r, n, "keep_alive_max_requests", "server", s.keep_alive_max_requests));
  EXTENDER_TRY(read_positive_duration(r, n, "request_deadline", "server", s.request_deadline));
  EXTENDER_TRY(read_at_least(r, n, "max_nodes_per_request", "server", s.max_nodes_per_request, 1));
  EXTENDER_TRY(load_server_pacing(r, n["pacing"], s.pacing));
  return load_server_tls(r, n["tls"], s.tls);
}

Status load_gpu(YamlReader& r, const YAML::Node& n, GpuConfig& g) {
  EXTENDER_TRY(r.expect_keys(n, "gpu", {"resources", "memory_annotation", "share"}));
  if (!n.IsDefined() || n.IsNull()) return {};
  EXTENDER_TRY(r.read(n, "memory_annotation", "gpu", g.memory_annotation));
  if (const YAML::Node share = n["share"]; share.IsDefined() && !share.IsNull()) {
    EXTENDER_TRY(r.expect_keys(share, "gpu.share", {"memory_resource", "count_resource", "unit"}));
    EXTENDER_TRY(r.read(share, "memory_resource", "gpu.share", g.share.memory_resource));
    EXTENDER_TRY(r.read(share, "count_resource", "gpu.share", g.share.count_resource));
    if (g.share.memory_resource.empty() != g.share.count_resource.empty()) {
      return r.error_at(share, "gpu.share", "memory_resource and count_resource are both set or both empty");
    }
    if (share["unit"].IsDefined()) {
      std::string unit;
      EXTENDER_TRY(r.read(share, "unit", "gpu.share", unit));
      auto bytes = parse_count("1" + unit, "unit");
      if (!bytes || *bytes <= 0) {
        return r.error_at(share["unit"], "gpu.share.unit", "expected a unit such as Gi, Mi or \"\" (bytes)");
      }
      g.share.unit_bytes = *bytes;
    }
  }
  const YAML::Node list = n["resources"];
  if (!list.IsDefined() || list.IsNull()) return {};
  if (!list.IsSequence()) return r.error_at(list, "gpu.resources", "expected a list");
  g.resources.clear();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    std::string path = "gpu.resources[" + std::to_string(i) + "]";
    EXTENDER_TRY(r.expect_keys(item, path, {"name", "memory_label", "memory_label_unit"}));
    model::GpuResourceRule rule;
    EXTENDER_TRY(r.read(item, "name", path, rule.name));
    if (rule.name.empty()) return r.error_at(item, path + ".name", "is required");
    rule.memory_label = rule.name + ".memory";
    EXTENDER_TRY(r.read(item, "memory_label", path, rule.memory_label));
    std::string unit = "Mi";
    EXTENDER_TRY(r.read(item, "memory_label_unit", path, unit));
    auto bytes = parse_count("1" + unit, "memory_label_unit");
    if (!bytes || *bytes <= 0) {
      return r.error_at(item["memory_label_unit"], path + ".memory_label_unit",
                        "expected a unit such as Mi, Gi, M or \"\" (bytes)");
    }
    rule.memory_label_unit = *bytes;
    for (const auto& existing : g.resources) {
      if (existing.name == rule.name) return r.error_at(item, path + ".name", "listed twice");
    }
    g.resources.push_back(std::move(rule));
  }
  return {};
}

// A mapping of non-empty scalars (`what` names an entry in the error), replacing `out`.
Status read_scalar_map(YamlReader& r, const YAML::Node& map, const std::string& path, std::string_view what,
                       model::StringMap& out) {
  if (!map.IsDefined() || map.IsNull()) return {};
  if (!map.IsMap()) return r.error_at(map, path, "expected a mapping, each entry " + std::string(what));
  out.clear();
  for (auto it = map.begin(); it != map.end(); ++it) {
    EXTENDER_TRY(r.spend(it->second, path));
    if (!it->first.IsScalar() || !it->second.IsScalar() || it->second.Scalar().empty()) {
      return r.error_at(it->first, path, "each entry is " + std::string(what));
    }
    out[it->first.Scalar()] = it->second.Scalar();
  }
  return {};
}

Status load_baremetal(YamlReader& r, const YAML::Node& n, sources::BaremetalOptions& b) {
  EXTENDER_TRY(
      r.expect_keys(n, "storage.baremetal", {"enabled", "provisioner", "node_id_annotation", "node_selector"}));
  if (!n.IsDefined() || n.IsNull()) return {};
  EXTENDER_TRY(r.read(n, "enabled", "storage.baremetal", b.enabled));
  EXTENDER_TRY(r.read(n, "provisioner", "storage.baremetal", b.provisioner));
  if (b.provisioner.empty()) return r.error_at(n["provisioner"], "storage.baremetal.provisioner", "must not be empty");
  EXTENDER_TRY(r.read(n, "node_id_annotation", "storage.baremetal", b.node_id_annotation));
  return read_scalar_map(r, n["node_selector"], "storage.baremetal.node_selector", "<label>: <value>", b.node_selector);
}

Status load_storage(YamlReader& r, const YAML::Node& n, StorageConfig& s) {
  EXTENDER_TRY(r.expect_keys(
      n, "storage",
      {"classes", "default_class", "default_pool", "default_claim_size", "pool_annotation_prefix", "capacity_tracking",
       "capacity_classes", "capacity_settle", "selected_claim_timeout", "placement_wait", "baremetal"}));
  if (!n.IsDefined() || n.IsNull()) return {};
  EXTENDER_TRY(r.read(n, "capacity_tracking", "storage", s.capacity_tracking));
  EXTENDER_TRY(r.read(n, "capacity_classes", "storage", s.capacity_classes));
  EXTENDER_TRY(read_positive_duration(r, n, "capacity_settle", "storage", s.capacity_settle));
  EXTENDER_TRY(read_positive_duration(r, n, "selected_claim_timeout", "storage", s.selected_claim_timeout));
  EXTENDER_TRY(read_positive_duration(r, n, "placement_wait", "storage", s.placement_wait));
  EXTENDER_TRY(r.read(n, "default_class", "storage", s.default_class));
  EXTENDER_TRY(r.read(n, "default_pool", "storage", s.default_pool));
  EXTENDER_TRY(r.read_quantity(n, "default_claim_size", "storage", s.default_claim_bytes));
  EXTENDER_TRY(r.read(n, "pool_annotation_prefix", "storage", s.pool_annotation_prefix));
  EXTENDER_TRY(read_scalar_map(r, n["classes"], "storage.classes", "<storage class>: <pool name>", s.classes));
  return load_baremetal(r, n["baremetal"], s.baremetal);
}

Status load_fragmentation_prior(YamlReader& r, const YAML::Node& prior, policy::ShapeMix& out) {
  if (!prior.IsDefined() || prior.IsNull()) return {};
  if (!prior.IsMap()) {
    return r.error_at(prior, "scoring.fragmentation_prior", "expected a mapping of GPUs (1, 8, 0.5) to weight");
  }
  out.clear();
  for (auto it = prior.begin(); it != prior.end(); ++it) {
    EXTENDER_TRY(r.spend(it->second, "scoring.fragmentation_prior"));
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
    auto shape = policy::parse_shape(key);
    if (!shape) return r.error_at(it->first, "scoring.fragmentation_prior", "\"" + key + "\": " + shape.message());
    std::int64_t weight = 0;
    EXTENDER_TRY(read_at_least(r, prior, key, "scoring.fragmentation_prior", weight, 1));
    if (weight > 1'000'000) {
      return r.error_at(it->second, "scoring.fragmentation_prior", "weights must be at most 1000000");
    }
    out.emplace_back(*shape, weight);
  }
  return {};
}

Status load_fragmentation(YamlReader& r, const YAML::Node& n, policy::ScoringRules& s) {
  EXTENDER_TRY(read_at_least(r, n, "fragmentation_window", "scoring", s.fragmentation_window, 0));
  if (s.fragmentation_window > 1'000'000) {
    return r.error_at(n["fragmentation_window"], "scoring.fragmentation_window", "must be at most 1000000");
  }
  EXTENDER_TRY(read_decimal(r, n, "fragmentation_size_exponent", "scoring", s.fragmentation_size_exponent, 0, 2));
  EXTENDER_TRY(read_decimal(r, n, "fragmentation_fit_weight", "scoring", s.fragmentation_fit_weight, 0, 100));
  EXTENDER_TRY(read_decimal(r, n, "fragmentation_cpu_scarce_bin", "scoring", s.fragmentation_cpu_scarce_bin, 0, 1000));
  return load_fragmentation_prior(r, n["fragmentation_prior"], s.fragmentation_prior);
}

Status load_scoring(YamlReader& r, const YAML::Node& n, policy::ScoringRules& s) {
  EXTENDER_TRY(r.expect_keys(n, "scoring",
                             {"volume_balance_weight", "gpu_packing_weight", "gpu_packing", "fragmentation_window",
                              "fragmentation_prior", "fragmentation_size_exponent", "fragmentation_fit_weight",
                              "fragmentation_cpu_scarce_bin", "capacity_weight", "capacity_preference"}));
  if (!n.IsDefined() || n.IsNull()) return {};
  for (const policy::Scorer& scorer : policy::scorers()) {
    EXTENDER_TRY(read_at_least(r, n, scorer.weight_key, "scoring", s.*scorer.weight, 0));
    if (s.*scorer.weight > policy::kMaxScorerWeight) return r.error_at(n, "scoring", "weights must be at most 1000000");
  }
  std::string preference = s.capacity_more_free ? "more_free" : "less_free";
  EXTENDER_TRY(r.read(n, "capacity_preference", "scoring", preference));
  if (preference != "more_free" && preference != "less_free") {
    return r.error_at(n["capacity_preference"], "scoring.capacity_preference", "expected more_free or less_free");
  }
  s.capacity_more_free = preference == "more_free";
  std::string packing = policy::packing_name(s.packing);
  EXTENDER_TRY(r.read(n, "gpu_packing", "scoring", packing));
  auto strategy = policy::parse_packing(packing);
  if (!strategy) return r.error_at(n["gpu_packing"], "scoring.gpu_packing", "expected " + policy::packing_names());
  s.packing = *strategy;
  return load_fragmentation(r, n, s);
}

Status load_state(YamlReader& r, const YAML::Node& n, StateConfig& s) {
  EXTENDER_TRY(r.expect_keys(n, "state", {"reservation_ttl", "demand_cache_size", "demand_cache_ttl"}));
  if (!n.IsDefined() || n.IsNull()) return {};
  EXTENDER_TRY(read_positive_duration(r, n, "reservation_ttl", "state", s.reservation_ttl));
  EXTENDER_TRY(read_at_least(r, n, "demand_cache_size", "state", s.demand_cache_size));
  EXTENDER_TRY(read_positive_duration(r, n, "demand_cache_ttl", "state", s.demand_cache_ttl));
  return {};
}

// A DNS subdomain (RFC 1123), as Kubernetes requires of a DRA driver's name.
bool dns_subdomain(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  std::size_t label = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char ch = name[i];
    const bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
    if (ch == '.') {
      if (label == 0 || name[i - 1] == '-') return false;
      label = 0;
    } else if (alnum || (ch == '-' && label > 0)) {
      if (++label > 63) return false;
    } else {
      return false;
    }
  }
  return name.back() != '-' && name.back() != '.';
}

Status load_dra(YamlReader& r, const YAML::Node& n, DraConfig& d) {
  EXTENDER_TRY(r.expect_keys(n, "kubernetes.dra", {"drivers"}));
  if (!n.IsDefined() || n.IsNull()) return {};
  const YAML::Node list = n["drivers"];
  EXTENDER_TRY(r.read(n, "drivers", "kubernetes.dra", d.drivers));
  if (d.drivers.empty()) return r.error_at(list, "kubernetes.dra.drivers", "must name at least one driver");
  if (d.drivers.size() > DraConfig::kMaxDraDrivers) {
    return r.error_at(list, "kubernetes.dra.drivers",
                      "at most " + std::to_string(DraConfig::kMaxDraDrivers) + " drivers");
  }
  for (std::size_t i = 0; i < d.drivers.size(); ++i) {
    const std::string& name = d.drivers[i];
    if (!dns_subdomain(name)) {
      return r.error_at(list[i], "kubernetes.dra.drivers",
                        "\"" + name + "\" is not a driver name (a DNS subdomain such as gpu.nvidia.com)");
    }
    const auto before = d.drivers.begin() + static_cast<std::ptrdiff_t>(i);
    if (std::find(d.drivers.begin(), before, name) != before) {
      return r.error_at(list[i], "kubernetes.dra.drivers", "\"" + name + "\" is listed twice");
    }
  }
  return {};
}

// The election's timings must fence: a leader stops deciding (renew_deadline) before a standby
// may take its lease (lease_duration), and the writes it sent before stopping get half the gap
// between the two to be answered (the binder gives up on them then, whatever bind_timeout says).
Status load_ha(YamlReader& r, const YAML::Node& n, Config& c) {
  EXTENDER_TRY(r.expect_keys(n, "ha",
                             {"enabled", "lease_name", "lease_namespace", "lease_duration", "renew_deadline",
                              "retry_period", "leader_label"}));
  HaConfig& h = c.ha;
  if (n.IsDefined() && !n.IsNull()) {
    EXTENDER_TRY(r.read(n, "enabled", "ha", h.enabled));
    EXTENDER_TRY(r.read(n, "lease_name", "ha", h.lease_name));
    EXTENDER_TRY(r.read(n, "lease_namespace", "ha", h.lease_namespace));
    EXTENDER_TRY(read_positive_duration(r, n, "lease_duration", "ha", h.lease_duration));
    EXTENDER_TRY(read_positive_duration(r, n, "renew_deadline", "ha", h.renew_deadline));
    EXTENDER_TRY(read_positive_duration(r, n, "retry_period", "ha", h.retry_period));
    EXTENDER_TRY(r.read(n, "leader_label", "ha", h.leader_label));
  }
  if (h.lease_name.empty()) return r.error_at(n, "ha.lease_name", "must not be empty");
  if (h.renew_deadline >= h.lease_duration) {
    return r.error_at(n, "ha",
                      "renew_deadline must be shorter than lease_duration (a leader must stop deciding "
                      "before a standby may take its lease)");
  }
  if (h.retry_period * 12 >= h.renew_deadline * 10) {
    return r.error_at(n, "ha", "renew_deadline must be longer than 1.2 x retry_period (room to retry a renewal)");
  }
  if (h.lease_duration - h.renew_deadline < kMinFenceGap) {
    return r.error_at(n, "ha",
                      "lease_duration must exceed renew_deadline by 500ms at least (half the difference is "
                      "the time a leader's last Binding has to be answered, the other half margin for "
                      "clock rates)");
  }
  return {};
}

Status load_mode(YamlReader& r, const YAML::Node& root, Mode& m) {
  std::string mode = m == Mode::kStandalone ? "standalone" : "kubernetes";
  EXTENDER_TRY(r.read(root, "mode", "", mode));
  if (mode == "standalone") {
    m = Mode::kStandalone;
  } else if (mode == "kubernetes") {
    m = Mode::kKubernetes;
  } else {
    return r.error_at(root["mode"], "mode", "expected standalone or kubernetes");
  }
  return {};
}

Status load_admin(YamlReader& r, const YAML::Node& admin, AdminConfig& a) {
  EXTENDER_TRY(r.expect_keys(admin, "admin", {"listen"}));
  if (!admin.IsDefined() || admin.IsNull()) return {};
  EXTENDER_TRY(r.read(admin, "listen", "admin", a.listen));
  if (!a.listen.empty()) {
    if (auto hp = parse_host_port(a.listen); !hp) return r.error_at(admin["listen"], "admin.listen", hp.message());
  }
  return {};
}

Status load_logging(YamlReader& r, const YAML::Node& logging, LoggingConfig& l) {
  EXTENDER_TRY(r.expect_keys(logging, "logging", {"level", "format", "lines_per_caller"}));
  if (!logging.IsDefined() || logging.IsNull()) return {};
  EXTENDER_TRY(r.read(logging, "level", "logging", l.level));
  EXTENDER_TRY(r.read(logging, "format", "logging", l.format));
  EXTENDER_TRY(read_decimal(r, logging, "lines_per_caller", "logging", l.lines_per_caller, 0, 1e6));
  if (l.format != "text" && l.format != "json") {
    return r.error_at(logging["format"], "logging.format", "expected text or json");
  }
  return {};
}

Status load_standalone(YamlReader& r, const YAML::Node& standalone, StandaloneConfig& s) {
  EXTENDER_TRY(r.expect_keys(standalone, "standalone", {"inventory", "upsert_request_nodes", "max_request_nodes"}));
  if (!standalone.IsDefined() || standalone.IsNull()) return {};
  EXTENDER_TRY(r.read(standalone, "inventory", "standalone", s.inventory));
  EXTENDER_TRY(r.read(standalone, "upsert_request_nodes", "standalone", s.upsert_request_nodes));
  return read_at_least(r, standalone, "max_request_nodes", "standalone", s.max_request_nodes, 0);
}

Status load_kubernetes(YamlReader& r, const YAML::Node& kube, KubernetesConfig& k) {
  EXTENDER_TRY(r.expect_keys(kube, "kubernetes",
                             {"kubeconfig", "bind_timeout", "watch_timeout", "stale_after", "token_reload",
                              "user_agent", "scheduler_names", "api_qps", "api_burst", "dra"}));
  if (!kube.IsDefined() || kube.IsNull()) return {};
  EXTENDER_TRY(r.read(kube, "kubeconfig", "kubernetes", k.kubeconfig));
  EXTENDER_TRY(read_positive_duration(r, kube, "bind_timeout", "kubernetes", k.bind_timeout));
  EXTENDER_TRY(read_positive_duration(r, kube, "watch_timeout", "kubernetes", k.watch_timeout));
  if (k.watch_timeout < std::chrono::seconds(1) || k.watch_timeout > std::chrono::seconds(45)) {
    return r.error_at(kube["watch_timeout"], "kubernetes.watch_timeout",
                      "must be between 1s and 45s (a silent watch is only noticed after this plus 10s)");
  }
  EXTENDER_TRY(read_positive_duration(r, kube, "stale_after", "kubernetes", k.stale_after));
  EXTENDER_TRY(r.read(kube, "scheduler_names", "kubernetes", k.scheduler_names));
  if (k.scheduler_names.empty()) {
    return r.error_at(kube["scheduler_names"], "kubernetes.scheduler_names", "must name at least one scheduler");
  }
  EXTENDER_TRY(read_positive_duration(r, kube, "token_reload", "kubernetes", k.token_reload));
  EXTENDER_TRY(r.read(kube, "user_agent", "kubernetes", k.user_agent));
  EXTENDER_TRY(read_at_least(r, kube, "api_qps", "kubernetes", k.api_qps, 0));
  EXTENDER_TRY(read_at_least(r, kube, "api_burst", "kubernetes", k.api_burst, 1));
  return load_dra(r, kube["dra"], k.dra);
}

Status load_document(YamlReader& r, Config& c) {
  const YAML::Node& root = r.root();
  EXTENDER_TRY(r.expect_keys(
      root, "",
      {"mode", "server", "admin", "logging", "gpu", "storage", "scoring", "state", "standalone", "kubernetes", "ha"}));
  if (!root.IsDefined() || root.IsNull()) return {};
  EXTENDER_TRY(load_mode(r, root, c.mode));
  EXTENDER_TRY(load_server(r, root["server"], c.server));
  EXTENDER_TRY(load_admin(r, root["admin"], c.admin));
  EXTENDER_TRY(load_logging(r, root["logging"], c.logging));
  EXTENDER_TRY(load_gpu(r, root["gpu"], c.gpu));
  EXTENDER_TRY(load_storage(r, root["storage"], c.storage));
  EXTENDER_TRY(load_scoring(r, root["scoring"], c.scoring));
  EXTENDER_TRY(load_state(r, root["state"], c.state));
  EXTENDER_TRY(load_standalone(r, root["standalone"], c.standalone));
  EXTENDER_TRY(load_kubernetes(r, root["kubernetes"], c.kubernetes));
  return load_ha(r, root["ha"], c);
}

}  // namespace

Status check_log_level(const std::string& level) {
  for (const char* known : {"trace", "debug", "info", "warn", "error"}) {
    if (level == known) return {};
  }
  return Error{"log level \"" + level + "\" is not one of trace, debug, info, warn, error"};
}

model::DemandRules Config::demand_rules() const {
  model::DemandRules rules;
  for (const auto& g : gpu.resources) rules.gpu_resources.push_back(g.name);
  rules.gpu_memory_annotation = gpu.memory_annotation;
  rules.pool_by_class = storage.classes;
  rules.default_class = storage.default_class;
  rules.default_pool = storage.default_pool;
  rules.default_claim_bytes = storage.default_claim_bytes;
  rules.share = gpu.share;
  return rules;
}

model::SupplyRules Config::supply_rules() const { return {gpu.resources, storage.pool_annotation_prefix, gpu.share}; }

wire::NodeFieldFilter Config::node_fields() const {
  wire::NodeFieldFilter f;
  f.keep_all = false;
  for (const auto& g : gpu.resources) {
    f.resources.push_back(g.name);
    if (!g.memory_label.empty()) f.labels.push_back(g.memory_label);
  }
  for (const auto* name : {&gpu.share.memory_resource, &gpu.share.count_resource}) {
    if (!name->empty()) f.resources.push_back(*name);
  }
  f.annotation_prefix = storage.pool_annotation_prefix;
  return f;
}

engine::ExtenderOptions Config::extender_options() const {
  engine::ExtenderOptions options{demand_rules(), scoring, state, kubernetes};
  options.placement_wait = storage.placement_wait;
  return options;
}

sources::KubeClusterOptions Config::kube_cluster_options() const {
  sources::KubeClusterOptions options{
      demand_rules(), supply_rules(), kubernetes, kubernetes.bind_timeout / 2, {}, {}, {}};
  options.dra.drivers = kubernetes.dra.drivers;
  options.capacity.enabled = storage.capacity_tracking;
  options.capacity.classes = storage.capacity_classes;
  options.capacity.rule.settle = storage.capacity_settle;
  options.capacity.rule.selected_hold = storage.selected_claim_timeout;
  options.baremetal = storage.baremetal;
  return options;
}

wire::DecodeLimits Config::decode_limits() const { return {static_cast<std::size_t>(server.max_nodes_per_request)}; }

static Result<Config> build_config(YamlReader& reader, const std::string& source) {
  Config c;
  try {
    if (auto st = load_document(reader, c); !st) return st.error();
  } catch (const std::exception& e) {
    return Error{source + ": " + e.what()};
  }
  if (auto st = check_log_level(c.logging.level); !st) return Error{source + ": logging.level: " + st.message()};
  return c;
}

Result<Config> parse_config(std::string text, std::string source) {
  auto reader = YamlReader::parse(std::move(text), source);
  if (!reader) return reader.error();
  return build_config(*reader, source);
}

// Relative file paths in a config file are relative to the file's own folder.
static void anchor_paths(Config& c, const std::string& config_path) {
  const auto slash = config_path.rfind('/');
  if (slash == std::string::npos) return;
  const std::string dir = config_path.substr(0, slash + 1);
  for (std::string* p : {&c.standalone.inventory, &c.kubernetes.kubeconfig, &c.server.tls.cert_file,
                         &c.server.tls.key_file, &c.server.tls.client_ca_file}) {
    if (!p->empty() && (*p)[0] != '/') *p = dir + *p;
  }
}

Result<Config> load_config_file(const std::string& path) {
  auto reader = YamlReader::load_file(path, 1u << 20);
  if (!reader) return reader.error();
  auto config = build_config(*reader, path);
  if (config) anchor_paths(*config, path);
  return config;
}

}  // namespace extender::config
