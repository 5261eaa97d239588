#include "baremetal_store.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "extender/common/quantity.h"
#include "extender/policy/drive_plan.h"
#include "object_sink.h"

namespace extender::sources {
namespace {

constexpr const char* kHoldSource = "csi-baremetal reservation";
constexpr const char* kVolumeSource = "csi-baremetal volume";
constexpr const char* kStorageTypeParameter = "storageType";

template <class Object>
std::string name_key(const Object& o) {
  return o.name;
}

// "SSD" for SSD and SSDLVG.
std::string media_of(std::string_view storage_class) {
  if (auto media = policy::volume_group_media(storage_class)) return std::string(*media);
  return std::string(storage_class);
}

std::string media_pool(std::string_view storage_class) { return kBaremetalPoolPrefix + media_of(storage_class); }

// csi-baremetal's planner skips an AC only when its taint label says NoSchedule.
bool tainted(const wire::AvailableCapacity& ac) {
  auto it = ac.labels.find(kDriveTaintLabel);
  return it != ac.labels.end() && it->second == kDriveTaintNoSchedule;
}

}  // namespace

BaremetalStore::BaremetalStore(state::ClusterState& state, CapacityStore& capacity, BaremetalOptions options,
                               const Clock& clock)
    : state_(state), capacity_(capacity), options_(std::move(options)), clock_(clock) {}

std::unique_ptr<kube::ReflectorSink> BaremetalStore::capacity_sink() {
  return std::make_unique<ObjectSink<wire::AvailableCapacity>>(ObjectSink<wire::AvailableCapacity>::Hooks{
      "availablecapacities", &wire::decode_available_capacity, &name_key<wire::AvailableCapacity>,
      [this](std::vector<wire::AvailableCapacity> acs) { acs_listed(std::move(acs)); },
      [this](const std::string& name, std::optional<wire::AvailableCapacity> ac) { ac_changed(name, std::move(ac)); }});
}

std::unique_ptr<kube::ReflectorSink> BaremetalStore::reservation_sink() {
  return std::make_unique<ObjectSink<wire::CapacityReservation>>(ObjectSink<wire::CapacityReservation>::Hooks{
      "availablecapacityreservations", &wire::decode_capacity_reservation, &name_key<wire::CapacityReservation>,
      [this](std::vector<wire::CapacityReservation> acrs) { reservations_listed(std::move(acrs)); },
      [this](const std::string& name, std::optional<wire::CapacityReservation> acr) {
        reservation_changed(name, std::move(acr));
      }});
}

std::unique_ptr<kube::ReflectorSink> BaremetalStore::volume_sink() {
  return std::make_unique<ObjectSink<wire::BaremetalVolume>>(ObjectSink<wire::BaremetalVolume>::Hooks{
      "volumes", &wire::decode_baremetal_volume, &name_key<wire::BaremetalVolume>,
      [this](std::vector<wire::BaremetalVolume> volumes) { volumes_listed(std::move(volumes)); },
      [this](const std::string& name, std::optional<wire::BaremetalVolume> v) { volume_changed(name, std::move(v)); }});
}

std::string BaremetalStore::node_id(const model::Node& node) const {
  BaremetalNodeId id = baremetal_node_id(node, options_);
  std::lock_guard lock(logged_mu_);
  auto [it, fresh] = logged_ids_.try_emplace(node.name, id.id);
  if (fresh || it->second != id.id) {
    it->second = id.id;
    spdlog::info("csi-baremetal: node {} has id {} ({})", node.name, id.id.empty() ? "-" : id.id, id.source);
  }
  return std::move(id.id);
}

void BaremetalStore::nodes_listed(StringTable ids) {
  std::lock_guard lock(mu_);
  node_ids_.clear();
  id_nodes_.clear();
  for (auto& [name, id] : ids) {
    if (id.empty()) continue;
    id_nodes_[id] = name;
    node_ids_[name] = std::move(id);
  }
  publish_pools();
  place_holds();
  place_volumes();
}

void BaremetalStore::node_changed(const std::string& name, std::string id) {
  std::lock_guard lock(mu_);
  auto it = node_ids_.find(name);
  const std::string before = it == node_ids_.end() ? std::string() : it->second;
  if (before == id) return;
  if (!before.empty()) id_nodes_.erase(before);
  if (id.empty()) {
    node_ids_.erase(name);
  } else {
    id_nodes_[id] = name;
    node_ids_[name] = std::move(id);
  }
  publish_pools();
  place_holds();
  place_volumes();
}

void BaremetalStore::classes_listed(const std::vector<wire::StorageClass>& classes) {
  std::lock_guard lock(mu_);
  classes_.clear();
  for (const auto& sc : classes) {
    if (sc.provisioner == options_.provisioner) classes_[sc.name] = sc;
  }
  publish_pools();
}

void BaremetalStore::class_changed(const std::string& name, const wire::StorageClass* sc) {
  std::lock_guard lock(mu_);
  const bool ours = sc && sc->provisioner == options_.provisioner;
  if (!ours && !classes_.count(name)) return;
  if (ours) {
    classes_[name] = *sc;
  } else {
    classes_.erase(name);
  }
  publish_pools();
}

void BaremetalStore::claims_listed(StringTable selected) {
  std::lock_guard lock(mu_);
  selected_ = std::move(selected);
  place_holds();
}

void BaremetalStore::claim_changed(const std::string& claim, std::string selected) {
  std::lock_guard lock(mu_);
  auto it = selected_.find(claim);
  if ((it == selected_.end() ? std::string() : it->second) == selected) return;
  if (selected.empty()) {
    selected_.erase(claim);
  } else {
    selected_[claim] = std::move(selected);
  }
  const auto slash = claim.find('/');
  if (slash == std::string::npos) return;
  const std::string_view ns = std::string_view(claim).substr(0, slash),
                         claim_name = std::string_view(claim).substr(slash + 1);
  for (const auto& [name, held] : reservations_) {
    if (held.acr.pod_namespace != ns) continue;
    if (std::any_of(held.acr.requests.begin(), held.acr.requests.end(),
                    [&](const auto& r) { return r.name == claim_name; })) {
      place_holds_of(name);
    }
  }
}

std::shared_ptr<const StringTable> BaremetalStore::drive_classes() const {
  std::lock_guard lock(view_mu_);
  return drive_classes_;
}

std::string BaremetalStore::id_of(std::string_view node) const {
  std::lock_guard lock(mu_);
  auto it = node_ids_.find(node);
  return it == node_ids_.end() ? std::string() : it->second;
}

std::optional<wire::CapacityReservation> BaremetalStore::reservation(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = reservations_.find(name);
  if (it == reservations_.end()) return std::nullopt;
  return it->second.acr;
}

void BaremetalStore::reservation_written(const std::string& name, std::optional<wire::CapacityReservation> acr,
                                         TimePoint now, bool sending) {
  std::lock_guard lock(mu_);
  if (acr) {
    reservations_[name] = {std::move(*acr), now, sending};
  } else {
    reservations_.erase(name);
  }
  place_holds_of(name);
}

void BaremetalStore::reservation_answered(const wire::CapacityReservation& sent,
                                          std::optional<wire::CapacityReservation> now_is, TimePoint now) {
  std::lock_guard lock(mu_);
  auto it = reservations_.find(sent.name);
  if (it == reservations_.end()) return;
  if (!it->second.acr.same_content(sent)) return;
  if (now_is) {
    it->second = {std::move(*now_is), now, false};
  } else {
    reservations_.erase(it);
  }
  place_holds_of(sent.name);
}

void BaremetalStore::reservation_confirmed(const std::string& name, TimePoint now) {
  std::lock_guard lock(mu_);
  if (auto it = reservations_.find(name); it != reservations_.end()) it->second.changed = now;
}

bool BaremetalStore::placing(const wire::CapacityReservation& acr) const {
  return std::any_of(acr.requests.begin(), acr.requests.end(),
                     [&](const auto& r) { return selected_.count(acr.pod_namespace + "/" + r.name) > 0; });
}

bool BaremetalStore::being_placed(const wire::CapacityReservation& acr) const {
  std::lock_guard lock(mu_);
  return placing(acr);
}

void BaremetalStore::confirm_all(TimePoint now) {
  std::lock_guard lock(mu_);
  for (auto& [name, held] : reservations_) held.changed = std::max(held.changed, now);
}

std::vector<wire::CapacityReservation> BaremetalStore::stale_reservations(
    TimePoint now, Duration grace, Duration idle,
    const std::function<bool(const std::string&, const std::string&)>& pending) const {
  std::lock_guard lock(mu_);
  std::vector<wire::CapacityReservation> out;
  for (const auto& [name, held] : reservations_) {
    if (now - held.changed < grace) continue;
    const std::string prefix = held.acr.pod_namespace + "-";
    if (held.acr.pod_namespace.empty() || name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) {
      continue;  // not named after a pod: not this daemon's to judge
    }
    if (!pending(held.acr.pod_namespace, name.substr(prefix.size())) ||
        (now - held.changed >= idle && !placing(held.acr))) {
      out.push_back(held.acr);
    }
  }
  return out;
}

void BaremetalStore::acs_listed(std::vector<wire::AvailableCapacity> acs) {
  std::lock_guard lock(mu_);
  acs_.clear();
  acs_by_id_.clear();
  for (auto& ac : acs) {
    std::string name = ac.name;
    acs_by_id_[ac.node_id].insert(name);
    acs_.insert_or_assign(std::move(name), std::move(ac));
  }
  acs_listed_ = true;
  publish_pools();
  place_holds();
}

void BaremetalStore::ac_changed(const std::string& name, std::optional<wire::AvailableCapacity> ac) {
  std::lock_guard lock(mu_);
  std::set<std::string, std::less<>> ids;
  if (auto it = acs_.find(name); it != acs_.end()) {
    ids.insert(it->second.node_id);
    if (auto by = acs_by_id_.find(it->second.node_id); by != acs_by_id_.end()) {
      by->second.erase(name);
      if (by->second.empty()) acs_by_id_.erase(by);
    }
  }
  if (ac) {
    ids.insert(ac->node_id);
    acs_by_id_[ac->node_id].insert(name);
    acs_.insert_or_assign(name, std::move(*ac));
  } else {
    acs_.erase(name);
  }
  if (acs_listed_) {
    std::map<std::string, std::vector<model::Pool>, std::less<>> pools;
    for (const auto& id : ids) {
      const std::string node = node_of_id(id);
      if (!node.empty()) pools[node] = pools_of_node(id);
    }
    capacity_.set_drive_pools_of(std::move(pools));
  }
  if (!reservations_.empty()) place_holds();
}

void BaremetalStore::reservations_listed(std::vector<wire::CapacityReservation> acrs) {
  std::lock_guard lock(mu_);
  const auto now = clock_.now();
  std::map<std::string, Held, std::less<>> next;
  for (auto& acr : acrs) {
    auto before = reservations_.find(acr.name);
    const bool same = before != reservations_.end() && before->second.acr == acr;
    std::string name = acr.name;
    next.insert_or_assign(std::move(name), Held{std::move(acr), same ? before->second.changed : now});
  }
  for (auto& [name, held] : reservations_) {
    if (held.sending) next.insert_or_assign(name, std::move(held));
  }
  reservations_ = std::move(next);
  place_holds();
}

void BaremetalStore::reservation_changed(const std::string& name, std::optional<wire::CapacityReservation> acr) {
  std::lock_guard lock(mu_);
  if (auto it = reservations_.find(name); it != reservations_.end() && it->second.sending) return;
  if (acr) {
    auto it = reservations_.find(name);
    if (it != reservations_.end() && it->second.acr == *acr) return;
    reservations_[name] = {std::move(*acr), clock_.now()};
  } else {
    reservations_.erase(name);
  }
  place_holds_of(name);
}

void BaremetalStore::volumes_listed(std::vector<wire::BaremetalVolume> volumes) {
  std::lock_guard lock(mu_);
  volumes_.clear();
  for (auto& v : volumes) {
    std::string name = v.name;
    volumes_.insert_or_assign(std::move(name), std::move(v));
  }
  spdlog::info("volumes: {} csi-baremetal volumes", volumes_.size());
  place_volumes();
}

void BaremetalStore::volume_changed(const std::string& name, std::optional<wire::BaremetalVolume> volume) {
  std::lock_guard lock(mu_);
  if (volume) {
    auto it = volumes_.find(name);
    if (it != volumes_.end() && it->second.node_id == volume->node_id &&
        it->second.storage_class == volume->storage_class) {
      it->second = std::move(*volume);
      return;
    }
    volumes_.insert_or_assign(name, std::move(*volume));
  } else if (!volumes_.erase(name)) {
    return;
  }
  place_volumes();
}

std::string BaremetalStore::pool_of(const wire::AvailableCapacity& ac) const {
  std::string pool = media_pool(ac.storage_class);
  if (auto group = ac.labels.find(kStorageGroupLabel); group != ac.labels.end() && !group->second.empty()) {
    pool += "/" + group->second;
  }
  return pool;
}

std::string BaremetalStore::node_of_id(const std::string& id) const {
  auto it = id_nodes_.find(id);
  return it == id_nodes_.end() ? std::string() : it->second;
}

std::vector<model::Pool> BaremetalStore::pools_of_node(const std::string& id) const {
  std::vector<model::Pool> node_pools;
  auto names = acs_by_id_.find(id);
  if (names == acs_by_id_.end()) return node_pools;
  for (const auto& name : names->second) {
    const wire::AvailableCapacity& ac = acs_.at(name);
    if (!policy::drive_class_known(ac.storage_class) || tainted(ac)) continue;
    const std::string pool_name = pool_of(ac);
    auto pool =
        std::find_if(node_pools.begin(), node_pools.end(), [&](const model::Pool& p) { return p.name == pool_name; });
    if (pool == node_pools.end()) {
      model::Pool fresh;
      fresh.name = pool_name;
      fresh.source = "csi-baremetal";
      fresh.drives = true;
      pool = node_pools.insert(node_pools.end(), std::move(fresh));
    }
    model::Device device;
    device.name = ac.name;
    device.capacity_bytes = ac.bytes;
    device.drive_class = ac.storage_class;
    pool->devices.push_back(std::move(device));
    pool->capacity_bytes = saturating_add(pool->capacity_bytes, ac.bytes);
    pool->published_bytes = pool->capacity_bytes;
  }
  return node_pools;
}

void BaremetalStore::publish_pools() {
  if (!acs_listed_) return;
  std::map<std::string, std::vector<model::Pool>, std::less<>> pools;
  for (const auto& [id, names] : acs_by_id_) {
    const std::string node = node_of_id(id);
    if (node.empty()) continue;
    auto node_pools = pools_of_node(id);
    if (!node_pools.empty()) pools[node] = std::move(node_pools);
  }
  auto classes = std::make_shared<StringTable>();
  ClassPools class_pools;
  for (const auto& [name, sc] : classes_) {
    auto param = sc.parameters.find(kStorageTypeParameter);
    const std::string type = policy::storage_type_of(param == sc.parameters.end() ? std::string_view() : param->second);
    (*classes)[name] = type;
    class_pools[name] = media_pool(type);
  }
  {
    std::lock_guard lock(view_mu_);
    drive_classes_ = std::move(classes);
  }
  capacity_.set_drive_pools(std::move(class_pools), std::move(pools));
}

BaremetalStore::Holds BaremetalStore::holds_of(const std::string& name, const wire::CapacityReservation& acr) const {
  Holds holds;
  if (acr.status != wire::kReservationReserved) return holds;
  std::map<std::string, state::Claim, std::less<>> by_node;
  for (const auto& request : acr.requests) {
    const std::string claim = acr.pod_namespace + "/" + request.name;
    auto selected = selected_.find(claim);
    for (const auto& ac_name : request.reservations) {
      auto ac = acs_.find(ac_name);
      if (ac == acs_.end()) continue;
      const std::string node = node_of_id(ac->second.node_id);
      if (node.empty() || (selected != selected_.end() && selected->second != node)) continue;
      const bool whole = !policy::volume_group_media(ac->second.storage_class);
      state::Claim& hold = by_node[node];
      hold.owner = name;
      hold.source = kHoldSource;
      hold.node = node;
      hold.allocation.volumes.push_back({request.name,
                                         pool_of(ac->second),
                                         ac_name,
                                         whole ? ac->second.bytes : policy::extent_aligned(request.bytes),
                                         claim,
                                         {}});
    }
  }
  for (auto& [node, hold] : by_node) holds.emplace_back(hold_prefix(name) + node, std::move(hold));
  return holds;
}

std::string BaremetalStore::hold_prefix(const std::string& name) { return "acr/" + name + "/"; }

void BaremetalStore::place_holds() {
  Holds holds;
  for (const auto& [name, held] : reservations_) {
    auto of = holds_of(name, held.acr);
    holds.insert(holds.end(), std::make_move_iterator(of.begin()), std::make_move_iterator(of.end()));
  }
  state_.replace_placements(kHoldSource, std::move(holds));
}

void BaremetalStore::place_holds_of(const std::string& name) {
  auto it = reservations_.find(name);
  state_.replace_placements(kHoldSource, it == reservations_.end() ? Holds{} : holds_of(name, it->second.acr),
                            hold_prefix(name));
}

void BaremetalStore::place_volumes() {
  std::vector<std::pair<std::string, state::Claim>> placed;
  for (const auto& [name, v] : volumes_) {
    const std::string node = node_of_id(v.node_id);
    if (node.empty()) continue;
    state::Claim claim;
    claim.owner = name;
    claim.source = kVolumeSource;
    claim.node = node;
    claim.allocation.volumes.push_back({name, media_pool(v.storage_class), {}, 0, {}, {}});
    placed.emplace_back("bmvolume/" + name, std::move(claim));
  }
  state_.replace_placements(kVolumeSource, std::move(placed));
}

}  // namespace extender::sources
