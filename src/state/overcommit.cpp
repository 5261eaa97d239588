#include "extender/state/overcommit.h"

#include <string_view>

namespace extender::state {
namespace {

std::size_t pods_holding_gpu(const NodeState& node, std::string_view resource) {
  std::size_t n = 0;
  for (const auto& [uid, claim] : node.claims) {
    if (claim.kind != Claim::Kind::kPlaced) continue;
    if (auto it = claim.allocation.gpus.find(resource); it != claim.allocation.gpus.end() && it->second > 0) ++n;
  }
  return n;
}

std::size_t pods_holding_space(const NodeState& node, std::string_view pool, std::string_view device) {
  std::size_t n = 0;
  for (const auto& [uid, claim] : node.claims) {
    if (claim.kind != Claim::Kind::kPlaced) continue;
    for (const auto& v : claim.allocation.volumes) {
      if (v.pool == pool && (device.empty() || v.device == device)) {
        ++n;
        break;
      }
    }
  }
  return n;
}

}  // namespace

const char* kind_name(Overcommit::Kind kind) { return kind == Overcommit::Kind::kGpu ? "gpu" : "pool"; }

std::vector<Overcommit> find_overcommit(const NodeState& node) {
  std::vector<Overcommit> found;
  const model::NodeSupply& s = node.supply;
  for (const auto& [resource, bound] : node.placed.gpus) {
    if (bound <= 0 || s.problems.count(resource)) continue;
    auto it = s.gpus.find(resource);
    const std::int64_t allocatable = it == s.gpus.end() ? 0 : it->second;
    if (bound > allocatable) {
      found.push_back({s.name, Overcommit::Kind::kGpu, resource, bound, allocatable, pods_holding_gpu(node, resource)});
    }
  }
  if (s.problems.count(model::kStorageSubject)) return found;
  for (const auto& pool : s.pools) {
    const std::int64_t used = node.placed.pool_used(pool.name);
    if (used > pool.capacity_bytes) {
      found.push_back({s.name, Overcommit::Kind::kPool, pool.name, used, pool.capacity_bytes,
                       pods_holding_space(node, pool.name, "")});
    }
    for (const auto& d : pool.devices) {
      const std::int64_t dev_used = node.placed.device_used(pool.name, d.name);
      if (dev_used > d.capacity_bytes) {
        found.push_back({s.name, Overcommit::Kind::kPool, pool.name + "/" + d.name, dev_used, d.capacity_bytes,
                         pods_holding_space(node, pool.name, d.name)});
      }
    }
  }
  return found;
}

std::string describe(const Overcommit& o) {
  const bool gpu = o.kind == Overcommit::Kind::kGpu;
  std::string s = "node " + o.node + " is overcommitted: " + std::to_string(o.pods) + " pod(s) bound there hold " +
                  std::to_string(o.bound) + (gpu ? " " + o.subject : " bytes of pool " + o.subject) +
                  " but the node has " + std::to_string(o.capacity) + (gpu ? " allocatable" : " bytes") +
                  ". Likely causes: ";
  if (gpu) {
    s += "(1) kube-scheduler binds pods itself while the extender's managedResources entry says "
         "ignoredByScheduler: true and the extender has no bindVerb, so neither the scheduler nor this daemon "
         "counts the GPUs of pods in flight (fix: set bindVerb: bind in the scheduler's extender entry, and "
         "ignoredByScheduler: false); (2) another scheduler places pods with this resource on the node (fix: give "
         "its pods this daemon's schedulers, or list it in kubernetes.scheduler_names); (3) the node's allocatable "
         "shrank under running pods (a device plugin restart or a resize; the pods keep their GPUs until they end)";
  } else {
    s += "(1) kube-scheduler binds pods itself without the extender's bindVerb, so this daemon learns of "
         "placements only from the watch (fix: set bindVerb: bind in the scheduler's extender entry); (2) another "
         "scheduler or a provisioner places claims of a managed class on the node; (3) the node's pool "
         "annotation was lowered under existing volumes (a resize)";
  }
  return s;
}

std::vector<Overcommit> OvercommitTracker::update(const Snapshot& snapshot) {
  std::vector<Overcommit> started;
  const NodeMap& now = snapshot.nodes();
  const NodeMap& before = previous_.nodes();
  for (auto it = open_.begin(); it != open_.end();) {
    it = now.count(it->first) ? std::next(it) : open_.erase(it);
  }
  for (const auto& [name, node] : now) {
    auto prev = before.find(name);
    if (prev != before.end() && prev->second == node) continue;
    std::vector<Overcommit> found = find_overcommit(*node);
    std::set<Key> current;
    auto& open = open_[std::string(name)];
    for (auto& o : found) {
      Key key{kind_name(o.kind), o.subject};
      current.insert(key);
      if (!open.count(key)) started.push_back(std::move(o));
    }
    if (current.empty()) {
      open_.erase(std::string(name));
    } else {
      open = std::move(current);
    }
  }
  previous_ = snapshot;
  return started;
}

std::size_t OvercommitTracker::open_episodes() const {
  std::size_t n = 0;
  for (const auto& [node, keys] : open_) n += keys.size();
  return n;
}

}  // namespace extender::state
