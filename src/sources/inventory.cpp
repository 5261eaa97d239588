#include "extender/sources/inventory.h"

#include <optional>
#include <set>

#include "extender/common/quantity.h"
#include "extender/common/yaml_reader.h"

namespace extender::sources {
namespace {

Result<model::Pool> read_pool(YamlReader& r, const YAML::Node& n, const std::string& path) {
  EXTENDER_TRY(r.expect_keys(n, path, {"name", "capacity", "devices"}));
  model::Pool pool;
  EXTENDER_TRY(r.read(n, "name", path, pool.name));
  if (pool.name.empty()) return r.error_at(n, path + ".name", "is required");
  const YAML::Node devices = n["devices"];
  if (devices.IsDefined() && !devices.IsNull()) {
    if (!devices.IsSequence()) return r.error_at(devices, path + ".devices", "expected a list");
    std::set<std::string> seen;
    for (std::size_t i = 0; i < devices.size(); ++i) {
      const YAML::Node d = devices[i];
      std::string dpath = path + ".devices[" + std::to_string(i) + "]";
      EXTENDER_TRY(r.expect_keys(d, dpath, {"name", "capacity"}));
      model::Device device;
      EXTENDER_TRY(r.read(d, "name", dpath, device.name));
      if (device.name.empty()) return r.error_at(d, dpath + ".name", "is required");
      if (!seen.insert(device.name).second) return r.error_at(d, dpath + ".name", "listed twice in this pool");
      if (!d["capacity"].IsDefined()) return r.error_at(d, dpath + ".capacity", "is required");
      EXTENDER_TRY(r.read_quantity(d, "capacity", dpath, device.capacity_bytes));
      if (pool.capacity_bytes > INT64_MAX - device.capacity_bytes)
        return r.error_at(d, dpath, "pool capacity overflows");
      pool.capacity_bytes += device.capacity_bytes;
      pool.devices.push_back(std::move(device));
    }
    if (n["capacity"].IsDefined()) {
      return r.error_at(n["capacity"], path + ".capacity", "a pool with devices takes its capacity from them");
    }
  } else {
    if (!n["capacity"].IsDefined()) return r.error_at(n, path + ".capacity", "is required (or list devices)");
    EXTENDER_TRY(r.read_quantity(n, "capacity", path, pool.capacity_bytes));
  }
  return pool;
}

// The node's `dra` entry; nullopt when it has none.
Result<std::optional<DraGpus>> read_dra(YamlReader& r, const YAML::Node& n, const std::string& path,
                                        const model::NodeSupply& node) {
  const YAML::Node dra = n["dra"];
  if (!dra.IsDefined() || dra.IsNull()) return std::optional<DraGpus>{};
  const std::string dpath = path + ".dra";
  if (!dra.IsMap()) return r.error_at(dra, dpath, "expected a mapping such as {gpus: 8, gpu_memory: 80Gi}");
  EXTENDER_TRY(r.expect_keys(dra, dpath, {"gpus", "gpu_memory"}));
  for (const auto& [resource, count] : node.gpus) {
    if (count > 0) {
      return r.error_at(dra, dpath,
                        "the node also gives gpus." + resource +
                            ": a node's GPUs come from a device plugin or from DRA, not both "
                            "(two allocators would hand out the same GPUs)");
    }
  }
  DraGpus out{node.name, 0, 0};
  if (!dra["gpus"].IsDefined()) return r.error_at(dra, dpath + ".gpus", "is required");
  EXTENDER_TRY(r.read_quantity(dra, "gpus", dpath, out.gpus));
  if (out.gpus < 1 || out.gpus > kMaxDraGpusPerNode) {
    return r.error_at(dra["gpus"], dpath + ".gpus", "expected 1 to " + std::to_string(kMaxDraGpusPerNode) + " GPUs");
  }
  EXTENDER_TRY(r.read_quantity(dra, "gpu_memory", dpath, out.memory_bytes));
  return std::optional<DraGpus>{out};
}

// A node's labels: a mapping of strings (absent or null: none).
Status read_labels(YamlReader& r, const YAML::Node& labels, const std::string& path, model::StringMap& out) {
  if (!labels.IsDefined() || labels.IsNull()) return {};
  if (!labels.IsMap()) return r.error_at(labels, path, "expected a mapping");
  for (auto it = labels.begin(); it != labels.end(); ++it) {
    EXTENDER_TRY(r.spend(it->second, path));
    if (!it->first.IsScalar() || !it->second.IsScalar()) return r.error_at(it->first, path, "expected strings");
    out[it->first.Scalar()] = it->second.Scalar();
  }
  return {};
}

// A mapping of GPU resource to a quantity (`what` of it), into `out` (absent or null: none).
Status read_per_resource(YamlReader& r, const YAML::Node& map, const std::string& path, const std::string& what,
                         std::map<std::string, std::int64_t, std::less<>>& out) {
  if (!map.IsDefined() || map.IsNull()) return {};
  if (!map.IsMap()) return r.error_at(map, path, "expected a mapping of GPU resource to " + what);
  for (auto it = map.begin(); it != map.end(); ++it) {
    EXTENDER_TRY(r.spend(it->second, path));
    if (!it->first.IsScalar()) return r.error_at(it->first, path, "expected a resource name");
    std::int64_t value = 0;
    EXTENDER_TRY(r.read_quantity(map, it->first.Scalar(), path, value));
    out[it->first.Scalar()] = value;
  }
  return {};
}

Result<model::NodeSupply> read_node(YamlReader& r, const YAML::Node& n, const std::string& path,
                                    const std::vector<model::GpuResourceRule>& gpu_rules,
                                    const model::GpuShareRule& share) {
  EXTENDER_TRY(r.expect_keys(n, path, {"name", "labels", "gpus", "gpu_memory", "pools", "cpu", "memory", "dra"}));
  model::NodeSupply node;
  EXTENDER_TRY(r.read(n, "name", path, node.name));
  if (node.name.empty()) return r.error_at(n, path + ".name", "is required");

  model::StringMap node_labels;
  const YAML::Node labels = n["labels"];
  EXTENDER_TRY(read_labels(r, labels, path + ".labels", node_labels));
  EXTENDER_TRY(read_per_resource(r, n["gpus"], path + ".gpus", "count", node.gpus));
  if (auto it = node_labels.find(model::kGpuProductLabel); it != node_labels.end()) node.gpu_model = it->second;

  // Memory per GPU: the node's labels first (as GPU feature discovery publishes them), then the
  // explicit gpu_memory mapping, which wins.
  for (const auto& rule : gpu_rules) {
    if (rule.memory_label.empty()) continue;
    auto it = node_labels.find(rule.memory_label);
    if (it == node_labels.end()) continue;
    auto units = parse_count(it->second, "label " + rule.memory_label);
    if (!units || *units > INT64_MAX / rule.memory_label_unit) {
      return r.error_at(labels, path + ".labels." + rule.memory_label, units ? "overflows" : units.message());
    }
    node.gpu_memory_bytes[rule.name] = *units * rule.memory_label_unit;
  }
  EXTENDER_TRY(read_per_resource(r, n["gpu_memory"], path + ".gpu_memory", "memory per GPU", node.gpu_memory_bytes));

  const YAML::Node pools = n["pools"];
  if (pools.IsDefined() && !pools.IsNull()) {
    if (!pools.IsSequence()) return r.error_at(pools, path + ".pools", "expected a list");
    for (std::size_t i = 0; i < pools.size(); ++i) {
      auto pool = read_pool(r, pools[i], path + ".pools[" + std::to_string(i) + "]");
      if (!pool) return pool.error();
      if (node.find_pool(pool->name))
        return r.error_at(pools[i], path + ".pools[" + std::to_string(i) + "].name", "listed twice on this node");
      node.pools.push_back(std::move(*pool));
    }
  }
  if (n["cpu"].IsDefined()) {
    std::string text;
    EXTENDER_TRY(r.read(n, "cpu", path, text));
    auto q = Quantity::parse(text);
    if (!q || q->is_negative())
      return r.error_at(n["cpu"], path + ".cpu", "expected a CPU quantity such as 96 or 500m");
    node.cpu_milli = q->milli_ceil();
  }
  if (n["memory"].IsDefined()) EXTENDER_TRY(r.read_quantity(n, "memory", path, node.memory_bytes));
  node.gpu_devices = model::derive_gpu_devices(node, gpu_rules, share);
  return node;
}

// `dra_allowed` false: a node with `dra` is an error (standalone mode reads no DRA).
Result<Inventory> read_inventory(YamlReader& r, const std::vector<model::GpuResourceRule>& gpu_rules,
                                 const model::GpuShareRule& share, bool dra_allowed) {
  EXTENDER_TRY(r.expect_keys(r.root(), "", {"nodes"}));
  Inventory out;
  std::int64_t dra_gpus = 0;
  const YAML::Node nodes = r.root()["nodes"];
  if (!nodes.IsDefined() || nodes.IsNull()) return out;
  if (!nodes.IsSequence()) return r.error_at(nodes, "nodes", "expected a list");
  std::set<std::string> names;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    std::string path = "nodes[" + std::to_string(i) + "]";
    auto node = read_node(r, nodes[i], path, gpu_rules, share);
    if (!node) return node.error();
    if (!names.insert(node->name).second)
      return r.error_at(nodes[i], path + ".name", "node " + node->name + " listed twice");
    auto dra = read_dra(r, nodes[i], path, *node);
    if (!dra) return dra.error();
    if (*dra) {
      if (!dra_allowed) {
        return r.error_at(nodes[i]["dra"], path + ".dra",
                          "DRA nodes are read by the simulator only (scheduler-extender simulate); standalone mode "
                          "reads no DRA");
      }
      dra_gpus += (*dra)->gpus;
      if (dra_gpus > kMaxDraGpus) {
        return r.error_at(nodes[i]["dra"], path + ".dra.gpus",
                          "the inventory's DRA GPUs exceed " + std::to_string(kMaxDraGpus));
      }
      out.dra.push_back(std::move(**dra));
    }
    out.nodes.push_back(std::move(*node));
  }
  return out;
}

Result<Inventory> guarded(YamlReader& r, const std::string& source,
                          const std::vector<model::GpuResourceRule>& gpu_rules, const model::GpuShareRule& share,
                          bool dra_allowed) {
  try {
    return read_inventory(r, gpu_rules, share, dra_allowed);
  } catch (const std::exception& e) {
    return Error{source + ": " + e.what()};
  }
}

Result<std::vector<model::NodeSupply>> nodes_of(Result<Inventory> inventory) {
  if (!inventory) return inventory.error();
  return std::move(inventory->nodes);
}

}  // namespace

Result<std::vector<model::NodeSupply>> parse_inventory(std::string text, std::string source,
                                                       const std::vector<model::GpuResourceRule>& gpu_rules,
                                                       const model::GpuShareRule& share) {
  auto reader = YamlReader::parse(std::move(text), source);
  if (!reader) return reader.error();
  return nodes_of(guarded(*reader, source, gpu_rules, share, false));
}

Result<std::vector<model::NodeSupply>> load_inventory(const std::string& path,
                                                      const std::vector<model::GpuResourceRule>& gpu_rules,
                                                      const model::GpuShareRule& share) {
  auto reader = YamlReader::load_file(path);
  if (!reader) return reader.error();
  return nodes_of(guarded(*reader, path, gpu_rules, share, false));
}

Result<Inventory> parse_inventory_with_dra(std::string text, std::string source,
                                           const std::vector<model::GpuResourceRule>& gpu_rules,
                                           const model::GpuShareRule& share) {
  auto reader = YamlReader::parse(std::move(text), source);
  if (!reader) return reader.error();
  return guarded(*reader, source, gpu_rules, share, true);
}

Result<Inventory> load_inventory_with_dra(const std::string& path, const std::vector<model::GpuResourceRule>& gpu_rules,
                                          const model::GpuShareRule& share) {
  auto reader = YamlReader::load_file(path);
  if (!reader) return reader.error();
  return guarded(*reader, path, gpu_rules, share, true);
}

}  // namespace extender::sources
