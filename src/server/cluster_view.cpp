#include "extender/server/cluster_view.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "extender/policy/fit.h"

namespace extender::server {
namespace {

constexpr std::int64_t kMaxCountedCells = 64;  // past this a "GPU" resource is a memory unit (gpushare)

bool holds_now(const state::Claim& claim, TimePoint now) {
  return claim.kind == state::Claim::Kind::kPlaced || claim.expires > now;
}

void add_device_cells(const state::NodeState& node, const model::NodeUsage& usage, TimePoint now, NodeRow& row) {
  const model::NodeSupply& s = node.supply;
  const policy::GpuNodeView view = policy::gpu_view(s, usage);
  const std::size_t first = row.gpus.size();
  for (std::size_t i = 0; i < view.free.size(); ++i) {
    GpuCell c;
    c.kind = GpuCell::Kind::kDevice;
    c.label = std::to_string(i);
    c.resource = s.gpu_devices.resource;
    c.capacity_bytes = s.gpu_devices.memory_bytes;
    auto u = usage.gpu_devices.find(static_cast<std::int64_t>(i));
    const model::GpuDeviceUse use = u == usage.gpu_devices.end() ? model::GpuDeviceUse{} : u->second;
    c.whole = use.whole > 0 || (view.free[i] == 0 && use.shares == 0);
    c.used_bytes = c.whole ? c.capacity_bytes : use.bytes;
    row.gpus.push_back(std::move(c));
  }
  for (const auto& [uid, claim] : node.claims) {
    if (!holds_now(claim, now)) continue;
    for (const auto& h : claim.allocation.gpu_devices) {
      if (h.index < 0 || static_cast<std::size_t>(h.index) >= view.free.size()) continue;
      GpuCell& c = row.gpus[first + static_cast<std::size_t>(h.index)];
      c.holders.push_back({claim.owner, h.whole, h.bytes, claim.kind == state::Claim::Kind::kReserved});
    }
  }
}

void add_counted_cells(const state::NodeState& node, const model::NodeUsage& usage, TimePoint now, NodeRow& row) {
  const model::NodeSupply& s = node.supply;
  for (const auto& [resource, allocatable] : s.gpus) {
    if (resource == s.gpu_devices.resource) continue;
    if (s.gpu_devices.count > 0 && allocatable > kMaxCountedCells) continue;
    const std::int64_t cells = std::min(allocatable, kMaxCountedCells);
    std::vector<GpuHolder> holders;
    for (const auto& [uid, claim] : node.claims) {
      if (!holds_now(claim, now)) continue;
      auto it = claim.allocation.gpus.find(resource);
      if (it == claim.allocation.gpus.end()) continue;
      for (std::int64_t k = 0; k < it->second; ++k) {
        holders.push_back({claim.owner, true, 0, claim.kind == state::Claim::Kind::kReserved});
      }
    }
    const std::int64_t used = usage.gpus_used(resource);
    for (std::int64_t i = 0; i < cells; ++i) {
      GpuCell c;
      c.kind = GpuCell::Kind::kCounted;
      c.label = resource;
      c.resource = resource;
      c.whole = i < used;
      if (static_cast<std::size_t>(i) < holders.size()) c.holders.push_back(holders[static_cast<std::size_t>(i)]);
      row.gpus.push_back(std::move(c));
    }
  }
}

void add_dra_cells(const model::NodeDra& dra, NodeRow& row) {
  for (const auto* list : {&dra.gpus, &dra.partitions}) {
    for (const auto& d : *list) {
      GpuCell c;
      c.kind = list == &dra.gpus ? GpuCell::Kind::kDra : GpuCell::Kind::kPartition;
      c.label = d.device.name;
      c.resource = d.driver;
      c.capacity_bytes = d.memory_bytes;
      c.whole = d.allocated;
      c.used_bytes = d.allocated ? d.memory_bytes : 0;
      row.gpus.push_back(std::move(c));
    }
  }
}

std::int64_t in_flight_pool_bytes(const state::NodeState& node, std::string_view pool, TimePoint now) {
  std::int64_t bytes = 0;
  for (const auto& [uid, claim] : node.claims) {
    if (claim.kind != state::Claim::Kind::kReserved || claim.expires <= now) continue;
    for (const auto& v : claim.allocation.volumes) {
      if (v.pool == pool) bytes += v.bytes;
    }
  }
  return bytes;
}

std::string shape_of_row(const state::NodeState& node, const model::NodeDra* dra) {
  const model::NodeSupply& s = node.supply;
  std::string shape;
  auto sep = [&shape] {
    if (!shape.empty()) shape += ", ";
  };
  for (const auto& [resource, count] : s.gpus) {
    sep();
    shape += std::to_string(count) + " " + resource;
    if (auto m = s.gpu_memory_bytes.find(resource); m != s.gpu_memory_bytes.end()) {
      shape += " of " + policy::format_bytes(m->second);
    }
  }
  if (dra && (!dra->gpus.empty() || !dra->partitions.empty())) {
    sep();
    shape += "DRA " + std::to_string(dra->gpus.size()) + " GPUs";
    if (!dra->partitions.empty()) shape += " + " + std::to_string(dra->partitions.size()) + " partitions";
  }
  for (const auto& p : s.pools) {
    sep();
    shape += "pool " + p.name + " " + policy::format_bytes(p.capacity_bytes);
  }
  return shape.empty() ? "no GPUs, no pools" : shape;
}

void count_cells(NodeRow& row) {
  for (const auto& c : row.gpus) {
    if (c.kind == GpuCell::Kind::kPartition) continue;
    ++row.gpus_total;
    if (c.whole) {
      ++row.gpus_whole;
    } else if (c.used_bytes > 0 || !c.holders.empty()) {
      ++row.gpus_shared;
    } else {
      ++row.gpus_free;
    }
  }
}

double allocated_gpus(const NodeRow& row) {
  double sum = 0;
  for (const auto& c : row.gpus) {
    if (c.kind == GpuCell::Kind::kPartition) continue;
    if (c.whole) {
      sum += 1;
    } else if (c.capacity_bytes > 0 && c.used_bytes > 0) {
      sum += static_cast<double>(c.used_bytes) / static_cast<double>(c.capacity_bytes);
    }
  }
  return sum;
}

// Expected fragmentation and free capacity of the node's devices, in GPUs.
void add_fragmentation(const state::NodeState& node, const policy::ShapeMix& mix, TimePoint now, PlacementQuality& q) {
  const model::NodeSupply& s = node.supply;
  if (s.gpu_devices.count <= 0 || mix.empty()) return;
  const policy::GpuNodeView view = policy::gpu_view(s, node.usage_excluding("", now));
  double free = 0;
  for (auto f : view.free) free += static_cast<double>(f);
  if (free <= 0) return;
  double weighted = 0;
  double total = 0;
  for (const auto& [shape, weight] : mix) {
    weighted += static_cast<double>(policy::fragmentation(view, shape)) * static_cast<double>(weight);
    total += static_cast<double>(weight);
  }
  const double cap = static_cast<double>(view.capacity);
  q.free_gpus += free / cap;
  if (total > 0) q.fragmented_gpus += weighted / total / cap;
}

}  // namespace

NodeRow node_row(const state::NodeState& node, const model::NodeDra* dra, TimePoint now) {
  const model::NodeSupply& s = node.supply;
  const model::NodeUsage usage = node.usage_excluding("", now);
  NodeRow row;
  row.name = s.name;
  row.unschedulable = s.unschedulable;
  if (s.gpu_devices.count > 0) add_device_cells(node, usage, now, row);
  add_counted_cells(node, usage, now, row);
  if (dra) add_dra_cells(*dra, row);
  count_cells(row);
  for (const auto& p : s.pools) {
    PoolRow pr;
    pr.name = p.name;
    pr.source = p.source.empty() ? "hand-written" : p.source;
    pr.capacity_bytes = p.capacity_bytes;
    pr.published_bytes = p.source.empty() ? -1 : p.published_bytes;
    pr.used_bytes = usage.pool_used(p.name);
    pr.in_flight_bytes = in_flight_pool_bytes(node, p.name, now);
    row.pools.push_back(std::move(pr));
  }
  for (const auto& [uid, claim] : node.claims) {
    if (claim.kind == state::Claim::Kind::kPlaced) {
      ++row.pods;
    } else if (claim.expires > now) {
      ++row.in_flight;
    }
  }
  for (const auto& [subject, what] : s.problems) row.problems.push_back(subject + ": " + what);
  row.shape = shape_of_row(node, dra);
  return row;
}

ClusterSummary summarise(const state::Snapshot& snapshot, const model::DraInventory* dra, const policy::ShapeMix& mix,
                         TimePoint now) {
  ClusterSummary out;
  PlacementQuality& q = out.quality;
  q.mix_known = !mix.empty();
  std::map<std::string, NodeGroup> groups;
  double allocated = 0;
  for (const auto& [name, node] : snapshot.nodes()) {
    const NodeRow row = node_row(*node, dra ? dra->node(name) : nullptr, now);
    NodeGroup& g = groups[row.shape];
    if (g.nodes++ == 0) {
      g.shape = row.shape;
      g.first = row.name;
    }
    g.gpus_total += row.gpus_total;
    g.gpus_whole += row.gpus_whole;
    g.gpus_shared += row.gpus_shared;
    g.gpus_free += row.gpus_free;
    g.pods += row.pods;
    g.in_flight += row.in_flight;
    g.unschedulable += row.unschedulable ? 1 : 0;
    for (const auto& p : row.pools) {
      g.pool_capacity_bytes += p.capacity_bytes;
      g.pool_free_bytes += p.free_bytes();
      q.pool_capacity_bytes += p.capacity_bytes;
      q.pool_used_bytes += p.used_bytes;
    }
    ++q.nodes;
    q.gpus_total += row.gpus_total;
    allocated += allocated_gpus(row);
    add_fragmentation(*node, mix, now, q);
  }
  q.gpus_allocated = static_cast<std::int64_t>(allocated + 0.5);
  q.allocated_share = q.gpus_total > 0 ? allocated / static_cast<double>(q.gpus_total) : 0;
  q.fragmented_share = q.free_gpus > 0 ? q.fragmented_gpus / q.free_gpus : 0;
  for (auto& [shape, g] : groups) out.groups.push_back(std::move(g));
  std::stable_sort(out.groups.begin(), out.groups.end(),
                   [](const NodeGroup& a, const NodeGroup& b) { return a.nodes > b.nodes; });
  return out;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100.0);
  return buf;
}

}  // namespace extender::server
