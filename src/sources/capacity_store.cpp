#include "capacity_store.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <functional>

#include "extender/common/quantity.h"
#include "extender/policy/fit.h"
#include "extender/policy/local_volumes.h"
#include "object_sink.h"

namespace extender::sources {
namespace {

using nlohmann::json;

std::string claim_key(const wire::Claim& pvc) { return "pvc/" + pvc.uid; }

// The most one volume of a hand-written pool can take: its largest device, or its capacity.
std::int64_t largest_volume(const model::Pool& pool) {
  if (pool.max_volume_bytes > 0) return pool.max_volume_bytes;
  std::int64_t largest = pool.devices.empty() ? pool.capacity_bytes : 0;
  for (const auto& d : pool.devices) largest = std::max(largest, d.capacity_bytes);
  return largest;
}

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

CapacityStore::CapacityStore(state::ClusterState& state, model::DemandRules rules, CapacityOptions options,
                             const Clock& clock)
    : state_(state), rules_(std::move(rules)), options_(std::move(options)), clock_(clock) {}

std::unique_ptr<kube::ReflectorSink> CapacityStore::driver_sink() {
  return std::make_unique<ObjectSink<wire::CsiDriver>>(
      ObjectSink<wire::CsiDriver>::Hooks{"csidrivers", &wire::decode_csi_driver, &driver_key,
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
      [this](const std::string& key, std::optional<wire::StorageCapacity> c) { capacity_changed(key, std::move(c)); },
      true});
}

std::unique_ptr<kube::ReflectorSink> CapacityStore::volume_sink() {
  return std::make_unique<ObjectSink<model::PersistentVolume>>(ObjectSink<model::PersistentVolume>::Hooks{
      "persistentvolumes", &wire::decode_persistent_volume, &volume_key,
      [this](std::vector<model::PersistentVolume> listed) { volumes_listed(std::move(listed)); },
      [this](const std::string& name, std::optional<model::PersistentVolume> v) {
        volume_changed(name, std::move(v));
      }});
}

std::string CapacityStore::pool_of(std::string_view cls) const {
  if (auto it = rules_.pool_by_class.find(cls); it != rules_.pool_by_class.end()) return it->second;
  if (auto it = class_pools_->find(cls); it != class_pools_->end()) return it->second;
  return {};
}

std::string CapacityStore::class_of(const wire::Claim& pvc) const {
  return pvc.info.storage_class.empty() ? rules_.default_class : pvc.info.storage_class;
}

std::optional<state::Claim> CapacityStore::placement_of(const wire::Claim& pvc) const {
  if (pvc.selected_node.empty()) return std::nullopt;
  const std::string cls = class_of(pvc);
  const std::string pool = pool_of(cls);
  if (pool.empty() || local_classes_.count(cls)) return std::nullopt;
  if (auto it = claims_.find(pvc.uid); it != claims_.end() && it->second.ignored) return std::nullopt;
  state::Claim claim;
  claim.owner = pvc.namespace_name + "/" + pvc.name;
  claim.source = "volume";
  claim.node = pvc.selected_node;
  claim.allocation.volumes.push_back({claim.owner, pool, pvc.device, pvc.info.bytes, claim.owner, pvc.owner_pod_uid});
  return claim;
}

std::vector<CapacityStore::Place> CapacityStore::record(const std::string& uid, const wire::Claim* pvc, TimePoint now) {
  std::vector<Place> places;
  auto it = claims_.find(uid);
  if (it != claims_.end()) {
    Place was{it->second.claim.selected_node, class_of(it->second.claim)};
    if (auto at = claims_at_.find(was); at != claims_at_.end()) {
      at->second.erase(uid);
      if (at->second.empty()) claims_at_.erase(at);
    }
    places.push_back(std::move(was));
  }
  if (!pvc || pvc->selected_node.empty()) {
    if (it != claims_.end()) claims_.erase(it);
    return places;
  }
  Recorded& r = claims_[uid];
  if (r.claim.uid.empty() || r.claim.selected_node != pvc->selected_node) {
    r.selected = now;
    r.ignored = false;
  }
  // A volume is seen once: the first observation of the claim bound to one.
  const bool has_volume = pvc->info.bound;
  if (!has_volume) {
    r.volume_seen.reset();
  } else if (!r.volume_seen || !r.claim.info.bound) {
    r.volume_seen = now;
  }
  r.claim = *pvc;
  Place now_at{pvc->selected_node, class_of(*pvc)};
  claims_at_[now_at].insert(uid);
  places.push_back(std::move(now_at));
  return places;
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
    NodeEntry entry{std::move(facts), {}, {}};
    // A value that changed while no watch ran changed at a time not known: no change is counted.
    if (auto it = nodes_.find(name); it != nodes_.end()) entry.topolvm_changed = it->second.topolvm_changed;
    next.emplace(name, std::move(entry));
  }
  nodes_ = std::move(next);
  rebuild(clock_.now());
}

void CapacityStore::node_changed(const std::string& name, std::optional<NodeFacts> facts) {
  std::lock_guard lock(mu_);
  const auto now = clock_.now();
  std::set<std::string, std::less<>> touched{name};
  auto it = nodes_.find(name);
  if (!facts) {
    if (it == nodes_.end()) return;
    for (const auto& key : it->second.selected_by) published_.at(key).selects.erase(name);
    nodes_.erase(it);
    if (auto at = volumes_at_.find(name); at != volumes_at_.end()) {
      const std::set<std::string, std::less<>> moved = at->second;
      for (const auto& volume : moved) {
        const std::string next = locate(volumes_.at(volume));
        set_volume_node(volume, next);
        place_volume(volume);
        touched.insert(next);
      }
    }
  } else if (it == nodes_.end()) {
    it = nodes_.emplace(name, NodeEntry{std::move(*facts), {}, {}}).first;
    match_node(name, it->second);
    relocate_for(name, touched);
  } else {
    if (it->second.facts == *facts) return;
    for (const auto& [device_class, value] : facts->topolvm) {
      auto was = it->second.facts.topolvm.find(device_class);
      if (was == it->second.facts.topolvm.end() || was->second != value) it->second.topolvm_changed[device_class] = now;
    }
    const bool relabelled = it->second.facts.labels != facts->labels;
    const bool rematch = relabelled && names_any(it->second.facts.labels, facts->labels);
    it->second.facts = std::move(*facts);
    if (rematch) match_node(name, it->second);
    if (relabelled) relocate_for(name, touched);
  }
  touched.erase(std::string());
  recompute(touched, now);
}

void CapacityStore::classes_listed(std::vector<wire::StorageClass> classes) {
  std::lock_guard lock(mu_);
  fill_by_name(classes_, std::move(classes));
  reclassify();
  rebuild(clock_.now());
}

void CapacityStore::class_changed(const std::string& name, std::optional<wire::StorageClass> sc) {
  std::lock_guard lock(mu_);
  if (sc) {
    classes_.insert_or_assign(name, std::move(*sc));
  } else {
    classes_.erase(name);
  }
  reclassify();
  rebuild(clock_.now());
}

void CapacityStore::drivers_listed(std::map<std::string, bool> drivers) {
  std::lock_guard lock(mu_);
  drivers_.clear();
  for (auto& [name, tracks] : drivers) drivers_.emplace(name, tracks);
  reclassify();
  rebuild(clock_.now());
}

void CapacityStore::driver_changed(const std::string& name, std::optional<bool> storage_capacity) {
  std::lock_guard lock(mu_);
  if (storage_capacity) {
    drivers_.insert_or_assign(name, *storage_capacity);
  } else {
    drivers_.erase(name);
  }
  reclassify();
  rebuild(clock_.now());
}

void CapacityStore::claims_listed(std::vector<wire::Claim> claims) {
  std::lock_guard lock(mu_);
  const auto now = clock_.now();
  std::map<std::string, Recorded, std::less<>> before = std::move(claims_);
  claims_.clear();
  claims_at_.clear();
  for (const auto& pvc : claims) {
    if (auto it = before.find(pvc.uid); it != before.end()) claims_.insert(before.extract(it));
    record(pvc.uid, &pvc, now);
  }
  rebuild(now);
  std::vector<std::pair<std::string, state::Claim>> placed;
  for (const auto& pvc : claims) {
    if (auto claim = placement_of(pvc)) placed.emplace_back(claim_key(pvc), std::move(*claim));
  }
  spdlog::info("persistentvolumeclaims: {} listed, {} holding node-local space", claims.size(), placed.size());
  state_.replace_placements("volume", std::move(placed));
}

void CapacityStore::claim_changed(const wire::Claim& pvc, bool deleted) {
  std::lock_guard lock(mu_);
  const auto now = clock_.now();
  const std::vector<Place> places = record(pvc.uid, deleted ? nullptr : &pvc, now);
  std::set<std::string, std::less<>> touched;
  for (const auto& [node, cls] : places) {
    if (class_pools_->count(cls) || rules_.pool_by_class.count(cls)) touched.insert(node);
  }
  recompute(touched, now);
  if (deleted) {
    state_.drop(claim_key(pvc));
  } else if (auto claim = placement_of(pvc)) {
    state_.place(claim_key(pvc), std::move(*claim));
  } else {
    state_.drop(claim_key(pvc));
  }
}

void CapacityStore::capacities_listed(std::vector<wire::StorageCapacity> objects) {
  std::lock_guard lock(mu_);
  std::map<std::string, Published, std::less<>> next;
  for (auto& o : objects) {
    std::string key = o.key;
    Published p{std::move(o), std::nullopt, {}};
    // A figure that changed while no watch ran changed at a time not known: not counted as a change.
    if (auto it = published_.find(key); it != published_.end()) p.changed = it->second.changed;
    next.insert_or_assign(std::move(key), std::move(p));
  }
  published_ = std::move(next);
  rebuild(clock_.now());
}

void CapacityStore::capacity_changed(const std::string& key, std::optional<wire::StorageCapacity> object) {
  std::lock_guard lock(mu_);
  const auto now = clock_.now();
  std::set<std::string, std::less<>> touched;
  auto it = published_.find(key);
  if (!object) {
    if (it == published_.end()) return;
    unindex_object(key, it->second.object);
    unselect(key, it->second, touched);
    published_.erase(it);
  } else if (it == published_.end()) {
    it = published_.insert_or_assign(key, Published{std::move(*object), now, {}}).first;
    index_object(key, it->second.object);
    match_object(key, it->second, touched);
  } else {
    Published& p = it->second;
    if (p.object.capacity_bytes != object->capacity_bytes) p.changed = now;
    touched = p.selects;
    if (p.object.topology != object->topology) {
      unindex_object(key, p.object);
      unselect(key, p, touched);
      p.object = std::move(*object);
      index_object(key, p.object);
      match_object(key, p, touched);
    } else {
      p.object = std::move(*object);
    }
  }
  recompute(touched, now);
}

void CapacityStore::reclassify() {
  auto next = std::make_shared<ClassPools>();
  std::set<std::string, std::less<>> local;
  std::set<std::string, std::less<>> with_volumes;
  for (const auto& [name, pv] : volumes_) {
    if (policy::local_volume_counted(pv)) with_volumes.insert(pv.storage_class);
  }
  for (const auto& [name, sc] : classes_) {
    if (rules_.pool_by_class.count(name) || drive_classes_.count(name)) continue;
    if (!options_.classes.empty() &&
        std::find(options_.classes.begin(), options_.classes.end(), name) == options_.classes.end()) {
      continue;
    }
    if (sc.provisioner == kNoProvisioner && sc.binding_mode == "WaitForFirstConsumer") {
      if (with_volumes.count(name)) {
        local.insert(name);
        (*next)[name] = name;
      }
      continue;
    }
    if (!options_.enabled) continue;
    auto driver = drivers_.find(sc.provisioner);
    if ((driver != drivers_.end() && driver->second) || sc.provisioner == kTopolvmDriver) (*next)[name] = name;
  }
  if (*next == *class_pools_ && local == local_classes_) return;
  class_pools_ = std::move(next);
  local_classes_ = std::move(local);
  merge_class_pools();
  for (const auto& [uid, r] : claims_) {
    if (auto claim = placement_of(r.claim)) {
      state_.place(claim_key(r.claim), std::move(*claim));
    } else {
      state_.drop(claim_key(r.claim));
    }
  }
}

void CapacityStore::rebuild(TimePoint now) {
  index_ = {};
  for (auto& [key, p] : published_) {
    p.selects.clear();
    index_object(key, p.object);
  }
  for (auto& [name, entry] : nodes_) {
    entry.selected_by.clear();
    match_node(name, entry);
  }
  locate_volumes();
  place_volumes();
  std::set<std::string, std::less<>> all;
  for (const auto& [name, entry] : nodes_) all.insert(name);
  for (const auto& [name, pools] : given_) all.insert(name);
  for (const auto& [name, pools] : drive_pools_) all.insert(name);
  recompute(all, now);
}

void CapacityStore::volumes_listed(std::vector<model::PersistentVolume> volumes) {
  std::lock_guard lock(mu_);
  fill_by_name(volumes_, std::move(volumes));
  spdlog::info("persistentvolumes: {} local of {}",
               std::count_if(volumes_.begin(), volumes_.end(),
                             [](const auto& v) { return policy::local_volume_counted(v.second); }),
               volumes_.size());
  reclassify();
  rebuild(clock_.now());
}

void CapacityStore::volume_changed(const std::string& name, std::optional<model::PersistentVolume> volume) {
  std::lock_guard lock(mu_);
  auto it = volumes_.find(name);
  const bool was_counted = it != volumes_.end() && policy::local_volume_counted(it->second);
  const bool counted = volume && policy::local_volume_counted(*volume);
  if (volume) {
    volumes_.insert_or_assign(name, std::move(*volume));
  } else if (it != volumes_.end()) {
    volumes_.erase(it);
  }
  if (!was_counted && !counted) return;
  const auto classes = class_pools_;
  const auto locals = local_classes_;
  reclassify();
  if (class_pools_ != classes || local_classes_ != locals) {
    rebuild(clock_.now());
    return;
  }
  std::set<std::string, std::less<>> touched;
  if (auto at = volume_node_.find(name); at != volume_node_.end()) touched.insert(at->second);
  auto now_at = volumes_.find(name);
  const std::string node = now_at == volumes_.end() ? std::string() : locate(now_at->second);
  set_volume_node(name, node);
  place_volume(name);
  touched.insert(node);
  touched.erase(std::string());
  recompute(touched, clock_.now());
}

std::string CapacityStore::local_volume_node(std::string_view volume) const {
  std::lock_guard lock(view_mu_);
  auto it = volume_node_.find(volume);
  return it == volume_node_.end() ? std::string() : it->second;
}

std::string CapacityStore::locate(const model::PersistentVolume& pv) const {
  if (!local_classes_.count(pv.storage_class) || !policy::local_volume_counted(pv)) return {};
  model::NodeSupply probe;
  for (const auto& [node, entry] : nodes_) {
    probe.name = node;
    probe.labels = entry.facts.labels;
    if (policy::local_volume_on_node(pv, probe)) return node;
  }
  return {};
}

void CapacityStore::set_volume_node(const std::string& volume, const std::string& node) {
  std::string before;
  {
    std::lock_guard lock(view_mu_);
    auto it = volume_node_.find(volume);
    if (it != volume_node_.end()) before = it->second;
    if (before == node) return;
    if (node.empty()) {
      volume_node_.erase(it);
    } else {
      volume_node_.insert_or_assign(volume, node);
    }
  }
  if (auto at = volumes_at_.find(before); at != volumes_at_.end()) {
    at->second.erase(volume);
    if (at->second.empty()) volumes_at_.erase(at);
  }
  if (!node.empty()) volumes_at_[node].insert(volume);
}

void CapacityStore::relocate_for(const std::string& node, std::set<std::string, std::less<>>& touched) {
  if (local_classes_.empty()) return;
  auto entry = nodes_.find(node);
  model::NodeSupply probe;
  if (entry != nodes_.end()) {
    probe.name = node;
    probe.labels = entry->second.facts.labels;
  }
  for (const auto& [name, pv] : volumes_) {
    if (!local_classes_.count(pv.storage_class) || !policy::local_volume_counted(pv)) continue;
    auto at = volume_node_.find(name);
    const std::string current = at == volume_node_.end() ? std::string() : at->second;
    std::string next = current;
    if (current == node) {
      next = locate(pv);
    } else if ((current.empty() || node < current) && entry != nodes_.end() &&
               policy::local_volume_on_node(pv, probe)) {
      next = node;  // the first node in name order that the volume's affinity selects
    }
    if (next == current) continue;
    set_volume_node(name, next);
    place_volume(name);
    touched.insert(current);
    touched.insert(next);
  }
}

void CapacityStore::locate_volumes() {
  std::map<std::string, std::string, std::less<>> located;
  volumes_at_.clear();
  for (const auto& [name, pv] : volumes_) {
    std::string node = locate(pv);
    if (node.empty()) continue;
    volumes_at_[node].insert(name);
    located.emplace(name, std::move(node));
  }
  std::lock_guard lock(view_mu_);
  volume_node_ = std::move(located);
}

const model::PersistentVolume* CapacityStore::located(std::string_view name) const {
  auto it = volumes_.find(name);
  if (it == volumes_.end() || !class_pools_->count(it->second.storage_class)) return nullptr;
  return &it->second;
}

void CapacityStore::local_pools(const std::string& node, std::vector<model::Pool>& pools,
                                std::vector<PoolAccount>& accounts) const {
  auto at = volumes_at_.find(node);
  if (at == volumes_at_.end()) return;
  std::map<std::string, model::Pool, std::less<>> by_class;
  std::map<std::string, std::int64_t, std::less<>> taken;
  for (const auto& name : at->second) {
    const model::PersistentVolume* found = located(name);
    if (!found) continue;
    const model::PersistentVolume& pv = *found;
    model::Pool& pool = by_class[pv.storage_class];
    pool.name = class_pools_->find(pv.storage_class)->second;
    pool.source = std::string(kLocalSource);
    pool.whole_devices = true;
    pool.capacity_bytes = saturating_add(pool.capacity_bytes, pv.bytes);
    pool.published_bytes = pool.capacity_bytes;
    pool.devices.push_back({pv.name, pv.bytes, pv.access_modes, pv.block, {}});
    if (!policy::local_volume_free(pv)) taken[pv.storage_class] += pv.bytes;
  }
  for (auto& [cls, pool] : by_class) {
    policy::CapacityAccount a;
    a.published = pool.capacity_bytes;
    a.subtracted = taken[cls];
    a.free = a.published - a.subtracted;
    accounts.push_back({node, cls, pool.name, pool.source, a, 0});
    pools.push_back(std::move(pool));
  }
}

namespace {

std::optional<std::pair<std::string, state::Claim>> volume_placement(const model::PersistentVolume& pv,
                                                                     const std::string& node, const std::string& pool) {
  if (pv.claim.empty()) return std::nullopt;
  state::Claim claim;
  claim.owner = pv.claim;
  claim.source = kLocalPlacement;
  claim.node = node;
  claim.allocation.volumes.push_back({pv.claim, pool, pv.name, pv.bytes, pv.claim, {}});
  return std::pair("pv/" + pv.name, std::move(claim));
}

}  // namespace

void CapacityStore::place_volume(const std::string& name) {
  auto at = volume_node_.find(name);
  const model::PersistentVolume* pv = at == volume_node_.end() ? nullptr : located(name);
  auto placement = pv ? volume_placement(*pv, at->second, class_pools_->find(pv->storage_class)->second) : std::nullopt;
  if (placement) {
    state_.place(std::move(placement->first), std::move(placement->second));
  } else {
    state_.drop("pv/" + name);
  }
}

void CapacityStore::place_volumes() {
  std::vector<std::pair<std::string, state::Claim>> placed;
  for (const auto& [name, node] : volume_node_) {
    const model::PersistentVolume* pv = located(name);
    if (!pv) continue;
    if (auto p = volume_placement(*pv, node, class_pools_->find(pv->storage_class)->second))
      placed.push_back(std::move(*p));
  }
  state_.replace_placements(kLocalPlacement, std::move(placed));
}

void CapacityStore::tick(TimePoint now) {
  std::lock_guard lock(mu_);
  std::set<std::string, std::less<>> due;
  for (auto it = changes_.begin(); it != changes_.end() && it->first <= now; ++it) due.insert(it->second);
  recompute(due, now);
}

void CapacityStore::index_object(const std::string& key, const wire::StorageCapacity& object) {
  if (!object.topology) return;
  const auto& reqs = *object.topology;
  auto single =
      std::find_if(reqs.begin(), reqs.end(), [](const auto& r) { return r.op == "In" && r.values.size() == 1; });
  auto present = std::find_if(reqs.begin(), reqs.end(), [](const auto& r) { return r.op == "In" || r.op == "Exists"; });
  if (single != reqs.end()) {
    index_.by_value[{single->key, single->values.front()}].insert(key);
  } else if (present != reqs.end()) {
    index_.by_key[present->key].insert(key);
  } else {
    index_.unkeyed.insert(key);
  }
  for (const auto& r : reqs) ++index_.named[r.key];
}

void CapacityStore::unindex_object(const std::string& key, const wire::StorageCapacity& object) {
  if (!object.topology) return;
  auto drop = [&](auto& map, const auto& at) {
    auto it = map.find(at);
    if (it == map.end()) return;
    it->second.erase(key);
    if (it->second.empty()) map.erase(it);
  };
  const auto& reqs = *object.topology;
  auto single =
      std::find_if(reqs.begin(), reqs.end(), [](const auto& r) { return r.op == "In" && r.values.size() == 1; });
  auto present = std::find_if(reqs.begin(), reqs.end(), [](const auto& r) { return r.op == "In" || r.op == "Exists"; });
  if (single != reqs.end()) {
    drop(index_.by_value, std::pair(single->key, single->values.front()));
  } else if (present != reqs.end()) {
    drop(index_.by_key, present->key);
  } else {
    index_.unkeyed.erase(key);
  }
  for (const auto& r : reqs) {
    auto it = index_.named.find(r.key);
    if (it != index_.named.end() && --it->second == 0) index_.named.erase(it);
  }
}

bool CapacityStore::names_any(const model::StringMap& before, const model::StringMap& after) const {
  auto named = [&](const std::string& key) { return index_.named.count(key) > 0; };
  auto a = before.begin();
  auto b = after.begin();
  while (a != before.end() || b != after.end()) {
    if (b == after.end() || (a != before.end() && a->first < b->first)) {
      if (named(a->first)) return true;
      ++a;
    } else if (a == before.end() || b->first < a->first) {
      if (named(b->first)) return true;
      ++b;
    } else {
      if (a->second != b->second && named(a->first)) return true;
      ++a;
      ++b;
    }
  }
  return false;
}

void CapacityStore::match_node(const std::string& node, NodeEntry& entry) {
  std::set<std::string, std::less<>> selected;
  auto consider = [&](const std::set<std::string, std::less<>>& keys) {
    for (const auto& key : keys) {
      if (!selected.count(key) && policy::topology_selects(published_.at(key).object.topology, entry.facts.labels)) {
        selected.insert(key);
      }
    }
  };
  for (const auto& [key, value] : entry.facts.labels) {
    if (auto it = index_.by_value.find(std::pair(key, value)); it != index_.by_value.end()) consider(it->second);
    if (auto it = index_.by_key.find(key); it != index_.by_key.end()) consider(it->second);
  }
  consider(index_.unkeyed);
  for (const auto& key : entry.selected_by) {
    if (!selected.count(key)) published_.at(key).selects.erase(node);
  }
  for (const auto& key : selected) published_.at(key).selects.insert(node);
  entry.selected_by = std::move(selected);
}

void CapacityStore::match_object(const std::string& key, Published& p, std::set<std::string, std::less<>>& touched) {
  for (auto& [name, entry] : nodes_) {
    const bool selects = policy::topology_selects(p.object.topology, entry.facts.labels);
    if (selects == static_cast<bool>(p.selects.count(name))) continue;
    touched.insert(name);
    if (selects) {
      p.selects.insert(name);
      entry.selected_by.insert(key);
    } else {
      p.selects.erase(name);
      entry.selected_by.erase(key);
    }
  }
  touched.insert(p.selects.begin(), p.selects.end());
}

void CapacityStore::unselect(const std::string& key, Published& p, std::set<std::string, std::less<>>& touched) {
  for (const auto& node : p.selects) {
    if (auto it = nodes_.find(node); it != nodes_.end()) it->second.selected_by.erase(key);
    touched.insert(node);
  }
  p.selects.clear();
}

std::vector<policy::CapacityClaim> CapacityStore::claims_at(const Place& where,
                                                            std::vector<const std::string*>& uids) const {
  std::vector<policy::CapacityClaim> claims;
  if (auto at = claims_at_.find(where); at != claims_at_.end()) {
    for (const auto& uid : at->second) {
      const Recorded& r = claims_.at(uid);
      claims.push_back({r.claim.namespace_name + "/" + r.claim.name, r.claim.info.bytes, r.volume_seen, r.selected});
      uids.push_back(&uid);
    }
  }
  return claims;
}

policy::CapacityAccount CapacityStore::account_at(const Place& where, const policy::PublishedCapacity& published,
                                                  TimePoint now, std::set<std::string, std::less<>>& ignored) const {
  std::vector<const std::string*> uids;
  policy::CapacityAccount a = policy::account(published, claims_at(where, uids), now, options_.rule);
  for (std::size_t i : a.ignored_claims) ignored.insert(*uids[i]);
  return a;
}

std::optional<TimePoint> CapacityStore::hand_written_claims(const std::string& node, TimePoint now,
                                                            std::set<std::string, std::less<>>& ignored) const {
  std::optional<TimePoint> next;
  const state::Snapshot snapshot = state_.snapshot();
  const state::NodeState* given = snapshot.find(node);
  for (auto at = claims_at_.lower_bound(Place{node, std::string()}); at != claims_at_.end() && at->first.first == node;
       ++at) {
    const auto pool = rules_.pool_by_class.find(at->first.second);
    if (pool == rules_.pool_by_class.end() || local_classes_.count(at->first.second)) continue;
    const model::Pool* written = given ? given->supply.find_pool(pool->second) : nullptr;
    std::vector<const std::string*> uids;
    const policy::CapacityAccount a = policy::account_hand_written(written ? largest_volume(*written) : INT64_MAX,
                                                                   claims_at(at->first, uids), now, options_.rule);
    for (std::size_t i : a.ignored_claims) ignored.insert(*uids[i]);
    if (a.next_change && (!next || *a.next_change < *next)) next = a.next_change;
  }
  return next;
}

void CapacityStore::hold_claims(const std::string& node, const std::set<std::string, std::less<>>& ignored,
                                TimePoint now) {
  for (auto at = claims_at_.lower_bound(Place{node, std::string()}); at != claims_at_.end() && at->first.first == node;
       ++at) {
    for (const auto& uid : at->second) {
      Recorded& r = claims_.at(uid);
      const bool ignore = ignored.count(uid) > 0;
      if (r.ignored == ignore) continue;
      r.ignored = ignore;
      const std::string id = r.claim.namespace_name + "/" + r.claim.name;
      const std::string pool = pool_of(class_of(r.claim));
      const std::string size = policy::format_bytes(r.claim.info.bytes);
      if (!ignore) {
        spdlog::info("persistentvolumeclaim {}: counted again against pool {} on node {}", id, pool, node);
      } else if (now - r.selected >= options_.rule.selected_hold) {
        spdlog::warn(
            "persistentvolumeclaim {}: selected for node {} {} s ago and still without a volume: its {} no "
            "longer counted against pool {} there (storage.selected_claim_timeout)",
            id, node, std::chrono::duration_cast<std::chrono::seconds>(now - r.selected).count(), size, pool);
      } else {
        spdlog::warn(
            "persistentvolumeclaim {}: selected for node {} without a volume, asks {}, more than pool {} "
            "there could provision: not counted (no scheduler that checks capacity selects it)",
            id, node, size, pool);
      }
      if (auto claim = placement_of(r.claim)) {
        state_.place(claim_key(r.claim), std::move(*claim));
      } else {
        state_.drop(claim_key(r.claim));
      }
    }
  }
}

void CapacityStore::node_pools(const std::string& node, TimePoint now, std::vector<model::Pool>& pools,
                               std::vector<PoolAccount>& accounts, std::set<std::string, std::less<>>& ignored) const {
  auto entry = nodes_.find(node);
  if (entry != nodes_.end()) {
    std::map<std::string, const Published*, std::less<>> chosen;  // by class
    for (const auto& key : entry->second.selected_by) {
      const Published& p = published_.at(key);
      if (!class_pools_->count(p.object.storage_class)) continue;
      const Published*& best = chosen[p.object.storage_class];
      if (!best || p.object.capacity_bytes.value_or(0) > best->object.capacity_bytes.value_or(0)) best = &p;
    }
    for (const auto& [cls, p] : chosen) {
      const policy::PublishedCapacity published{p->object.capacity_bytes.value_or(0), p->changed,
                                                p->object.max_volume_bytes.value_or(0)};
      const policy::CapacityAccount a = account_at({node, cls}, published, now, ignored);
      model::Pool pool{class_pools_->at(cls),
                       saturating_add(a.published, a.reflected),
                       {},
                       p->object.max_volume_bytes.value_or(0),
                       "CSIStorageCapacity " + p->object.key,
                       a.published};
      pool.ignored_bytes = a.ignored;
      accounts.push_back({node, cls, pool.name, pool.source, a, pool.max_volume_bytes});
      pools.push_back(std::move(pool));
    }
    for (const auto& [cls, pool_name] : *class_pools_) {
      if (chosen.count(cls) || !topolvm_device_class(cls)) continue;
      annotation_pool(node, entry->second, cls, now, pools, accounts, ignored);
    }
  }
  local_pools(node, pools, accounts);
  if (auto drives = drive_pools_.find(node); drives != drive_pools_.end()) {
    pools.insert(pools.end(), drives->second.begin(), drives->second.end());
  }
}

void CapacityStore::recompute(const std::set<std::string, std::less<>>& nodes, TimePoint now) {
  NodePools changed;
  for (const auto& node : nodes) {
    std::vector<model::Pool> pools;
    std::vector<PoolAccount> accounts;
    std::set<std::string, std::less<>> ignored;
    node_pools(node, now, pools, accounts, ignored);
    std::optional<TimePoint> next = hand_written_claims(node, now, ignored);
    hold_claims(node, ignored, now);
    if (auto was = next_change_.find(node); was != next_change_.end()) {
      changes_.erase({was->second, node});
      next_change_.erase(was);
    }
    for (const auto& a : accounts) {
      if (a.account.next_change && (!next || *a.account.next_change < *next)) next = a.account.next_change;
    }
    if (next) {
      next_change_.emplace(node, *next);
      changes_.emplace(*next, node);
    }
    auto given = given_.find(node);
    if (given == given_.end() ? !pools.empty() : given->second != pools) {
      changed[node] = pools;
      if (pools.empty()) {
        given_.erase(given);
      } else {
        given_.insert_or_assign(node, std::move(pools));
      }
    }
    std::lock_guard lock(view_mu_);
    if (accounts.empty()) {
      accounts_.erase(node);
    } else {
      accounts_.insert_or_assign(node, std::move(accounts));
    }
  }
  state_.set_derived_pools_of(std::move(changed));
}

std::optional<std::string> CapacityStore::topolvm_device_class(std::string_view cls) const {
  auto sc = classes_.find(cls);
  if (sc == classes_.end() || sc->second.provisioner != kTopolvmDriver) return std::nullopt;
  auto param = sc->second.parameters.find(kTopolvmDeviceClass);
  return param == sc->second.parameters.end() || param->second.empty() ? std::string(kTopolvmDefaultDeviceClass)
                                                                       : param->second;
}

void CapacityStore::annotation_pool(const std::string& node, const NodeEntry& entry, const std::string& cls,
                                    TimePoint now, std::vector<model::Pool>& pools, std::vector<PoolAccount>& accounts,
                                    std::set<std::string, std::less<>>& ignored) const {
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
  const policy::CapacityAccount a = account_at({node, cls}, published, now, ignored);
  model::Pool pool{
      class_pools_->at(cls), saturating_add(a.published, a.reflected), {}, 0, "annotation " + key, a.published};
  pool.ignored_bytes = a.ignored;
  accounts.push_back({node, cls, pool.name, pool.source, a, 0});
  pools.push_back(std::move(pool));
}

std::shared_ptr<const ClassPools> CapacityStore::class_pools() const {
  std::lock_guard lock(view_mu_);
  return merged_class_pools_;
}

void CapacityStore::merge_class_pools() {
  auto merged = std::make_shared<ClassPools>(*class_pools_);
  merged->insert(drive_classes_.begin(), drive_classes_.end());
  std::lock_guard lock(view_mu_);
  merged_class_pools_ = std::move(merged);
}

void CapacityStore::set_drive_pools(ClassPools classes, NodePools pools) {
  std::lock_guard lock(mu_);
  const bool reclassified = classes != drive_classes_;
  drive_classes_ = std::move(classes);
  if (reclassified) {
    drive_pools_ = std::move(pools);
    merge_class_pools();
    reclassify();
    rebuild(clock_.now());
    return;
  }
  std::set<std::string, std::less<>> touched;
  for (const auto& [node, p] : pools) {
    auto it = drive_pools_.find(node);
    if (it == drive_pools_.end() || it->second != p) touched.insert(node);
  }
  for (const auto& [node, p] : drive_pools_) {
    if (!pools.count(node)) touched.insert(node);
  }
  drive_pools_ = std::move(pools);
  recompute(touched, clock_.now());
}

void CapacityStore::set_drive_pools_of(NodePools pools) {
  std::lock_guard lock(mu_);
  std::set<std::string, std::less<>> touched;
  for (auto& [node, p] : pools) {
    touched.insert(node);
    if (p.empty()) {
      drive_pools_.erase(node);
    } else {
      drive_pools_.insert_or_assign(node, std::move(p));
    }
  }
  recompute(touched, clock_.now());
}

std::vector<PoolAccount> CapacityStore::accounts() const {
  std::lock_guard lock(view_mu_);
  std::vector<PoolAccount> out;
  for (const auto& [node, accounts] : accounts_) out.insert(out.end(), accounts.begin(), accounts.end());
  return out;
}

}  // namespace extender::sources
