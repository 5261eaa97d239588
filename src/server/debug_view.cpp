#include "extender/server/debug_view.h"

#include <nlohmann/json.hpp>

#include "extender/policy/fit.h"
#include "extender/state/overcommit.h"

namespace extender::server {
namespace {

using nlohmann::ordered_json;

ordered_json allocation_json(const model::Allocation& a) {
  ordered_json j = ordered_json::object();
  if (!a.gpus.empty()) j["gpus"] = a.gpus;
  if (!a.gpu_devices.empty()) {
    ordered_json devs = ordered_json::array();
    for (const auto& h : a.gpu_devices) {
      devs.push_back(h.whole ? ordered_json{{"index", h.index}, {"whole", true}}
                             : ordered_json{{"index", h.index}, {"bytes", h.bytes}});
    }
    j["gpu_devices"] = std::move(devs);
  }
  if (!a.volumes.empty()) {
    ordered_json vols = ordered_json::array();
    for (const auto& v : a.volumes) {
      ordered_json vj = {{"volume", v.volume}, {"pool", v.pool}};
      if (!v.device.empty()) vj["device"] = v.device;
      vj["bytes"] = v.bytes;
      vols.push_back(std::move(vj));
    }
    j["volumes"] = std::move(vols);
  }
  return j;
}

ordered_json space_json(const std::string& name, std::int64_t capacity, std::int64_t used) {
  return {{"name", name},
          {"capacity", policy::format_bytes(capacity)},
          {"used", policy::format_bytes(used)},
          {"free", policy::format_bytes(capacity - used)},
          {"capacity_bytes", capacity},
          {"used_bytes", used},
          {"free_bytes", capacity - used}};
}

// Per GPU resource: allocatable, used and free, and the memory of each GPU when known.
ordered_json gpus_json(const model::NodeSupply& s, const model::NodeUsage& usage) {
  ordered_json gpus = ordered_json::object();
  for (const auto& [resource, allocatable] : s.gpus) {
    ordered_json g = {{"allocatable", allocatable},
                      {"used", usage.gpus_used(resource)},
                      {"free", allocatable - usage.gpus_used(resource)}};
    if (auto m = s.gpu_memory_bytes.find(resource); m != s.gpu_memory_bytes.end()) {
      g["memory_per_gpu"] = policy::format_bytes(m->second);
      g["memory_per_gpu_bytes"] = m->second;
    }
    gpus[resource] = std::move(g);
  }
  return gpus;
}

// Each GPU device: held whole, its shares, and its memory when the node reports it.
ordered_json gpu_devices_json(const model::NodeSupply& s, const model::NodeUsage& usage) {
  const policy::GpuNodeView view = policy::gpu_view(s, usage);
  ordered_json devices = ordered_json::array();
  for (std::size_t i = 0; i < view.free.size(); ++i) {
    auto u = usage.gpu_devices.find(static_cast<std::int64_t>(i));
    const model::GpuDeviceUse use = u == usage.gpu_devices.end() ? model::GpuDeviceUse{} : u->second;
    ordered_json d = {{"index", i}, {"whole", use.whole}, {"shares", use.shares}};
    if (view.memory_known) {
      d["memory"] = policy::format_bytes(view.capacity);
      d["shared"] = policy::format_bytes(use.bytes);
      d["free"] = policy::format_bytes(view.free[i]);
      d["memory_bytes"] = view.capacity;
      d["shared_bytes"] = use.bytes;
      d["free_bytes"] = view.free[i];
    } else {
      d["free"] = view.free[i] == view.capacity;
    }
    devices.push_back(std::move(d));
  }
  return {{"resource", s.gpu_devices.resource}, {"devices", std::move(devices)}};
}

ordered_json pool_json(const model::Pool& p, const model::NodeUsage& usage) {
  ordered_json pj = space_json(p.name, p.capacity_bytes, usage.pool_used(p.name));
  pj["source"] = p.source.empty() ? "hand-written" : p.source;
  if (!p.source.empty()) {
    // A published pool: its size is the figure plus the claims it already reflects, so what is
    // subtracted from the figure is the rest of the used space.
    const std::int64_t reflected = p.capacity_bytes - p.published_bytes;
    pj["published"] = policy::format_bytes(p.published_bytes);
    pj["published_bytes"] = p.published_bytes;
    pj["subtracted_bytes"] = usage.pool_used(p.name) - reflected;
    pj["reflected_bytes"] = reflected;
    if (p.ignored_bytes > 0) {
      pj["ignored"] = policy::format_bytes(p.ignored_bytes);
      pj["ignored_bytes"] = p.ignored_bytes;
    }
  }
  if (p.max_volume_bytes > 0) pj["max_volume_bytes"] = p.max_volume_bytes;
  if (!p.devices.empty()) {
    ordered_json devices = ordered_json::array();
    for (const auto& d : p.devices) {
      devices.push_back(space_json(d.name, d.capacity_bytes, usage.device_used(p.name, d.name)));
    }
    pj["devices"] = std::move(devices);
  }
  return pj;
}

// The node's claims as "pods" (placed) and "reservations" (binds in flight, with their age).
void add_claims(ordered_json& j, const state::NodeState& node, TimePoint now) {
  ordered_json placed = ordered_json::array();
  ordered_json reserved = ordered_json::array();
  for (const auto& [uid, claim] : node.claims) {
    ordered_json c = {{"uid", uid}, {"pod", claim.owner}};
    ordered_json a = allocation_json(claim.allocation);
    for (auto it = a.begin(); it != a.end(); ++it) c[it.key()] = it.value();
    if (claim.kind == state::Claim::Kind::kPlaced) {
      placed.push_back(std::move(c));
    } else {
      using std::chrono::duration_cast;
      using std::chrono::milliseconds;
      c["age_seconds"] = static_cast<double>(duration_cast<milliseconds>(now - claim.since).count()) / 1000.0;
      c["expires_in_seconds"] = static_cast<double>(duration_cast<milliseconds>(claim.expires - now).count()) / 1000.0;
      c["expired"] = claim.expires <= now;
      reserved.push_back(std::move(c));
    }
  }
  j["pods"] = std::move(placed);
  j["reservations"] = std::move(reserved);
}

ordered_json node_json(const state::NodeState& node, TimePoint now) {
  const model::NodeSupply& s = node.supply;
  model::NodeUsage usage = node.usage_excluding("", now);
  ordered_json j;
  j["name"] = s.name;
  j["gpus"] = gpus_json(s, usage);
  if (s.gpu_devices.count > 0) j["gpu_devices"] = gpu_devices_json(s, usage);
  ordered_json pools = ordered_json::array();
  for (const auto& p : s.pools) pools.push_back(pool_json(p, usage));
  j["pools"] = std::move(pools);
  j["volumes"] = usage.volumes;
  if (s.unschedulable) j["unschedulable"] = true;
  if (!s.problems.empty()) j["problems"] = s.problems;
  if (auto over = state::find_overcommit(node); !over.empty()) {
    ordered_json list = ordered_json::array();
    for (const auto& o : over) {
      list.push_back({{"kind", state::kind_name(o.kind)},
                      {"subject", o.subject},
                      {"bound", o.bound},
                      {"capacity", o.capacity},
                      {"pods", o.pods},
                      {"explanation", state::describe(o)}});
    }
    j["overcommitted"] = std::move(list);
  }
  add_claims(j, node, now);
  return j;
}

}  // namespace

std::string render_state(const state::Snapshot& snapshot, TimePoint now, const LeadershipView* leadership) {
  ordered_json nodes = ordered_json::array();
  std::size_t reservations = 0;
  std::size_t pods = 0;
  for (const auto& [name, node] : snapshot.nodes()) {
    for (const auto& [uid, claim] : node->claims) {
      (claim.kind == state::Claim::Kind::kPlaced ? pods : reservations)++;
    }
    nodes.push_back(node_json(*node, now));
  }
  ordered_json j;
  if (leadership) {
    ordered_json l;
    l["leading"] = leadership->leading;
    l["identity"] = leadership->identity;
    l["holder"] = leadership->holder;
    l["since"] = leadership->since;
    l["transitions"] = leadership->transitions;
    l["lease"] = leadership->lease;
    if (!leadership->last_error.empty()) l["last_error"] = leadership->last_error;
    j["leadership"] = std::move(l);
  }
  j["nodes_total"] = snapshot.nodes().size();
  j["pods_total"] = pods;
  j["reservations_total"] = reservations;
  j["nodes"] = std::move(nodes);
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string render_node(const state::NodeState& node, TimePoint now) {
  return node_json(node, now).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace extender::server
