#include "extender/model/supply.h"

#include <cstdint>

#include "extender/common/quantity.h"

namespace extender::model {

const Pool* NodeSupply::find_pool(std::string_view pool_name) const {
  for (const auto& p : pools) {
    if (p.name == pool_name) return &p;
  }
  return nullptr;
}

Result<Pool> parse_pool_spec(std::string name, std::string_view spec) {
  Pool pool;
  pool.name = std::move(name);
  if (spec.find('=') == std::string_view::npos) {
    auto bytes = parse_count(spec, "pool " + pool.name);
    if (!bytes) return bytes.error();
    pool.capacity_bytes = *bytes;
    return pool;
  }
  for (bool more = true; more;) {
    auto comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    more = comma != std::string_view::npos;
    if (more) spec = spec.substr(comma + 1);
    auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return Error{"pool " + pool.name + ": device entry \"" + std::string(item.substr(0, 64)) +
                   "\" is not name=capacity"};
    }
    auto bytes = parse_count(item.substr(eq + 1), "pool " + pool.name + " device " + std::string(item.substr(0, eq)));
    if (!bytes) return bytes.error();
    if (pool.capacity_bytes > INT64_MAX - *bytes) return Error{"pool " + pool.name + ": capacity overflows"};
    pool.devices.push_back({std::string(item.substr(0, eq)), *bytes, 0, false, {}});
    pool.capacity_bytes += *bytes;
  }
  return pool;
}

namespace {

// The node's allocatable count of a GPU resource, or the problem with it.
void read_gpu_count(const Node& node, const std::string& resource, NodeSupply& s) {
  auto it = node.allocatable.find(resource);
  if (it == node.allocatable.end()) return;
  auto n = parse_count(it->second, "allocatable " + resource);
  if (n) {
    s.gpus[resource] = *n;
  } else {
    s.problems.emplace(resource, n.message());
  }
}

// The pools the node's annotations `<prefix><pool>` describe, or the problem with each.
void read_pool_annotations(const Node& node, const std::string& prefix, NodeSupply& s) {
  for (auto it = node.annotations.lower_bound(prefix); it != node.annotations.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    std::string pool_name = it->first.substr(prefix.size());
    if (pool_name.empty()) continue;
    auto pool = parse_pool_spec(pool_name, it->second);
    if (pool) {
      s.pools.push_back(std::move(*pool));
    } else {
      s.problems.emplace(kStorageSubject, "annotation " + it->first + ": " + pool.message());
    }
  }
}

}  // namespace

NodeSupply supply_from_node(const Node& node, const SupplyRules& rules) {
  NodeSupply s;
  s.name = node.name;
  s.unschedulable = node.unschedulable;
  s.labels = node.labels;
  s.taints = node.taints;
  s.taints_known = true;
  s.labels_known = node.labels_complete;
  if (auto it = node.labels.find(kGpuProductLabel); it != node.labels.end()) s.gpu_model = it->second;
  for (const auto& rule : rules.gpus) {
    read_gpu_count(node, rule.name, s);
    if (rule.memory_label.empty()) continue;
    if (auto it = node.labels.find(rule.memory_label); it != node.labels.end()) {
      auto units = parse_count(it->second, "label " + rule.memory_label);
      if (units && *units <= INT64_MAX / rule.memory_label_unit) {
        s.gpu_memory_bytes[rule.name] = *units * rule.memory_label_unit;
      } else {
        s.problems.emplace(rule.name, units ? "label " + rule.memory_label + ": overflows" : units.message());
      }
    }
  }
  for (const std::string* name : {&rules.share.count_resource, &rules.share.memory_resource}) {
    if (!name->empty()) read_gpu_count(node, *name, s);
  }
  s.gpu_devices = derive_gpu_devices(s, rules.gpus, rules.share);
  if (auto it = node.allocatable.find("cpu"); it != node.allocatable.end()) {
    if (auto q = Quantity::parse(it->second); q && !q->is_negative()) s.cpu_milli = q->milli_ceil();
  }
  if (auto it = node.allocatable.find("memory"); it != node.allocatable.end()) {
    if (auto q = Quantity::parse(it->second); q && !q->is_negative()) s.memory_bytes = q->units_ceil();
  }
  if (auto it = node.allocatable.find("pods"); it != node.allocatable.end()) {
    if (auto q = Quantity::parse(it->second); q && !q->is_negative()) s.pods = q->units_ceil();
  }
  if (!rules.pool_annotation_prefix.empty()) read_pool_annotations(node, rules.pool_annotation_prefix, s);
  return s;
}

}  // namespace extender::model
