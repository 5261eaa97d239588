#include "extender/model/dra_inventory.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace extender::model {
namespace {

struct PoolSlices {
  std::int64_t generation = -1;
  std::vector<const ResourceSlice*> current;
};

// Why the pool cannot be counted, or empty.
std::string incomplete(const PoolSlices& p) {
  std::int64_t expected = 0;
  for (const ResourceSlice* s : p.current) expected = std::max(expected, s->pool_slice_count);
  if (static_cast<std::int64_t>(p.current.size()) != expected) {
    return std::to_string(p.current.size()) + " of " + std::to_string(expected) + " slices of generation " +
           std::to_string(p.generation) + " seen";
  }
  std::set<std::string_view> names;
  for (const ResourceSlice* s : p.current) {
    for (const DraDevice& d : s->devices) {
      if (!names.insert(d.name).second) return "device " + d.name + " listed twice";
    }
  }
  return {};
}

class Fnv1a {
 public:
  void add(std::string_view bytes) {
    for (unsigned char c : bytes) {
      h_ ^= c;
      h_ *= 1099511628211ull;
    }
    add_word(bytes.size());
  }
  void add_word(std::uint64_t w) {
    for (int i = 0; i < 8; ++i) {
      h_ ^= (w >> (8 * i)) & 0xff;
      h_ *= 1099511628211ull;
    }
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 14695981039346656037ull;
};

std::uint64_t selector_key(const NodeDra& node) {
  Fnv1a h;
  for (const auto* list : {&node.gpus, &node.partitions}) {
    h.add_word(list->size());
    for (const DraNodeDevice& d : *list) {
      h.add(d.driver);
      h.add_word(d.device.attributes.size());
      for (const auto& [name, a] : d.device.attributes) {
        h.add(name);
        h.add_word(static_cast<std::uint64_t>(a.kind));
        h.add_word(static_cast<std::uint64_t>(a.int_value));
        h.add_word(a.bool_value ? 1 : 0);
        h.add(a.text);
      }
      h.add_word(d.device.capacity.size());
      for (const auto& [name, q] : d.device.capacity) {
        h.add(name);
        h.add_word(q.nanos_high());
        h.add_word(q.nanos_low());
      }
    }
  }
  return h.value();
}

DraNodeDevice node_device(const ResourceSlice& slice, const DraDevice& d, const DraRules& rules) {
  DraNodeDevice out;
  out.driver = slice.driver;
  out.pool = slice.pool;
  out.device = d;
  const std::string domain = slice.driver + "/";
  if (auto it = d.attributes.find(domain + rules.type_attribute);
      it != d.attributes.end() && it->second.kind == DraAttribute::Kind::kString) {
    out.type = it->second.text;
  }
  if (auto it = d.attributes.find(domain + rules.index_attribute);
      it != d.attributes.end() && it->second.kind == DraAttribute::Kind::kInt) {
    out.index = it->second.int_value;
  }
  if (auto it = d.capacity.find(domain + rules.memory_capacity); it != d.capacity.end() && !it->second.is_negative()) {
    out.memory_bytes = it->second.units_ceil();
  }
  return out;
}

}  // namespace

std::int64_t NodeDra::allocated_gpus() const {
  return std::count_if(gpus.begin(), gpus.end(), [](const DraNodeDevice& g) { return g.allocated; });
}

const NodeDra* DraInventory::node(std::string_view name) const {
  auto it = nodes.find(name);
  return it == nodes.end() ? nullptr : it->second.get();
}

bool DraInventory::operator==(const DraInventory& other) const {
  return unmatched_results == other.unmatched_results &&
         std::equal(nodes.begin(), nodes.end(), other.nodes.begin(), other.nodes.end(),
                    [](const auto& a, const auto& b) { return a.first == b.first && *a.second == *b.second; });
}

std::string dra_device_id(std::string_view driver, std::string_view pool, std::string_view device) {
  std::string id;
  id.reserve(driver.size() + pool.size() + device.size() + 2);
  id.append(driver).append("/").append(pool).append("/").append(device);
  return id;
}

std::map<std::string, NodeDra, std::less<>> dra_nodes_of(const std::vector<ResourceSlice>& slices,
                                                         const DraRules& rules) {
  const std::set<std::string, std::less<>> drivers(rules.drivers.begin(), rules.drivers.end());
  std::map<std::tuple<std::string, std::string, std::string>, PoolSlices> pools;  // node, driver, pool
  for (const ResourceSlice& s : slices) {
    if (s.node_name.empty() || !drivers.count(s.driver)) continue;
    PoolSlices& p = pools[{s.node_name, s.driver, s.pool}];
    if (s.pool_generation > p.generation) {
      p.generation = s.pool_generation;
      p.current.clear();
    }
    if (s.pool_generation == p.generation) p.current.push_back(&s);
  }
  std::map<std::string, NodeDra, std::less<>> nodes;
  for (const auto& [key, p] : pools) {
    const auto& [node_name, driver, pool] = key;
    NodeDra& node = nodes[node_name];
    if (std::string why = incomplete(p); !why.empty()) {
      node.incomplete_pools.push_back(driver + "/" + pool + ": " + why);
      continue;
    }
    for (const ResourceSlice* s : p.current) {
      for (const DraDevice& d : s->devices) {
        DraNodeDevice nd = node_device(*s, d, rules);
        const bool gpu = nd.type.empty() || nd.type == rules.gpu_type;
        (gpu ? node.gpus : node.partitions).push_back(std::move(nd));
      }
    }
  }
  for (auto& [name, node] : nodes) {
    std::sort(node.gpus.begin(), node.gpus.end(), [](const DraNodeDevice& a, const DraNodeDevice& b) {
      return std::tie(a.index, a.device.name) < std::tie(b.index, b.device.name);
    });
    std::sort(node.partitions.begin(), node.partitions.end(),
              [](const DraNodeDevice& a, const DraNodeDevice& b) { return a.device.name < b.device.name; });
    node.selector_key = selector_key(node);
  }
  return nodes;
}

DraInventory build_dra_inventory(const std::vector<ResourceSlice>& slices, const std::vector<ResourceClaim>& claims,
                                 const DraRules& rules) {
  const std::set<std::string, std::less<>> drivers(rules.drivers.begin(), rules.drivers.end());
  auto nodes = dra_nodes_of(slices, rules);
  std::map<std::string, DraNodeDevice*, std::less<>> by_id;
  for (auto& [name, node] : nodes) {
    for (auto* list : {&node.gpus, &node.partitions}) {
      for (DraNodeDevice& d : *list) by_id[dra_device_id(d.driver, d.pool, d.device.name)] = &d;
    }
  }
  DraInventory inv;
  for (const ResourceClaim& claim : claims) {
    if (!claim.allocated) continue;
    for (const DeviceResult& r : claim.results) {
      if (r.admin_access || !drivers.count(r.driver)) continue;
      const std::string id = dra_device_id(r.driver, r.pool, r.device);
      auto it = by_id.find(id);
      if (it == by_id.end()) {
        inv.unmatched_results.push_back(claim.namespace_name + "/" + claim.name + ": " + id);
        continue;
      }
      it->second->allocated = true;
    }
  }
  for (auto& [name, node] : nodes) inv.nodes.emplace(name, std::make_shared<const NodeDra>(std::move(node)));
  return inv;
}

}  // namespace extender::model
