#include "extender/sources/kube_cluster.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <mutex>
#include <set>
#include <utility>

#include "baremetal_store.h"
#include "capacity_store.h"
#include "dra_store.h"
#include "drive_reservations.h"
#include "extender/common/logging.h"
#include "extender/kube/gpushare.h"
#include "extender/kube/pod_reader.h"
#include "extender/model/supply.h"
#include "extender/wire/dra_objects.h"
#include "extender/wire/k8s_objects.h"
#include "extender/wire/storage_objects.h"
#include "pod_group_sink.h"

namespace extender::sources {

struct KubeCluster::Lookups {
  mutable std::mutex mu;
  std::map<std::string, model::ClaimInfo, std::less<>> claims;    // "ns/name"
  std::map<std::string, model::Pod, std::less<>> pending;         // uid
  std::set<std::string, std::less<>> nominated;                   // uids of pending pods with a nominated node
  std::map<std::string, std::string, std::less<>> bound_members;  // uid -> "ns/group" of bound group members
  std::map<std::string, bool, std::less<>> default_classes;       // class name -> is default
  ChangeSignal claim_changes;                                     // notified after `claims` changed

  // Needs mu. `pending` changed for uid: keeps `nominated` in step.
  void pending_changed(const std::string& uid) {
    auto it = pending.find(uid);
    if (it != pending.end() && !it->second.nominated_node.empty()) {
      nominated.insert(uid);
    } else {
      nominated.erase(uid);
    }
  }
};

namespace {

using nlohmann::json;

std::string uid_of(const json& object) {
  const json* meta = object.is_object() && object.contains("metadata") ? &object["metadata"] : nullptr;
  if (!meta || !meta->is_object() || !meta->contains("uid") || !(*meta)["uid"].is_string()) return {};
  return (*meta)["uid"].get<std::string>();
}

class NodeSink : public kube::ReflectorSink {
 public:
  NodeSink(state::ClusterState& state, model::SupplyRules rules, CapacityStore& capacity, BaremetalStore* baremetal)
      : state_(state), rules_(std::move(rules)), capacity_(capacity), baremetal_(baremetal) {}

  void begin_list() override {
    listed_.clear();
    facts_.clear();
    ids_.clear();
  }
  void list_item(const json& object) override {
    if (auto node = decode(object)) {
      facts_[node->name] = node_facts(*node);
      if (baremetal_) ids_[node->name] = baremetal_->node_id(*node);
      listed_.push_back(model::supply_from_node(*node, rules_));
    }
  }
  void end_list() override {
    spdlog::info("nodes: {} listed", listed_.size());
    state_.replace_nodes(std::move(listed_));
    listed_.clear();
    capacity_.nodes_listed(std::move(facts_));
    facts_.clear();
    if (baremetal_) baremetal_->nodes_listed(std::move(ids_));
    ids_.clear();
  }
  void event(std::string_view type, const json& object) override {
    auto node = decode(object);
    if (!node) return;
    if (type == "DELETED") {
      state_.remove_node(node->name);
      capacity_.node_changed(node->name, std::nullopt);
      if (baremetal_) baremetal_->node_changed(node->name, {});
    } else {
      state_.upsert_nodes({model::supply_from_node(*node, rules_)});
      capacity_.node_changed(node->name, node_facts(*node));
      if (baremetal_) baremetal_->node_changed(node->name, baremetal_->node_id(*node));
    }
  }

 private:
  static std::optional<model::Node> decode(const json& object) {
    auto node = wire::decode_node(object);
    if (!node || node->name.empty()) {
      spdlog::warn("nodes: skipping an object that cannot be read: {}", node ? "no name" : node.message());
      return std::nullopt;
    }
    return std::move(*node);
  }

  state::ClusterState& state_;
  model::SupplyRules rules_;
  CapacityStore& capacity_;
  BaremetalStore* baremetal_;
  std::vector<model::NodeSupply> listed_;
  std::map<std::string, NodeFacts> facts_;
  StringTable ids_;
};

class PodSink : public kube::ReflectorSink {
 public:
  PodSink(state::ClusterState& state, KubeCluster::Lookups& lookups, std::vector<std::string> gpu_resources,
          model::GpuShareRule share, state::InFlightHolds* in_flight, const Clock& clock)
      : state_(state),
        lookups_(lookups),
        gpu_resources_(std::move(gpu_resources)),
        share_(std::move(share)),
        in_flight_(in_flight),
        clock_(clock) {}

  void begin_list() override {
    placed_.clear();
    pending_.clear();
    bound_members_.clear();
  }
  void list_item(const json& object) override {
    auto pod = decode(object);
    if (!pod) return;
    if (pod->node_name.empty()) {
      if (!finished(*pod)) pending_.emplace(pod->uid, std::move(*pod));
    } else if (!finished(*pod)) {
      if (!pod->pod_group.empty()) bound_members_.emplace(pod->uid, pod->namespace_name + "/" + pod->pod_group);
      placed_.emplace_back(pod->uid, claim_of(*pod, dra_served_resources(object)));
    }
  }
  void end_list() override {
    spdlog::info("pods: {} bound, {} pending", placed_.size(), pending_.size());
    state_.replace_placements("pod", std::move(placed_));
    placed_.clear();
    std::lock_guard lock(lookups_.mu);
    lookups_.pending = std::move(pending_);
    lookups_.bound_members = std::move(bound_members_);
    bound_members_.clear();
    lookups_.nominated.clear();
    for (const auto& [uid, pod] : lookups_.pending) {
      if (!pod.nominated_node.empty()) lookups_.nominated.insert(uid);
    }
    pending_.clear();
  }
  void event(std::string_view type, const json& object) override {
    if (type == "DELETED") {
      const std::string uid = uid_of(object);
      if (uid.empty()) return;
      state_.drop(uid);
      if (in_flight_) in_flight_->released(uid);
      std::lock_guard lock(lookups_.mu);
      lookups_.pending.erase(uid);
      lookups_.bound_members.erase(uid);
      lookups_.pending_changed(uid);
      return;
    }
    auto pod = decode(object);
    if (!pod) return;
    if (in_flight_ && pod->node_name.empty() && !pod->nominated_node.empty()) {
      in_flight_->nominated(pod->uid, pod->nominated_node, clock_.now());
    }
    if (pod->node_name.empty()) {
      // Not bound yet: a reservation from a bind in flight, if any, stays.
      std::lock_guard lock(lookups_.mu);
      const std::string uid = pod->uid;
      if (finished(*pod)) {
        lookups_.pending.erase(uid);
      } else {
        lookups_.pending[uid] = std::move(*pod);
      }
      lookups_.pending_changed(uid);
      return;
    }
    {
      std::lock_guard lock(lookups_.mu);
      lookups_.pending.erase(pod->uid);
      lookups_.pending_changed(pod->uid);
      if (!finished(*pod) && !pod->pod_group.empty()) {
        lookups_.bound_members[pod->uid] = pod->namespace_name + "/" + pod->pod_group;
      } else {
        lookups_.bound_members.erase(pod->uid);
      }
    }
    if (finished(*pod)) {
      state_.drop(pod->uid);
    } else {
      state_.place(pod->uid, claim_of(*pod, dra_served_resources(object)));
    }
  }

 private:
  static bool finished(const model::Pod& pod) { return pod.phase == "Succeeded" || pod.phase == "Failed"; }

  static std::optional<model::Pod> decode(const json& object) {
    auto pod = wire::decode_pod(object);
    if (!pod || pod->uid.empty()) {
      spdlog::warn("pods: skipping an object that cannot be read: {}", pod ? "no uid" : pod.message());
      return std::nullopt;
    }
    return std::move(*pod);
  }

  // The extended resources kube-scheduler served this pod from DRA devices
  // (status.extendedResourceClaimStatus): its claim holds them, not the device plugin's count.
  static std::set<std::string> dra_served_resources(const json& object) {
    std::set<std::string> out;
    auto dra = wire::decode_pod_dra(object);
    if (!dra) return out;
    for (const auto& m : dra->extended_mappings) out.insert(m.resource);
    return out;
  }

  state::Claim claim_of(const model::Pod& pod, const std::set<std::string>& from_dra) const {
    state::Claim claim;
    claim.owner = pod.display_name();
    claim.source = "pod";
    claim.node = pod.node_name;
    claim.terminating = pod.terminating;
    claim.priority = pod.priority;
    for (const auto& resource : gpu_resources_) {
      if (from_dra.contains(resource)) continue;
      auto n = model::effective_request(pod, resource);
      if (!n) {
        spdlog::warn("pods: {} on {}: {}; counted as holding no {}", pod.display_name(), pod.node_name, n.message(),
                     resource);
      } else if (*n > 0) {
        claim.allocation.gpus[resource] = *n;
      }
    }
    if (auto hold = share_hold(pod)) claim.allocation.gpu_devices.push_back(*hold);
    if (auto cpu = model::effective_request_milli(pod, "cpu")) claim.allocation.cpu_milli = *cpu;
    if (auto memory = model::effective_request(pod, "memory")) claim.allocation.memory_bytes = *memory;
    claim.allocation.pods = 1;
    return claim;
  }

  // The GPU share a bound pod holds: its request, on the device its gpushare index annotation
  // names, or kUnrecordedGpu (the state places it) when the pod records none.
  std::optional<model::GpuHold> share_hold(const model::Pod& pod) const {
    if (share_.memory_resource.empty()) return std::nullopt;
    auto units = model::effective_request(pod, share_.memory_resource);
    if (!units) {
      spdlog::warn("pods: {} on {}: {}; counted as holding no GPU share", pod.display_name(), pod.node_name,
                   units.message());
      return std::nullopt;
    }
    if (*units <= 0) return std::nullopt;
    const std::int64_t unit = share_.unit_bytes > 0 ? share_.unit_bytes : 1;
    const std::int64_t bytes = *units > INT64_MAX / unit ? INT64_MAX : *units * unit;
    return model::GpuHold{kube::recorded_gpu_share_index(pod).value_or(model::kUnrecordedGpu), bytes, false};
  }

  state::ClusterState& state_;
  KubeCluster::Lookups& lookups_;
  std::vector<std::string> gpu_resources_;
  model::GpuShareRule share_;
  std::vector<std::pair<std::string, state::Claim>> placed_;
  std::map<std::string, model::Pod, std::less<>> pending_;
  std::map<std::string, std::string, std::less<>> bound_members_;  // uid -> "ns/group" while listing
  state::InFlightHolds* in_flight_;
  const Clock& clock_;
};

class ClaimSink : public kube::ReflectorSink {
 public:
  ClaimSink(KubeCluster::Lookups& lookups, CapacityStore& capacity, BaremetalStore* baremetal,
            state::InFlightHolds* in_flight, const Clock& clock)
      : lookups_(lookups), capacity_(capacity), baremetal_(baremetal), in_flight_(in_flight), clock_(clock) {}

  void begin_list() override {
    listed_.clear();
    infos_.clear();
    selected_.clear();
  }
  void list_item(const json& object) override {
    auto pvc = decode(object);
    if (!pvc) return;
    const std::string name = pvc->namespace_name + "/" + pvc->name;
    if (!pvc->selected_node.empty()) selected_[name] = pvc->selected_node;
    infos_[name] = info_of(*pvc);
    listed_.push_back(std::move(*pvc));
  }
  void end_list() override {
    if (baremetal_) baremetal_->claims_listed(std::move(selected_));
    selected_.clear();
    capacity_.claims_listed(std::move(listed_));
    listed_.clear();
    {
      std::lock_guard lock(lookups_.mu);
      lookups_.claims = std::move(infos_);
      infos_.clear();
    }
    lookups_.claim_changes.notify();
  }
  void event(std::string_view type, const json& object) override {
    auto pvc = decode(object);
    if (!pvc) return;
    const std::string name = pvc->namespace_name + "/" + pvc->name;
    // The state counts the claim's placement before the lookup shows it (ClaimSource's contract).
    if (baremetal_) baremetal_->claim_changed(name, type == "DELETED" ? std::string() : pvc->selected_node);
    capacity_.claim_changed(*pvc, type == "DELETED");
    if (in_flight_ && type != "DELETED" && !pvc->selected_node.empty()) {
      in_flight_->claim_selected(name, pvc->selected_node, clock_.now());
    }
    {
      std::lock_guard lock(lookups_.mu);
      if (type == "DELETED") {
        lookups_.claims.erase(name);
      } else {
        lookups_.claims[name] = info_of(*pvc);
      }
    }
    lookups_.claim_changes.notify();
  }

 private:
  static std::optional<wire::Claim> decode(const json& object) {
    auto pvc = wire::decode_claim(object);
    if (!pvc || pvc->uid.empty()) {
      spdlog::warn("persistentvolumeclaims: skipping an object that cannot be read: {}",
                   pvc ? "no uid" : pvc.message());
      return std::nullopt;
    }
    return std::move(*pvc);
  }

  static model::ClaimInfo info_of(const wire::Claim& pvc) {
    model::ClaimInfo info = pvc.info;
    info.bound = info.bound || !pvc.selected_node.empty();
    info.node = pvc.selected_node;
    return info;
  }

  KubeCluster::Lookups& lookups_;
  CapacityStore& capacity_;
  BaremetalStore* baremetal_;
  state::InFlightHolds* in_flight_;
  const Clock& clock_;
  std::vector<wire::Claim> listed_;
  std::map<std::string, model::ClaimInfo, std::less<>> infos_;
  StringTable selected_;
};

class ClassSink : public kube::ReflectorSink {
 public:
  ClassSink(KubeCluster::Lookups& lookups, CapacityStore& capacity, BaremetalStore* baremetal)
      : lookups_(lookups), capacity_(capacity), baremetal_(baremetal) {}

  void begin_list() override { listed_.clear(); }
  void list_item(const json& object) override {
    if (auto sc = decode(object)) listed_.push_back(std::move(*sc));
  }
  void end_list() override {
    {
      std::lock_guard lock(lookups_.mu);
      lookups_.default_classes.clear();
      for (const auto& sc : listed_) lookups_.default_classes[sc.name] = sc.is_default;
    }
    if (baremetal_) baremetal_->classes_listed(listed_);
    capacity_.classes_listed(std::move(listed_));
    listed_.clear();
  }
  void event(std::string_view type, const json& object) override {
    auto sc = decode(object);
    if (!sc) return;
    {
      std::lock_guard lock(lookups_.mu);
      if (type == "DELETED") {
        lookups_.default_classes.erase(sc->name);
      } else {
        lookups_.default_classes[sc->name] = sc->is_default;
      }
    }
    const std::string name = sc->name;
    if (baremetal_) baremetal_->class_changed(name, type == "DELETED" ? nullptr : &*sc);
    capacity_.class_changed(name, type == "DELETED" ? std::nullopt : std::move(sc));
  }

 private:
  static std::optional<wire::StorageClass> decode(const json& object) {
    auto sc = wire::decode_storage_class(object);
    if (!sc || sc->name.empty()) {
      spdlog::warn("storageclasses: skipping an object that cannot be read: {}", sc ? "no name" : sc.message());
      return std::nullopt;
    }
    return std::move(*sc);
  }

  KubeCluster::Lookups& lookups_;
  CapacityStore& capacity_;
  BaremetalStore* baremetal_;
  std::vector<wire::StorageClass> listed_;
};

kube::ReflectorOptions options_for(const WatchOptions& watch, const WatchedKind& kind, const Clock& clock) {
  kube::ReflectorOptions o;
  o.resource = std::string(kind.resource);
  o.path = collection_path(kind);
  o.field_selector = std::string(kind.field_selector);
  o.watch_timeout = watch.watch_timeout;
  o.clock = &clock;
  return o;
}

// What the sinks write into.
struct Stores {
  state::ClusterState& state;
  const KubeClusterOptions& options;
  KubeCluster::Lookups& lookups;
  CapacityStore& capacity;
  DraStore& dra;
  BaremetalStore* baremetal;        // null: csi-baremetal is turned off
  state::InFlightHolds* in_flight;  // null: no pod groups in flight are held
  const Clock& clock;
};

// Each watched kind's sink: the decoder of its objects and the store they go to.
std::unique_ptr<kube::ReflectorSink> sink_for(Kind kind, const Stores& s) {
  switch (kind) {
    case Kind::kNodes: return std::make_unique<NodeSink>(s.state, s.options.supply, s.capacity, s.baremetal);
    case Kind::kPods:
      return std::make_unique<PodSink>(s.state, s.lookups, s.options.demand.gpu_resources, s.options.demand.share,
                                       s.in_flight, s.clock);
    case Kind::kClaims: return std::make_unique<ClaimSink>(s.lookups, s.capacity, s.baremetal, s.in_flight, s.clock);
    case Kind::kClasses: return std::make_unique<ClassSink>(s.lookups, s.capacity, s.baremetal);
    case Kind::kResourceSlices: return s.dra.slice_sink();
    case Kind::kResourceClaims: return s.dra.claim_sink();
    case Kind::kDeviceClasses: return s.dra.class_sink();
    case Kind::kCsiDrivers: return s.capacity.driver_sink();
    case Kind::kCapacities: return s.capacity.capacity_sink();
    case Kind::kVolumes: return s.capacity.volume_sink();
    case Kind::kAvailableCapacities: return s.baremetal->capacity_sink();
    case Kind::kCapacityReservations: return s.baremetal->reservation_sink();
    case Kind::kBaremetalVolumes: return s.baremetal->volume_sink();
    case Kind::kPodGroups: return std::make_unique<PodGroupSink>(s.in_flight, s.clock);
  }
  return nullptr;
}

void add_reason(std::string& reasons, const kube::Reflector& r, std::chrono::milliseconds stale_after, TimePoint now) {
  kube::ReflectorStatus st = r.status();
  if (!st.synced) {
    if (!reasons.empty()) reasons += "; ";
    reasons += r.resource() + " not synced yet";
    if (!st.last_error.empty()) reasons += " (" + st.last_error + ")";
  } else if (st.down_since && now - *st.down_since >= stale_after) {
    if (!reasons.empty()) reasons += "; ";
    const auto down = std::chrono::duration_cast<std::chrono::milliseconds>(now - *st.down_since).count();
    reasons += r.resource() + " watch down for " + std::to_string(down / 1000);
    if (down < 10'000) reasons += "." + std::to_string(down % 1000 / 100);
    reasons += "s";
    if (!st.last_error.empty()) reasons += " (last error: " + st.last_error + ")";
  }
}

}  // namespace

KubeCluster::KubeCluster(state::ClusterState& state, KubeClusterOptions options, kube::ApiClient& client,
                         state::InFlightHolds* in_flight, const Clock& clock)
    : client_(client),
      clock_(clock),
      stale_after_(options.watch.stale_after),
      fetch_timeout_(options.fetch_timeout),
      fetch_bucket_(kFetchesPerSecond, kFetchesPerSecond, clock.now()),
      lookups_(std::make_unique<Lookups>()),
      capacity_(std::make_unique<CapacityStore>(state, options.demand, options.capacity, clock)),
      dra_(std::make_unique<DraStore>(options.dra)) {
  if (options.baremetal.enabled) {
    baremetal_ = std::make_unique<BaremetalStore>(state, *capacity_, options.baremetal, clock);
    drives_ = std::make_unique<DriveReservations>(
        *baremetal_, client, [this](const std::string& ns, const std::string& name) { return pending_named(ns, name); },
        options.baremetal, std::chrono::milliseconds(3'000), clock);
  }
  const Stores stores{state, options, *lookups_, *capacity_, *dra_, baremetal_.get(), in_flight, clock};
  for (std::size_t i = 0; i < kOptionalGroups.size(); ++i) optional_[i].group = kOptionalGroups[i].group;
  if (!options.capacity.enabled) optional_kinds(KindGroup::kCapacity).state = kAbsent;
  if (!options.baremetal.enabled) optional_kinds(KindGroup::kBaremetal).state = kAbsent;
  for (const WatchedKind& kind : kWatchedKinds) {
    const bool required = kind.group == KindGroup::kRequired;
    if (!required && optional_kinds(kind.group).state != kProbing) continue;  // turned off
    auto sink = sink_for(kind.kind, stores);
    auto reflector = std::make_unique<kube::Reflector>(client, options_for(options.watch, kind, clock), *sink);
    sinks_.push_back(std::move(sink));
    (required ? reflectors_ : optional_kinds(kind.group).reflectors).push_back(std::move(reflector));
  }
}

KubeCluster::~KubeCluster() { stop(); }

void KubeCluster::start() {
  for (auto& r : reflectors_) threads_.emplace_back([reflector = r.get()] { reflector->run(); });
  for (OptionalKinds& kinds : optional_) {
    if (kinds.state == kProbing) kinds.probe = std::thread([this, &kinds] { probe(kinds); });
  }
  capacity_tick_ = std::thread([this] {
    std::unique_lock lock(optional_mu_);
    while (!stopping_) {
      clock_.wait(lock, wake_, clock_.now() + std::chrono::seconds(1), [this] { return stopping_; });
      if (stopping_) return;
      lock.unlock();
      capacity_->tick(clock_.now());
      collect_reservations();
      lock.lock();
    }
  });
}

void KubeCluster::stop() {
  {
    std::lock_guard lock(optional_mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& r : reflectors_) r->stop();
  for (OptionalKinds& kinds : optional_) {
    for (auto& r : kinds.reflectors) r->stop();
  }
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
  if (capacity_tick_.joinable()) capacity_tick_.join();
  for (OptionalKinds& kinds : optional_) {
    if (kinds.probe.joinable()) kinds.probe.join();
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(optional_mu_);
      threads = std::move(kinds.threads);
    }
    for (auto& t : threads) t.join();
  }
}

void KubeCluster::probe(OptionalKinds& kinds) {
  const OptionalGroup& group = optional_group(kinds.group);
  const WatchedKind first = kinds_of(kinds.group).front();
  std::chrono::milliseconds backoff{500};
  for (;;) {
    auto reply = client_.get(collection_path(first) + "?limit=1", std::chrono::seconds(10));
    if (reply && reply->status == 404) {
      kinds.state = kAbsent;
      spdlog::info("the API server does not serve {}: {}", group.name, group.without_it);
      return;
    }
    if (reply && reply->status == 403) {
      kinds.state = kAbsent;
      spdlog::warn("not permitted to list {}: {} until the daemon's role may {} (and the daemon restarts)",
                   first.resource, group.without_it, rights_phrase(kinds.group));
      return;
    }
    std::unique_lock lock(optional_mu_);
    if (stopping_) return;
    if (reply && reply->status == 200) {
      kinds.state = kServed;
      for (auto& r : kinds.reflectors) kinds.threads.emplace_back([reflector = r.get()] { reflector->run(); });
      return;
    }
    kinds.probe_error = reply ? "HTTP " + std::to_string(reply->status) : reply.message();
    spdlog::warn("{}: cannot tell whether the API server serves it: {}; retrying", group.name, kinds.probe_error);
    clock_.wait(lock, wake_, clock_.now() + backoff, [this] { return stopping_; });
    if (stopping_) return;
    backoff = std::min<std::chrono::milliseconds>(backoff * 2, std::chrono::seconds(30));
  }
}

KubeCluster::OptionalKinds& KubeCluster::optional_kinds(KindGroup group) {
  return const_cast<OptionalKinds&>(std::as_const(*this).optional_kinds(group));
}

const KubeCluster::OptionalKinds& KubeCluster::optional_kinds(KindGroup group) const {
  return *std::find_if(optional_.begin(), optional_.end(),
                       [group](const OptionalKinds& k) { return k.group == group; });
}

void KubeCluster::ready_reasons(const OptionalKinds& kinds, std::string& reasons) const {
  if (kinds.state == kServed) {
    for (const auto& r : kinds.reflectors) add_reason(reasons, *r, stale_after_, clock_.now());
  } else if (kinds.state == kProbing) {
    if (!reasons.empty()) reasons += "; ";
    reasons += std::string(optional_group(kinds.group).name) + " not probed yet";
    std::lock_guard lock(optional_mu_);
    if (!kinds.probe_error.empty()) reasons += " (" + kinds.probe_error + ")";
  }
}

std::shared_ptr<const model::DraInventory> KubeCluster::dra_inventory() const { return dra_->inventory(); }

std::vector<model::DeviceClass> KubeCluster::device_classes() const { return dra_->classes(); }

std::shared_ptr<const policy::DraClasses> KubeCluster::dra_classes() const { return dra_->compiled_classes(); }

std::shared_ptr<const model::DraInventory> KubeCluster::dra_snapshot() const {
  return dra_served() ? dra_inventory() : nullptr;
}

std::optional<std::string> KubeCluster::not_ready() const {
  std::string reasons;
  for (const auto& r : reflectors_) add_reason(reasons, *r, stale_after_, clock_.now());
  for (const OptionalKinds& kinds : optional_) ready_reasons(kinds, reasons);
  if (reasons.empty()) return std::nullopt;
  return reasons;
}

std::optional<model::ClaimInfo> KubeCluster::claim(const std::string& ns, const std::string& name) const {
  std::optional<model::ClaimInfo> info;
  {
    std::lock_guard lock(lookups_->mu);
    auto it = lookups_->claims.find(ns + "/" + name);
    if (it == lookups_->claims.end()) return std::nullopt;
    info = it->second;
  }
  // Bound to a local volume: held on the volume's node.
  if (info->node.empty() && !info->volume.empty()) info->node = capacity_->local_volume_node(info->volume);
  return info;
}

const ChangeSignal* KubeCluster::claim_changes() const { return &lookups_->claim_changes; }

std::optional<model::Pod> KubeCluster::pending_pod(const std::string& uid) const {
  std::lock_guard lock(lookups_->mu);
  auto it = lookups_->pending.find(uid);
  if (it == lookups_->pending.end()) return std::nullopt;
  return it->second;
}

std::vector<model::Pod> KubeCluster::nominated_pods() const {
  std::lock_guard lock(lookups_->mu);
  std::vector<model::Pod> out;
  out.reserve(lookups_->nominated.size());
  for (const auto& uid : lookups_->nominated) {
    if (auto it = lookups_->pending.find(uid); it != lookups_->pending.end()) out.push_back(it->second);
  }
  return out;
}

KubeCluster::GroupMembers KubeCluster::group_members(const std::string& ns, const std::string& group) const {
  const std::string key = ns + "/" + group;
  GroupMembers out;
  std::lock_guard lock(lookups_->mu);
  for (const auto& [uid, pod] : lookups_->pending) {
    if (pod.pod_group == group && pod.namespace_name == ns) ++out.pending;
  }
  for (const auto& [uid, member_of] : lookups_->bound_members) {
    if (member_of == key) ++out.bound;
  }
  return out;
}

Result<std::optional<model::Pod>> KubeCluster::fetch_pod(const std::string& ns, const std::string& name) const {
  {
    std::lock_guard lock(fetch_mu_);
    const auto now = clock_.now();
    if (fetching_ >= kFetchesInFlight || !fetch_bucket_.reserve(now, now)) {
      if (now - fetch_refusal_logged_ >= std::chrono::seconds(1)) {
        fetch_refusal_logged_ = now;
        spdlog::warn(
            "pod {}/{} is not in the watch and reads of unknown pods are at their limit ({} at once, {}/s): "
            "not judged in this request",
            printable(ns, 256), printable(name, 256), kFetchesInFlight, kFetchesPerSecond);
      }
      return Error{"reads of pods the watch has not shown are at their limit (" + std::to_string(kFetchesInFlight) +
                   " at once, " + std::to_string(kFetchesPerSecond) + "/s)"};
    }
    ++fetching_;
  }
  auto pod = kube::read_pod(client_, ns, name, fetch_timeout_);
  std::lock_guard lock(fetch_mu_);
  --fetching_;
  if (!pod) {
    spdlog::warn("reading pod {}/{}: {}", printable(ns, 256), printable(name, 256), pod.message());
    return Error{"reading it from the API server: " + pod.message()};
  }
  return pod;
}

std::string KubeCluster::default_storage_class() const {
  std::lock_guard lock(lookups_->mu);
  for (const auto& [name, is_default] : lookups_->default_classes) {
    if (is_default) return name;
  }
  return {};
}

std::shared_ptr<const std::map<std::string, std::string, std::less<>>> KubeCluster::capacity_class_pools() const {
  return capacity_->class_pools();
}

std::shared_ptr<const std::map<std::string, std::string, std::less<>>> KubeCluster::drive_classes() const {
  return baremetal_ ? baremetal_->drive_classes() : nullptr;
}

engine::DriveReserver* KubeCluster::drive_reserver() {
  return optional_kinds(KindGroup::kBaremetal).state == kAbsent ? nullptr : drives_.get();
}

void KubeCluster::set_write_terms(kube::RateLimiter* writes, const engine::Gate* gate) {
  if (drives_) drives_->set_terms(writes, gate);
}

bool KubeCluster::pending_named(const std::string& ns, const std::string& name) const {
  std::lock_guard lock(lookups_->mu);
  return std::any_of(lookups_->pending.begin(), lookups_->pending.end(),
                     [&](const auto& entry) { return entry.second.namespace_name == ns && entry.second.name == name; });
}

void KubeCluster::collect_reservations() {
  if (!drives_ || optional_kinds(KindGroup::kBaremetal).state != kServed || not_ready()) return;
  drives_->collect(clock_.now());
}

std::vector<PoolAccount> KubeCluster::pool_accounts() const { return capacity_->accounts(); }

std::vector<std::pair<std::string, kube::ReflectorStatus>> KubeCluster::watch_status() const {
  std::vector<std::pair<std::string, kube::ReflectorStatus>> out;
  for (const auto& r : reflectors_) out.emplace_back(r->resource(), r->status());
  for (const OptionalKinds& kinds : optional_) {
    if (kinds.state != kServed) continue;
    for (const auto& r : kinds.reflectors) out.emplace_back(r->resource(), r->status());
  }
  return out;
}

}  // namespace extender::sources
