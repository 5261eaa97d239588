#include "capacity_store.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "extender/model/quantity.h"

namespace extender::sources {
namespace {

using nlohmann::json;
using Clock = policy::CapacityClock;

std::string claim_key(const wire::Claim& pvc) { return "pvc/" + pvc.uid; }

class DriverSink : public kube::ReflectorSink {
 public:
  explicit DriverSink(CapacityStore& store) : store_(store) {}
  void begin_list() override { listed_.clear(); }
  void list_item(const json& object) override {
    if (auto d = decode(object)) listed_[d->name] = d->storage_capacity;
  }
  void end_list() override {
    spdlog::info("csidrivers: {} listed", listed_.size());
    store_.drivers_listed(std::move(listed_));
    listed_.clear();
  }
  void event(std::string_view type, const json& object) override {
    auto d = decode(object);
    if (!d) return;
    store_.driver_changed(d->name, type == "DELETED" ? std::nullopt : std::optional(d->storage_capacity));
  }

 private:
  static std::optional<wire::CsiDriver> decode(const json& object) {
    auto d = wire::decode_csi_driver(object);
    if (!d || d->name.empty()) {
      spdlog::warn("csidrivers: skipping an object that cannot be read: {}", d ? "no name" : d.message());
      return std::nullopt;
    }
    return std::move(*d);
  }
  CapacityStore& store_;
  std::map<std::string, bool> listed_;
};

class PublishedSink : public kube::ReflectorSink {
 public:
  explicit PublishedSink(CapacityStore& store) : store_(store) {}
  void begin_list() override { listed_.clear(); }
  void list_item(const json& object) override {
    if (auto c = decode(object)) listed_.push_back(std::move(*c));
  }
  void end_list() override {
    spdlog::info("csistoragecapacities: {} listed", listed_.size());
    store_.capacities_listed(std::move(listed_));
    listed_.clear();
  }
  void event(std::string_view type, const json& object) override {
    auto c = decode(object);
    if (!c) return;
    const std::string key = c->key;
    store_.capacity_changed(key, type == "DELETED" ? std::nullopt : std::move(c));
  }

 private:
  static std::optional<wire::StorageCapacity> decode(const json& object) {
    auto c = wire::decode_storage_capacity(object);
    if (!c || c->key == "/") {
      spdlog::warn("csistoragecapacities: skipping an object that cannot be read: {}", c ? "no name" : c.message());
      return std::nullopt;
    }
    return std::move(*c);
  }
  CapacityStore& store_;
  std::vector<wire::StorageCapacity> listed_;
};

}  // namespace

CapacityStore::CapacityStore(state::ClusterState& state, model::DemandRules rules, CapacityOptions options)
    : state_(state), rules_(std::move(rules)), options_(std::move(options)) {}

std::unique_ptr<kube::ReflectorSink> CapacityStore::driver_sink() { return std::make_unique<DriverSink>(*this); }
std::unique_ptr<kube::ReflectorSink> CapacityStore::capacity_sink() { return std::make_unique<PublishedSink>(*this); }

std::string CapacityStore::pool_of(std::string_view cls) const {
  if (auto it = rules_.pool_by_class.find(cls); it != rules_.pool_by_class.end()) return it->second;
  if (auto it = class_pools_->find(cls); it != class_pools_->end()) return it->second;
  return {};
}

std::optional<state::Claim> CapacityStore::placement_of(const wire::Claim& pvc) const {
  if (pvc.selected_node.empty()) return std::nullopt;
  const std::string& cls = pvc.info.storage_class.empty() ? rules_.default_class : pvc.info.storage_class;
  const std::string pool = pool_of(cls);
  if (pool.empty()) return std::nullopt;
  state::Claim claim;
  claim.owner = pvc.namespace_name + "/" + pvc.name;
  claim.source = "volume";
  claim.node = pvc.selected_node;
  claim.allocation.volumes.push_back({claim.owner, pool, pvc.device, pvc.info.bytes, claim.owner, pvc.owner_pod_uid});
  return claim;
}

void CapacityStore::record(const wire::Claim& pvc, Clock::time_point now) {
  if (pvc.selected_node.empty()) {
    claims_.erase(pvc.uid);
    return;
  }
  Recorded& r = claims_[pvc.uid];
  // A volume is seen once: the first observation of the claim bound to one.
  const bool has_volume = pvc.info.bound;
  if (!has_volume) {
    r.volume_seen.reset();
  } else if (!r.volume_seen || !r.claim.info.bound) {
    r.volume_seen = now;
  }
  r.claim = pvc;
}

void CapacityStore::nodes_listed(std::map<std::string, model::StringMap> labels) {
  std::lock_guard lock(mu_);
  nodes_.clear();
  for (auto& [name, l] : labels) nodes_.emplace(name, std::move(l));
  selection_dirty_ = true;
  publish(Clock::now());
}

void CapacityStore::node_changed(const std::string& name, std::optional<model::StringMap> labels) {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(name);
  if (!labels) {
    if (it == nodes_.end()) return;
    nodes_.erase(it);
  } else {
    if (it != nodes_.end() && it->second == *labels) return;
    nodes_.insert_or_assign(name, std::move(*labels));
  }
  selection_dirty_ = true;
  publish(Clock::now());
}

void CapacityStore::classes_listed(std::vector<wire::StorageClass> classes) {
  std::lock_guard lock(mu_);
  classes_.clear();
  for (auto& c : classes) {
    std::string name = c.name;
    classes_.insert_or_assign(std::move(name), std::move(c));
  }
  reclassify();
}

void CapacityStore::class_changed(const std::string& name, std::optional<wire::StorageClass> sc) {
  std::lock_guard lock(mu_);
  if (sc) {
    classes_.insert_or_assign(name, std::move(*sc));
  } else {
    classes_.erase(name);
  }
  reclassify();
}

void CapacityStore::drivers_listed(std::map<std::string, bool> drivers) {
  std::lock_guard lock(mu_);
  drivers_.clear();
  for (auto& [name, tracks] : drivers) drivers_.emplace(name, tracks);
  reclassify();
}

void CapacityStore::driver_changed(const std::string& name, std::optional<bool> storage_capacity) {
  std::lock_guard lock(mu_);
  if (storage_capacity) {
    drivers_.insert_or_assign(name, *storage_capacity);
  } else {
    drivers_.erase(name);
  }
  reclassify();
}

void CapacityStore::claims_listed(std::vector<wire::Claim> claims) {
  std::lock_guard lock(mu_);
  const auto now = Clock::now();
  std::map<std::string, Recorded, std::less<>> before = std::move(claims_);
  claims_.clear();
  std::vector<std::pair<std::string, state::Claim>> placed;
  for (const auto& pvc : claims) {
    if (auto it = before.find(pvc.uid); it != before.end()) claims_.insert(before.extract(it));
    record(pvc, now);
    if (auto claim = placement_of(pvc)) placed.emplace_back(claim_key(pvc), std::move(*claim));
  }
  spdlog::info("persistentvolumeclaims: {} listed, {} holding node-local space", claims.size(), placed.size());
  state_.replace_placements("volume", std::move(placed));
  publish(now);
}

void CapacityStore::claim_changed(const wire::Claim& pvc, bool deleted) {
  std::lock_guard lock(mu_);
  if (deleted) {
    claims_.erase(pvc.uid);
    state_.drop(claim_key(pvc));
  } else {
    record(pvc, Clock::now());
    if (auto claim = placement_of(pvc)) {
      state_.place(claim_key(pvc), std::move(*claim));
    } else {
      state_.drop(claim_key(pvc));
    }
  }
  publish(Clock::now());
}

void CapacityStore::capacities_listed(std::vector<wire::StorageCapacity> objects) {
  std::lock_guard lock(mu_);
  std::map<std::string, Published, std::less<>> next;
  for (auto& o : objects) {
    std::string key = o.key;
    Published p{std::move(o), std::nullopt};
    // A figure that changed while no watch ran changed at a time not known: not counted as a change.
    if (auto it = published_.find(key); it != published_.end()) p.changed = it->second.changed;
    next.insert_or_assign(std::move(key), std::move(p));
  }
  published_ = std::move(next);
  selection_dirty_ = true;
  publish(Clock::now());
}

void CapacityStore::capacity_changed(const std::string& key, std::optional<wire::StorageCapacity> object) {
  std::lock_guard lock(mu_);
  const auto now = Clock::now();
  if (!object) {
    selection_dirty_ = published_.erase(key) > 0 || selection_dirty_;
  } else {
    auto it = published_.find(key);
    if (it == published_.end()) {
      published_.insert_or_assign(key, Published{std::move(*object), now});
      selection_dirty_ = true;
    } else {
      if (it->second.object.capacity_bytes != object->capacity_bytes) it->second.changed = now;
      if (it->second.object.topology != object->topology || it->second.object.storage_class != object->storage_class) {
        selection_dirty_ = true;
      }
      it->second.object = std::move(*object);
    }
  }
  publish(now);
}

void CapacityStore::reclassify() {
  auto next = std::make_shared<ClassPools>();
  if (options_.enabled) {
    for (const auto& [name, sc] : classes_) {
      if (rules_.pool_by_class.count(name)) continue;
      if (!options_.classes.empty() &&
          std::find(options_.classes.begin(), options_.classes.end(), name) == options_.classes.end()) {
        continue;
      }
      auto driver = drivers_.find(sc.provisioner);
      if (driver != drivers_.end() && driver->second) (*next)[name] = name;
    }
  }
  if (*next != *class_pools_) {
    class_pools_ = std::move(next);
    selection_dirty_ = true;
    for (const auto& [uid, r] : claims_) {
      if (auto claim = placement_of(r.claim)) {
        state_.place(claim_key(r.claim), std::move(*claim));
      } else {
        state_.drop(claim_key(r.claim));
      }
    }
  }
  publish(Clock::now());
}

void CapacityStore::tick(Clock::time_point now) {
  std::lock_guard lock(mu_);
  if (next_change_ && now >= *next_change_) publish(now);
}

void CapacityStore::select() {
  selection_.clear();
  for (const auto& [key, p] : published_) {
    const std::string& cls = p.object.storage_class;
    if (!class_pools_->count(cls) || !p.object.topology) continue;
    for (const auto& [node, labels] : nodes_) {
      if (policy::topology_selects(p.object.topology, labels)) selection_[{node, cls}].push_back(key);
    }
  }
  selection_dirty_ = false;
}

void CapacityStore::publish(Clock::time_point now) {
  if (selection_dirty_) select();
  std::map<std::pair<std::string, std::string>, std::vector<policy::CapacityClaim>> claims;
  for (const auto& [uid, r] : claims_) {
    const std::string& cls = r.claim.info.storage_class.empty() ? rules_.default_class : r.claim.info.storage_class;
    if (!class_pools_->count(cls)) continue;
    claims[{r.claim.selected_node, cls}].push_back(
        {r.claim.namespace_name + "/" + r.claim.name, r.claim.info.bytes, r.volume_seen});
  }
  std::map<std::string, std::vector<model::Pool>, std::less<>> pools;
  std::vector<PoolAccount> accounts;
  next_change_.reset();
  for (const auto& [where, keys] : selection_) {
    const Published* chosen = nullptr;
    for (const auto& key : keys) {
      const Published& p = published_.at(key);
      if (!chosen || p.object.capacity_bytes.value_or(0) > chosen->object.capacity_bytes.value_or(0)) chosen = &p;
    }
    const auto& [node, cls] = where;
    const policy::PublishedCapacity published{chosen->object.capacity_bytes.value_or(0), chosen->changed};
    auto it = claims.find(where);
    const policy::CapacityAccount a =
        policy::account(published, it == claims.end() ? std::vector<policy::CapacityClaim>{} : it->second, now, options_.rule);
    model::Pool pool{class_pools_->at(cls), model::saturating_add(a.published, a.reflected), {},
                     chosen->object.max_volume_bytes.value_or(0), "CSIStorageCapacity " + chosen->object.key, a.published};
    accounts.push_back({node, cls, pool.name, pool.source, a, pool.max_volume_bytes});
    pools[node].push_back(std::move(pool));
    if (a.next_change && (!next_change_ || *a.next_change < *next_change_)) next_change_ = a.next_change;
  }
  state_.set_derived_pools(std::move(pools));
  accounts_ = std::move(accounts);
}

std::shared_ptr<const ClassPools> CapacityStore::class_pools() const {
  std::lock_guard lock(mu_);
  return class_pools_;
}

std::vector<PoolAccount> CapacityStore::accounts() const {
  std::lock_guard lock(mu_);
  return accounts_;
}

}  // namespace extender::sources
