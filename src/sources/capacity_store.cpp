#include "capacity_store.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <functional>

#include "extender/common/quantity.h"
#include "extender/policy/local_volumes.h"
#include "object_sink.h"

namespace extender::sources {
namespace {

using nlohmann::json;

std::string claim_key(const wire::Claim& pvc) { return "pvc/" + pvc.uid; }

constexpr std::string_view kTopolvmPrefix = "capacity.topolvm.io/";
constexpr std::string_view kTopolvmDriver = "topolvm.io";
constexpr std::string_view kTopolvmDeviceClass = "topolvm.io/device-class";
constexpr std::string_view kTopolvmDefaultDeviceClass = "00default";

std::string driver_key(const wire::CsiDriver& d) { return d.name; }
std::string capacity_key(const wire::StorageCapacity& c) { return c.key == "/" ? std::string() : c.key; }
std::string volume_key(const model::PersistentVolume& v) { return v.name; }

constexpr std::string_view kNoProvisioner = "kubernetes.io/no-provisioner";
constexpr std::string_view kLocalSource = "local PVs";
constexpr const char* kLocalPlacement = "local volume";

// Replaces `out` with the objects by name.
template <class Map, class Object>
void fill_by_name(Map& out, std::vector<Object> objects) {
  out.clear();
  for (auto& o : objects) {
    std::string name = o.name;
    out.insert_or_assign(std::move(name), std::move(o));
  }
}

}  // namespace

CapacityStore::CapacityStore(state::ClusterState& state, model::DemandRules rules, CapacityOptions options)
    : state_(state), rules_(std::move(rules)), options_(std::move(options)) {}

std::unique_ptr<kube::ReflectorSink> CapacityStore::driver_sink() {
  return std::make_unique<ObjectSink<wire::CsiDriver>>(ObjectSink<wire::CsiDriver>::Hooks{
      "csidrivers", &wire::decode_csi_driver, &driver_key,
      [this](std::vector<wire::CsiDriver> listed) {
        std::map<std::string, bool> drivers;
        for (const auto& d : listed) drivers[d.name] = d.storage_capacity;
        drivers_listed(std::move(drivers));
      },
      [this](const std::string& name, std::optional<wire::CsiDriver> d) {
        driver_changed(name, d ? std::optional(d->storage_capacity) : std::nullopt);
      }});
}

std::unique_ptr<kube::ReflectorSink> CapacityStore::capacity_sink() {
  return std::make_unique<ObjectSink<wire::StorageCapacity>>(ObjectSink<wire::StorageCapacity>::Hooks{
      "csistoragecapacities", &wire::decode_storage_capacity, &capacity_key,
      [this](std::vector<wire::StorageCapacity> listed) { capacities_listed(std::move(listed)); },
      [this](const std::string& key, std::optional<wire::StorageCapacity> c) { capacity_changed(key, std::move(c)); }});
}

std::unique_ptr<kube::ReflectorSink> CapacityStore::volume_sink() {
  return std::make_unique<ObjectSink<model::PersistentVolume>>(ObjectSink<model::PersistentVolume>::Hooks{
      "persistentvolumes", &wire::decode_persistent_volume, &volume_key,
      [this](std::vector<model::PersistentVolume> listed) { volumes_listed(std::move(listed)); },
      [this](const std::string& name, std::optional<model::PersistentVolume> v) { volume_changed(name, std::move(v)); }});
}

std::string CapacityStore::pool_of(std::string_view cls) const {
  if (auto it = rules_.pool_by_class.find(cls); it != rules_.pool_by_class.end()) return it->second;
  if (auto it = class_pools_->find(cls); it != class_pools_->end()) return it->second;
  return {};
}

std::optional<state::Claim> CapacityStore::placement_of(const wire::Claim& pvc) const {
  if (pvc.selected_node.empty()) return std::nullopt;
  const std::string& cls = pvc.info.storage_class.empty() ? rules_.default_class : pvc.info.storage_class;
  const std::string pool = pool_of(cls);
  if (pool.empty() || local_classes_.count(cls)) return std::nullopt;
  state::Claim claim;
  claim.owner = pvc.namespace_name + "/" + pvc.name;
  claim.source = "volume";
  claim.node = pvc.selected_node;
  claim.allocation.volumes.push_back({claim.owner, pool, pvc.device, pvc.info.bytes, claim.owner, pvc.owner_pod_uid});
  return claim;
}

void CapacityStore::record(const wire::Claim& pvc, TimePoint now) {
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

NodeFacts node_facts(const model::Node& node) {
  NodeFacts facts;
  facts.labels = node.labels;
  for (auto it = node.annotations.lower_bound(kTopolvmPrefix); it != node.annotations.end(); ++it) {
    if (it->first.compare(0, kTopolvmPrefix.size(), kTopolvmPrefix) != 0) break;
    if (it->first.size() > kTopolvmPrefix.size()) facts.topolvm[it->first.substr(kTopolvmPrefix.size())] = it->second;
  }
  return facts;
}

void CapacityStore::nodes_listed(std::map<std::string, NodeFacts> nodes) {
  std::lock_guard lock(mu_);
  std::map<std::string, NodeEntry, std::less<>> next;
  for (auto& [name, facts] : nodes) {
    NodeEntry entry{std::move(facts), {}};
    // A value that changed while no watch ran changed at a time not known: no change is counted.
    if (auto it = nodes_.find(name); it != nodes_.end()) entry.topolvm_changed = it->second.topolvm_changed;
    next.emplace(name, std::move(entry));
  }
  nodes_ = std::move(next);
  selection_dirty_ = true;
  publish(SteadyClock::now());
}

void CapacityStore::node_changed(const std::string& name, std::optional<NodeFacts> facts) {
  std::lock_guard lock(mu_);
  const auto now = SteadyClock::now();
  auto it = nodes_.find(name);
  if (!facts) {
    if (it == nodes_.end()) return;
    nodes_.erase(it);
    selection_dirty_ = true;
  } else if (it == nodes_.end()) {
    nodes_.emplace(name, NodeEntry{std::move(*facts), {}});
    selection_dirty_ = true;
  } else {
    if (it->second.facts == *facts) return;
    for (const auto& [device_class, value] : facts->topolvm) {
      auto was = it->second.facts.topolvm.find(device_class);
      if (was == it->second.facts.topolvm.end() || was->second != value) it->second.topolvm_changed[device_class] = now;
    }
    if (it->second.facts.labels != facts->labels) selection_dirty_ = true;
    it->second.facts = std::move(*facts);
  }
  publish(now);
}

void CapacityStore::classes_listed(std::vector<wire::StorageClass> classes) {
  std::lock_guard lock(mu_);
  fill_by_name(classes_, std::move(classes));
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
  const auto now = SteadyClock::now();
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
    record(pvc, SteadyClock::now());
    if (auto claim = placement_of(pvc)) {
      state_.place(claim_key(pvc), std::move(*claim));
    } else {
      state_.drop(claim_key(pvc));
    }
  }
  publish(SteadyClock::now());
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
  publish(SteadyClock::now());
}

void CapacityStore::capacity_changed(const std::string& key, std::optional<wire::StorageCapacity> object) {
  std::lock_guard lock(mu_);
  const auto now = SteadyClock::now();
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
  std::set<std::string, std::less<>> local;
  for (const auto& [name, sc] : classes_) {
    if (rules_.pool_by_class.count(name) || drive_classes_.count(name)) continue;
    if (!options_.classes.empty() &&
        std::find(options_.classes.begin(), options_.classes.end(), name) == options_.classes.end()) {
      continue;
    }
    if (sc.provisioner == kNoProvisioner && sc.binding_mode == "WaitForFirstConsumer") {
      const bool has_volumes = std::any_of(volumes_.begin(), volumes_.end(), [&](const auto& v) {
        return v.second.storage_class == name && policy::local_volume_counted(v.second);
      });
      if (has_volumes) {
        local.insert(name);
        (*next)[name] = name;
      }
      continue;
    }
    if (!options_.enabled) continue;
    auto driver = drivers_.find(sc.provisioner);
    if ((driver != drivers_.end() && driver->second) || sc.provisioner == kTopolvmDriver) (*next)[name] = name;
  }
  if (*next != *class_pools_ || local != local_classes_) {
    class_pools_ = std::move(next);
    local_classes_ = std::move(local);
    merge_class_pools();
    selection_dirty_ = true;
    for (const auto& [uid, r] : claims_) {
      if (auto claim = placement_of(r.claim)) {
        state_.place(claim_key(r.claim), std::move(*claim));
      } else {
        state_.drop(claim_key(r.claim));
      }
    }
  }
  publish(SteadyClock::now());
}

void CapacityStore::volumes_listed(std::vector<model::PersistentVolume> volumes) {
  std::lock_guard lock(mu_);
  fill_by_name(volumes_, std::move(volumes));
  spdlog::info("persistentvolumes: {} local of {}", std::count_if(volumes_.begin(), volumes_.end(), [](const auto& v) {
                 return policy::local_volume_counted(v.second);
               }), volumes_.size());
  selection_dirty_ = true;
  volumes_dirty_ = true;
  reclassify();
}

void CapacityStore::volume_changed(const std::string& name, std::optional<model::PersistentVolume> volume) {
  std::lock_guard lock(mu_);
  auto it = volumes_.find(name);
  const bool was_counted = it != volumes_.end() && policy::local_volume_counted(it->second);
  const bool counted = volume && policy::local_volume_counted(*volume);
  if (!was_counted && !counted) {
    if (volume) volumes_.insert_or_assign(name, std::move(*volume));
    else if (it != volumes_.end()) volumes_.erase(it);
    return;
  }
  volume_node_.erase(name);
  if (volume) {
    if (!selection_dirty_) locate_volume(*volume);
    volumes_.insert_or_assign(name, std::move(*volume));
  } else {
    volumes_.erase(it);
  }
  volumes_dirty_ = true;
  reclassify();
}

std::string CapacityStore::local_volume_node(std::string_view volume) const {
  std::lock_guard lock(mu_);
  auto it = volume_node_.find(volume);
  return it == volume_node_.end() ? std::string() : it->second;
}

void CapacityStore::locate_volume(const model::PersistentVolume& pv) {
  if (!local_classes_.count(pv.storage_class) || !policy::local_volume_counted(pv)) return;
  model::NodeSupply probe;
  for (const auto& [node, entry] : nodes_) {
    probe.name = node;
    probe.labels = entry.facts.labels;
    if (policy::local_volume_on_node(pv, probe)) {
      volume_node_[pv.name] = node;
      return;
    }
  }
}

void CapacityStore::locate_volumes() {
  volume_node_.clear();
  for (const auto& [name, pv] : volumes_) locate_volume(pv);
  volumes_dirty_ = true;
}

const model::PersistentVolume* CapacityStore::located(std::string_view name) const {
  auto it = volumes_.find(name);
  if (it == volumes_.end() || !class_pools_->count(it->second.storage_class)) return nullptr;
  return &it->second;
}

void CapacityStore::local_pools(std::map<std::string, std::vector<model::Pool>, std::less<>>& pools,
                                std::vector<PoolAccount>& accounts) const {
  std::map<std::pair<std::string, std::string>, model::Pool> by_place;
  std::map<std::pair<std::string, std::string>, std::int64_t> taken;
  for (const auto& [name, node] : volume_node_) {
    const model::PersistentVolume* found = located(name);
    if (!found) continue;
    const model::PersistentVolume& pv = *found;
    model::Pool& pool = by_place[{node, pv.storage_class}];
    pool.name = class_pools_->find(pv.storage_class)->second;
    pool.source = std::string(kLocalSource);
    pool.whole_devices = true;
    pool.capacity_bytes = saturating_add(pool.capacity_bytes, pv.bytes);
    pool.published_bytes = pool.capacity_bytes;
    pool.devices.push_back({pv.name, pv.bytes, pv.access_modes, pv.block, {}});
    if (!policy::local_volume_free(pv)) taken[{node, pv.storage_class}] += pv.bytes;
  }
  for (auto& [where, pool] : by_place) {
    policy::CapacityAccount a;
    a.published = pool.capacity_bytes;
    a.subtracted = taken[where];
    a.free = a.published - a.subtracted;
    accounts.push_back({where.first, where.second, pool.name, pool.source, a, 0});
    pools[where.first].push_back(std::move(pool));
  }
}

void CapacityStore::place_volumes() {
  std::vector<std::pair<std::string, state::Claim>> placed;
  for (const auto& [name, node] : volume_node_) {
    const model::PersistentVolume* pv = located(name);
    if (!pv || pv->claim.empty()) continue;
    state::Claim claim;
    claim.owner = pv->claim;
    claim.source = kLocalPlacement;
    claim.node = node;
    claim.allocation.volumes.push_back(
        {pv->claim, class_pools_->find(pv->storage_class)->second, pv->name, pv->bytes, pv->claim, {}});
    placed.emplace_back("pv/" + pv->name, std::move(claim));
  }
  state_.replace_placements(kLocalPlacement, std::move(placed));
  volumes_dirty_ = false;
}

void CapacityStore::tick(TimePoint now) {
  std::lock_guard lock(mu_);
  if (next_change_ && now >= *next_change_) publish(now);
}

void CapacityStore::select() {
  selection_.clear();
  for (const auto& [key, p] : published_) {
    const std::string& cls = p.object.storage_class;
    if (!class_pools_->count(cls) || !p.object.topology) continue;
    for (const auto& [node, entry] : nodes_) {
      if (policy::topology_selects(p.object.topology, entry.facts.labels)) selection_[{node, cls}].push_back(key);
    }
  }
  locate_volumes();
  selection_dirty_ = false;
}

void CapacityStore::publish(TimePoint now) {
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
    model::Pool pool{class_pools_->at(cls), saturating_add(a.published, a.reflected), {},
                     chosen->object.max_volume_bytes.value_or(0), "CSIStorageCapacity " + chosen->object.key, a.published};
    accounts.push_back({node, cls, pool.name, pool.source, a, pool.max_volume_bytes});
    pools[node].push_back(std::move(pool));
  }
  for (const auto& [cls, pool_name] : *class_pools_) {
    if (!topolvm_device_class(cls)) continue;
    for (const auto& [node, entry] : nodes_) {
      if (selection_.count({node, cls})) continue;
      auto it = claims.find({node, cls});
      annotation_pool(node, entry, cls, it == claims.end() ? std::vector<policy::CapacityClaim>{} : std::move(it->second),
                      now, pools, accounts);
    }
  }
  local_pools(pools, accounts);
  for (const auto& [node, drive_pools] : drive_pools_) {
    auto& into = pools[node];
    into.insert(into.end(), drive_pools.begin(), drive_pools.end());
  }
  for (const auto& a : accounts) {
    if (a.account.next_change && (!next_change_ || *a.account.next_change < *next_change_)) next_change_ = a.account.next_change;
  }
  state_.set_derived_pools(std::move(pools));
  accounts_ = std::move(accounts);
  if (volumes_dirty_) place_volumes();
}

std::optional<std::string> CapacityStore::topolvm_device_class(std::string_view cls) const {
  auto sc = classes_.find(cls);
  if (sc == classes_.end() || sc->second.provisioner != kTopolvmDriver) return std::nullopt;
  auto param = sc->second.parameters.find(kTopolvmDeviceClass);
  return param == sc->second.parameters.end() || param->second.empty() ? std::string(kTopolvmDefaultDeviceClass)
                                                                        : param->second;
}

void CapacityStore::annotation_pool(const std::string& node, const NodeEntry& entry, const std::string& cls,
                                    std::vector<policy::CapacityClaim> claims, TimePoint now,
                                    std::map<std::string, std::vector<model::Pool>, std::less<>>& pools,
                                    std::vector<PoolAccount>& accounts) {
  const std::string device_class = *topolvm_device_class(cls);
  auto value = entry.facts.topolvm.find(device_class);
  if (value == entry.facts.topolvm.end()) return;
  const std::string key = std::string(kTopolvmPrefix) + device_class;
  auto bytes = parse_count(value->second, "annotation " + key);
  if (!bytes) {
    spdlog::warn("node {}: {}; no pool for class {} there", node, bytes.message(), cls);
    return;
  }
  auto changed = entry.topolvm_changed.find(device_class);
  const policy::PublishedCapacity published{
      *bytes, changed == entry.topolvm_changed.end() ? std::nullopt : std::optional(changed->second)};
  const policy::CapacityAccount a = policy::account(published, claims, now, options_.rule);
  model::Pool pool{class_pools_->at(cls), saturating_add(a.published, a.reflected), {}, 0, "annotation " + key,
                   a.published};
  accounts.push_back({node, cls, pool.name, pool.source, a, 0});
  pools[node].push_back(std::move(pool));
}

std::shared_ptr<const ClassPools> CapacityStore::class_pools() const {
  std::lock_guard lock(mu_);
  return merged_class_pools_;
}

void CapacityStore::merge_class_pools() {
  auto merged = std::make_shared<ClassPools>(*class_pools_);
  merged->insert(drive_classes_.begin(), drive_classes_.end());
  merged_class_pools_ = std::move(merged);
}

void CapacityStore::set_drive_pools(ClassPools classes, std::map<std::string, std::vector<model::Pool>, std::less<>> pools) {
  std::lock_guard lock(mu_);
  const bool reclassified = classes != drive_classes_;
  drive_classes_ = std::move(classes);
  drive_pools_ = std::move(pools);
  if (reclassified) {
    merge_class_pools();
    reclassify();
  } else {
    publish(SteadyClock::now());
  }
}

std::vector<PoolAccount> CapacityStore::accounts() const {
  std::lock_guard lock(mu_);
  return accounts_;
}

}  // namespace extender::sources
