#pragma once
// The engine wired for a test as the daemon wires it: standalone (placements through a
// LocalBinder, pods remembered from filter and prioritize) or kubernetes mode (the test's binder,
// pods from `pods`, claims from `claims`), with a gate the test can close and DRA from `dra`.
// Set the fakes before building the engine; the harness keeps every engine it builds.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "extender/config/config.h"
#include "extender/engine/engine_builder.h"
#include "extender/engine/ports.h"
#include "extender/sources/inventory.h"
#include "extender/sources/local_binder.h"
#include "extender/sources/request_nodes.h"
#include "extender/state/cluster_state.h"
#include "extender/state/demand_cache.h"

namespace extender::testing {

// A pod "pod-UID" in namespace "ml" whose one container requests `gpus` nvidia.com/gpu (none: null).
inline model::Pod gpu_pod(const std::string& uid, const char* gpus) {
  model::Pod p;
  p.uid = uid;
  p.name = "pod-" + uid;
  p.namespace_name = "ml";
  model::Container c;
  c.name = "main";
  if (gpus) c.requests["nvidia.com/gpu"] = gpus;
  p.containers.push_back(c);
  return p;
}

// Pending pods by uid; `fetch` (when set) answers for the others.
class FakePods final : public engine::PodSource {
 public:
  std::optional<model::Pod> pending_pod(const std::string& uid) const override {
    auto it = pending.find(uid);
    if (it == pending.end()) return std::nullopt;
    return it->second;
  }
  Result<std::optional<model::Pod>> fetch_pod(const std::string& ns, const std::string& name) const override {
    if (!fetch) return std::optional<model::Pod>{};
    return fetch(ns, name);
  }
  std::vector<model::Pod> nominated_pods() const override { return nominated; }
  GroupMembers group_members(const std::string& ns, const std::string& group) const override {
    GroupMembers out;
    for (const auto& [uid, pod] : pending) out.pending += pod.namespace_name == ns && pod.pod_group == group ? 1 : 0;
    if (auto it = bound_members.find(ns + "/" + group); it != bound_members.end()) out.bound = it->second;
    return out;
  }
  std::map<std::string, model::Pod> pending;
  std::map<std::string, std::size_t> bound_members;  // "ns/group" -> members bound
  std::vector<model::Pod> nominated;                 // what nominated_pods() answers
  std::function<Result<std::optional<model::Pod>>(const std::string& ns, const std::string& name)> fetch;
};

class FakeClaims final : public engine::ClaimSource {
 public:
  std::optional<model::ClaimInfo> claim(const std::string& ns, const std::string& name) const override {
    if (!lookup) return std::nullopt;
    return lookup(ns, name);
  }
  std::string default_storage_class() const override { return default_class; }
  const ChangeSignal* claim_changes() const override { return &changes; }
  std::function<std::optional<model::ClaimInfo>(const std::string& ns, const std::string& name)> lookup;
  std::string default_class;
  ChangeSignal changes;  // a test that changes what lookup answers notifies it
};

// DRA as the test sets it: `inventory` null (the default) is "DRA not served"; `classes` are
// compiled at each call (a test may change them between calls).
class FakeDra final : public engine::DraSource {
 public:
  std::shared_ptr<const model::DraInventory> dra_snapshot() const override { return inventory; }
  std::vector<model::DeviceClass> dra_device_classes() const override { return classes; }
  std::shared_ptr<const policy::DraClasses> dra_classes() const override {
    return std::make_shared<const policy::DraClasses>(classes);
  }
  std::shared_ptr<const model::DraInventory> inventory;
  std::vector<model::DeviceClass> classes;
};

// Open unless a function says why not.
class FakeGate final : public engine::Gate {
 public:
  std::optional<std::string> not_ready() const override { return ready ? ready() : std::nullopt; }
  std::optional<std::string> not_leading() const override { return leading ? leading() : std::nullopt; }
  std::optional<std::chrono::steady_clock::time_point> write_fence() const override { return fence; }
  std::function<std::optional<std::string>()> ready;
  std::function<std::optional<std::string>()> leading;
  std::optional<std::chrono::steady_clock::time_point> fence;  // none: no election
};

struct EngineHarness {
  explicit EngineHarness(config::Config c = {}, std::size_t demand_capacity = 100)
      : cfg(std::move(c)), demands(demand_capacity, std::chrono::minutes(10)) {}

  // Adds the inventory's nodes to the state, read with cfg's GPU resources and share rule.
  void load_inventory(std::string_view yaml) {
    auto inv = sources::parse_inventory(std::string(yaml), "inv", cfg.gpu.resources, cfg.gpu.share);
    ASSERT_TRUE(inv) << inv.message();
    state.upsert_nodes(*inv);
  }
  // Standalone: binds through the LocalBinder; `request_nodes` remembers Nodes-form nodes.
  engine::Extender& standalone(sources::RequestNodes* request_nodes = nullptr) {
    return *engines.emplace_back(builder(local_binder).request_nodes(request_nodes).build_owned());
  }
  // Kubernetes mode: binds through `binder`; pods from `pods`; claims from `claims` once its lookup
  // is set (before, claims are assumed, as with no claim source).
  engine::Extender& kubernetes(engine::Binder& binder) {
    return *engines.emplace_back(builder(binder).pods(&pods).claims(claims.lookup ? &claims : nullptr).build_owned());
  }
  // The parts every engine of this harness shares (its state, demands, gate and DRA source),
  // binding through `binder`; for a test that wires more.
  engine::EngineBuilder builder(engine::Binder& binder) {
    return engine::EngineBuilder(cfg.extender_options(), state, demands, binder).gate(&gate).dra(&dra);
  }

  config::Config cfg;
  state::ClusterState state;
  state::DemandCache demands;
  sources::LocalBinder local_binder{state};
  FakePods pods;
  FakeClaims claims;
  FakeGate gate;
  FakeDra dra;
  std::vector<std::unique_ptr<engine::Extender>> engines;  // what standalone() and kubernetes() built
};

}  // namespace extender::testing
