#include "extender/state/cluster_state.h"

#include <algorithm>
#include <functional>

namespace extender::state {

namespace {

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

void resolve_devices(NodeState& node) {
  for (const model::Pool& pool : node.supply.pools) {
    if (pool.devices.empty()) continue;
    for (auto& [uid, claim] : node.claims) {
      if (claim.kind != Claim::Kind::kPlaced) continue;  // the rule reads only what the API server has
      for (auto& v : claim.allocation.volumes) {
        if (v.pool == pool.name) v.device = ledger_device(pool, uid, v.device, v.bytes);
      }
    }
  }
}

// Shares of placed claims on no device of the node (none recorded, or one the node lacks), in uid
// order, each on the best-fit device given the recorded holds and the shares placed before it; on
// the device with the most free memory when none holds it.
void resolve_gpu_shares(NodeState& node) {
  const model::GpuDevices& devices = node.supply.gpu_devices;
  if (devices.count <= 0) return;
  auto unrecorded = [&](const model::GpuHold& h) { return !h.whole && (h.index < 0 || h.index >= devices.count); };
  model::NodeUsage recorded;
  std::vector<model::GpuHold*> pending;
  for (auto& [uid, claim] : node.claims) {
    if (claim.kind != Claim::Kind::kPlaced) continue;
    recorded.add(claim.allocation);
    for (auto& h : claim.allocation.gpu_devices) {
      if (unrecorded(h)) pending.push_back(&h);
    }
  }
  if (pending.empty()) return;
  const std::int64_t unplaced_whole =
      std::max<std::int64_t>(recorded.gpus_used(devices.resource) - recorded.whole_gpu_holds(), 0);
  std::vector<std::int64_t> free = model::device_free_bytes(devices, recorded.gpu_devices, unplaced_whole);
  for (model::GpuHold* h : pending) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < free.size(); ++i) {
      if (free[i] >= h->bytes && (!best || free[i] < free[*best])) best = i;
    }
    if (!best) best = static_cast<std::size_t>(std::max_element(free.begin(), free.end()) - free.begin());
    free[*best] = std::max<std::int64_t>(free[*best] - h->bytes, 0);
    h->index = static_cast<std::int64_t>(*best);
  }
}

// Whether `held` already is the placement `claim` describes.
bool same_placement(const Claim& held, const Claim& claim) {
  return held.kind == Claim::Kind::kPlaced && held.node == claim.node && held.source == claim.source &&
         held.owner == claim.owner && held.allocation == claim.allocation && held.terminating == claim.terminating &&
         held.priority == claim.priority;
}

}  // namespace

std::string ledger_device(const model::Pool& pool, std::string_view claim_uid, const std::string& recorded,
                          std::int64_t bytes) {
  for (const auto& dev : pool.devices) {
    if (dev.name == recorded) return recorded;
  }
  std::vector<const model::Device*> large;
  for (const auto& dev : pool.devices) {
    if (dev.capacity_bytes >= bytes) large.push_back(&dev);
  }
  if (large.empty()) {
    for (const auto& dev : pool.devices) large.push_back(&dev);
  }
  return large.empty() ? std::string() : large[fnv1a(claim_uid) % large.size()]->name;
}

model::NodeUsage NodeState::usage_excluding(std::string_view uid, TimePoint now) const {
  model::NodeUsage usage = placed;
  for (const auto& [claim_uid, claim] : claims) {
    if (claim.kind == Claim::Kind::kPlaced) {
      if (claim_uid == uid) usage.subtract(claim.allocation);
    } else if (claim_uid != uid && claim.expires > now) {
      model::Allocation pending = claim.allocation;
      std::erase_if(pending.volumes, [&](const model::VolumePlacement& v) {
        return !v.claim.empty() && held_volume_claims.count(v.claim);
      });
      usage.add(pending);
    }
  }
  return usage;
}

model::NodeUsage NodeState::usage_for(const model::PodDemand& pod, TimePoint now) const {
  model::NodeUsage usage = usage_excluding(pod.uid, now);
  std::set<std::string_view> own;
  for (const auto& v : pod.volumes) {
    if (!v.claim.empty() && (!v.held_on.empty() || held_volume_claims.count(v.claim))) own.insert(v.claim);
  }
  if (own.empty()) return usage;
  model::Allocation held;
  for (const auto& [uid, claim] : claims) {
    if (claim.kind != Claim::Kind::kPlaced || uid == pod.uid) continue;
    for (const auto& v : claim.allocation.volumes) {
      if (own.count(v.claim)) held.volumes.push_back(v);
    }
  }
  usage.subtract(held);
  return usage;
}

bool NodeState::sees_placed_only(const model::PodDemand& pod) const {
  if (reservations != 0) return false;
  const bool holds_volumes_here =
      std::any_of(pod.volumes.begin(), pod.volumes.end(), [&](const model::VolumeDemand& v) {
        return (!v.held_on.empty() && v.held_on == supply.name) ||
               (!v.claim.empty() && held_volume_claims.count(v.claim));
      });
  return !holds_volumes_here && (claims.empty() || !claims.count(pod.uid));
}

const model::NodeUsage& NodeState::usage_for(const model::PodDemand& pod, TimePoint now,
                                             model::NodeUsage& scratch) const {
  if (sees_placed_only(pod)) return placed;
  scratch = usage_for(pod, now);
  return scratch;
}

const NodeState* Snapshot::find(std::string_view node) const { return index_->find(node); }

Snapshot ClusterState::snapshot() const {
  std::lock_guard lock(read_mu_);
  return Snapshot(current_);
}

void ClusterState::publish(const std::set<std::string, std::less<>>& nodes) {
  if (nodes.empty()) return;
  auto next = std::make_shared<NodeMap>(current_->nodes());
  for (const auto& name : nodes) {
    auto supply = supply_.find(name);
    if (supply == supply_.end()) {
      next->erase(name);
      continue;
    }
    auto entry = std::make_shared<NodeState>();
    entry->supply = supply->second;
    if (auto derived = derived_pools_.find(name); derived != derived_pools_.end()) {
      for (const auto& pool : derived->second) {
        if (!entry->supply.find_pool(pool.name)) entry->supply.pools.push_back(pool);
      }
    }
    if (auto uids = claims_by_node_.find(name); uids != claims_by_node_.end()) {
      for (const auto& uid : uids->second) entry->claims.emplace(uid, claims_.find(uid)->second);
      resolve_devices(*entry);
      resolve_gpu_shares(*entry);
      for (const auto& [uid, claim] : entry->claims) {
        if (claim.kind != Claim::Kind::kPlaced) {
          ++entry->reservations;
          continue;
        }
        entry->placed.add(claim.allocation);
        for (const auto& v : claim.allocation.volumes) {
          if (!v.claim.empty()) entry->held_volume_claims.insert(v.claim);
        }
      }
    }
    entry->placed_gpus = model::gpu_availability(entry->supply, entry->placed);
    for (const auto& [uid, claim] : entry->claims) entry->claim_bits |= NodeIndex::claim_bits(uid);
    const std::string_view key = entry->supply.name;
    next->set(key, std::move(entry));
  }
  const std::vector<std::string_view> changed(nodes.begin(), nodes.end());
  auto index = std::make_shared<const NodeIndex>(std::move(next), *current_, changed);
  std::lock_guard lock(read_mu_);
  current_.swap(index);
}

void ClusterState::upsert_nodes(std::vector<model::NodeSupply> nodes) {
  std::lock_guard lock(write_mu_);
  std::set<std::string, std::less<>> touched;
  for (auto& n : nodes) {
    auto it = supply_.find(n.name);
    if (it != supply_.end() && it->second == n) continue;
    touched.insert(n.name);
    std::string name = n.name;
    supply_.insert_or_assign(std::move(name), std::move(n));
  }
  publish(touched);
}

void ClusterState::replace_nodes(std::vector<model::NodeSupply> nodes) {
  std::lock_guard lock(write_mu_);
  std::set<std::string, std::less<>> touched;
  std::map<std::string, model::NodeSupply, std::less<>> next;
  for (auto& n : nodes) {
    auto it = supply_.find(n.name);
    if (it == supply_.end() || !(it->second == n)) touched.insert(n.name);
    std::string name = n.name;
    next.insert_or_assign(std::move(name), std::move(n));
  }
  for (const auto& [name, supply] : supply_) {
    if (!next.count(name)) touched.insert(name);
  }
  supply_ = std::move(next);
  publish(touched);
}

void ClusterState::remove_node(std::string_view name) {
  std::lock_guard lock(write_mu_);
  auto it = supply_.find(name);
  if (it == supply_.end()) return;
  supply_.erase(it);
  publish({std::string(name)});
}

void ClusterState::set_derived_pools(std::map<std::string, std::vector<model::Pool>, std::less<>> by_node) {
  std::lock_guard lock(write_mu_);
  std::set<std::string, std::less<>> touched;
  for (const auto& [name, pools] : by_node) {
    auto it = derived_pools_.find(name);
    if (it == derived_pools_.end() || it->second != pools) touched.insert(name);
  }
  for (const auto& [name, pools] : derived_pools_) {
    if (!by_node.count(name)) touched.insert(name);
  }
  derived_pools_ = std::move(by_node);
  publish(touched);
}

void ClusterState::set_derived_pools_of(std::map<std::string, std::vector<model::Pool>, std::less<>> by_node) {
  std::lock_guard lock(write_mu_);
  std::set<std::string, std::less<>> touched;
  for (auto& [name, pools] : by_node) {
    auto it = derived_pools_.find(name);
    if (pools.empty()) {
      if (it == derived_pools_.end()) continue;
      derived_pools_.erase(it);
    } else if (it == derived_pools_.end()) {
      derived_pools_.emplace(name, std::move(pools));
    } else if (it->second != pools) {
      it->second = std::move(pools);
    } else {
      continue;
    }
    touched.insert(name);
  }
  publish(touched);
}

void ClusterState::set_claim(std::string uid, Claim claim, std::set<std::string, std::less<>>& touched) {
  erase_claim(uid, touched);
  touched.insert(claim.node);
  claims_by_node_[claim.node].insert(uid);
  claims_.insert_or_assign(std::move(uid), std::move(claim));
}

void ClusterState::erase_claim(std::string_view uid, std::set<std::string, std::less<>>& touched) {
  auto it = claims_.find(uid);
  if (it == claims_.end()) return;
  const std::string& node = it->second.node;
  touched.insert(node);
  if (auto by = claims_by_node_.find(node); by != claims_by_node_.end()) {
    by->second.erase(it->first);
    if (by->second.empty()) claims_by_node_.erase(by);
  }
  claims_.erase(it);
}

void ClusterState::place(std::string uid, Claim claim) {
  claim.kind = Claim::Kind::kPlaced;
  std::lock_guard lock(write_mu_);
  if (auto it = claims_.find(uid); it != claims_.end() && same_placement(it->second, claim)) return;
  std::set<std::string, std::less<>> touched;
  set_claim(std::move(uid), std::move(claim), touched);
  publish(touched);
}

void ClusterState::reserve(std::string uid, Claim claim, Duration ttl, TimePoint now) {
  claim.kind = Claim::Kind::kReserved;
  claim.since = now;
  claim.expires = now + ttl;
  std::lock_guard lock(write_mu_);
  std::set<std::string, std::less<>> touched;
  set_claim(std::move(uid), std::move(claim), touched);
  publish(touched);
}

void ClusterState::drop(std::string_view uid) {
  std::lock_guard lock(write_mu_);
  std::set<std::string, std::less<>> touched;
  erase_claim(uid, touched);
  publish(touched);
}

void ClusterState::drop_reservation(std::string_view uid) {
  std::lock_guard lock(write_mu_);
  auto it = claims_.find(uid);
  if (it == claims_.end() || it->second.kind != Claim::Kind::kReserved) return;
  std::set<std::string, std::less<>> touched;
  erase_claim(uid, touched);
  publish(touched);
}

bool ClusterState::drop_reservation(std::string_view uid, std::string_view source) {
  std::lock_guard lock(write_mu_);
  auto it = claims_.find(uid);
  if (it == claims_.end() || it->second.kind != Claim::Kind::kReserved || it->second.source != source) return false;
  std::set<std::string, std::less<>> touched;
  erase_claim(uid, touched);
  publish(touched);
  return true;
}

bool ClusterState::extend_reservation(std::string_view uid, std::string_view source, TimePoint expires) {
  std::lock_guard lock(write_mu_);
  auto it = claims_.find(uid);
  if (it == claims_.end() || it->second.kind != Claim::Kind::kReserved || it->second.source != source) return false;
  Claim claim = it->second;
  claim.expires = expires;
  std::set<std::string, std::less<>> touched;
  set_claim(std::string(uid), std::move(claim), touched);
  publish(touched);
  return true;
}

void ClusterState::replace_placements(std::string_view source, std::vector<std::pair<std::string, Claim>> placed,
                                      std::string_view uid_prefix) {
  std::lock_guard lock(write_mu_);
  std::set<std::string, std::less<>> touched;
  std::set<std::string_view> wanted;
  for (const auto& [uid, claim] : placed) wanted.insert(uid);
  std::vector<std::string> stale;
  for (auto it = claims_.lower_bound(uid_prefix); it != claims_.end() && it->first.starts_with(uid_prefix); ++it) {
    const Claim& claim = it->second;
    if (claim.kind == Claim::Kind::kPlaced && claim.source == source && !wanted.count(it->first))
      stale.push_back(it->first);
  }
  for (const auto& uid : stale) erase_claim(uid, touched);
  for (auto& [uid, claim] : placed) {
    claim.kind = Claim::Kind::kPlaced;
    if (auto it = claims_.find(uid); it != claims_.end() && same_placement(it->second, claim)) continue;
    set_claim(std::move(uid), std::move(claim), touched);
  }
  publish(touched);
}

std::optional<Claim> ClusterState::claim_of(std::string_view uid) const {
  std::lock_guard lock(write_mu_);
  auto it = claims_.find(uid);
  if (it == claims_.end()) return std::nullopt;
  return it->second;
}

std::size_t ClusterState::sweep_expired(TimePoint now) {
  std::lock_guard lock(write_mu_);
  std::set<std::string, std::less<>> touched;
  std::vector<std::string> expired;
  for (const auto& [uid, claim] : claims_) {
    if (claim.kind == Claim::Kind::kReserved && claim.expires <= now) expired.push_back(uid);
  }
  for (const auto& uid : expired) erase_claim(uid, touched);
  publish(touched);
  return expired.size();
}

std::mutex& ClusterState::bind_lock(std::string_view node) {
  return bind_locks_[std::hash<std::string_view>{}(node) % bind_locks_.size()];
}

}  // namespace extender::state
