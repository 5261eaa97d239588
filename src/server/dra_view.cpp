#include "extender/server/dra_view.h"

#include <map>

#include <nlohmann/json.hpp>

#include "extender/policy/device_selector.h"
#include "extender/policy/fit.h"
#include "extender/state/mixed_gpu_sources.h"

namespace extender::server {
namespace {

using nlohmann::ordered_json;

ordered_json device_json(const model::DraNodeDevice& d, bool gpu) {
  ordered_json j = {{"driver", d.driver}, {"pool", d.pool}, {"device", d.device.name}};
  if (gpu) {
    j["index"] = d.index;
    if (d.memory_bytes > 0) {
      j["memory"] = policy::format_bytes(d.memory_bytes);
      j["memory_bytes"] = d.memory_bytes;
    }
  } else {
    j["type"] = d.type;
  }
  j["allocated"] = d.allocated;
  return j;
}

ordered_json classes_json(const std::vector<model::DeviceClass>& classes) {
  ordered_json out = ordered_json::array();
  for (const auto& c : classes) {
    ordered_json j = {{"name", c.name}};
    if (!c.extended_resource_name.empty()) j["extended_resource"] = c.extended_resource_name;
    j["selectors"] = c.selectors;
    ordered_json unjudged = ordered_json::array();
    for (const auto& text : c.selectors) {
      const policy::DeviceSelector selector = policy::DeviceSelector::parse(text);
      if (!selector.supported()) unjudged.push_back(text + ": " + selector.unsupported_reason());
    }
    if (!unjudged.empty()) j["unjudged_selectors"] = std::move(unjudged);
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

std::string render_dra(const model::DraInventory* inventory, const std::vector<model::DeviceClass>& classes,
                       const state::Snapshot& snapshot) {
  ordered_json j;
  j["served"] = inventory != nullptr;
  if (!inventory) return j.dump(2);
  std::map<std::string, std::vector<state::MixedGpuSources>, std::less<>> mixed;
  for (auto& m : state::find_mixed_gpu_sources(snapshot, *inventory)) mixed[m.node].push_back(std::move(m));
  ordered_json nodes = ordered_json::array();
  for (const auto& [name, entry] : inventory->nodes) {
    const model::NodeDra& node = *entry;
    ordered_json n = {{"name", name}, {"gpus", node.gpus.size()}, {"allocated", node.allocated_gpus()}};
    ordered_json gpus = ordered_json::array();
    for (const auto& d : node.gpus) gpus.push_back(device_json(d, true));
    n["devices"] = std::move(gpus);
    if (!node.partitions.empty()) {
      ordered_json parts = ordered_json::array();
      for (const auto& d : node.partitions) parts.push_back(device_json(d, false));
      n["partitions_not_counted"] = std::move(parts);
    }
    if (!node.incomplete_pools.empty()) n["incomplete_pools_not_counted"] = node.incomplete_pools;
    if (auto it = mixed.find(name); it != mixed.end()) {
      ordered_json problems = ordered_json::array();
      for (const auto& m : it->second) problems.push_back(state::describe(m));
      n["mixed_gpu_sources"] = std::move(problems);
    }
    nodes.push_back(std::move(n));
  }
  j["nodes"] = std::move(nodes);
  j["device_classes"] = classes_json(classes);
  if (!inventory->unmatched_results.empty()) j["results_naming_no_counted_device"] = inventory->unmatched_results;
  return j.dump(2);
}

}  // namespace extender::server
