#pragma once
// EngineBuilder: the one place an Extender is wired from its parts, for the daemon, the simulator,
// the tests and the benches. The parts every engine needs are the constructor's (its options, the
// cluster state, the demand cache, the binder); the optional ones default to what ExtenderDeps
// documents for null (standalone: no pod, claim or DRA source, always ready, the process's clock).
// cluster() sets the pod, claim and DRA sources and the readiness gate at once from one source
// that implements all four ports (sources::KubeCluster, or a test's fake), as kubernetes mode
// wires them; a later gate() overrides the gate (the daemon's adds leadership).
//
// Ownership: the builder and the Extender it builds hold pointers only; every part must outlive
// the Extender. Not thread-safe; build on one thread, then share the Extender as it documents.
#include <memory>
#include <utility>

#include "extender/engine/extender.h"

namespace extender::engine {

class EngineBuilder {
 public:
  EngineBuilder(ExtenderOptions options, state::ClusterState& state, state::DemandCache& demands, Binder& binder)
      : options_(std::move(options)) {
    deps_.state = &state;
    deps_.demands = &demands;
    deps_.binder = &binder;
  }

  // Kubernetes mode: `cluster` is the pods, claims, DRA inventory and readiness gate (null: none).
  template <class Cluster>
  EngineBuilder& cluster(const Cluster* cluster) {
    deps_.pods = cluster;
    deps_.claims = cluster;
    deps_.dra = cluster;
    deps_.gate = cluster;
    return *this;
  }
  EngineBuilder& request_nodes(NodeSink* sink) { return set(deps_.request_nodes, sink); }
  EngineBuilder& pods(const PodSource* pods) { return set(deps_.pods, pods); }
  EngineBuilder& claims(const ClaimSource* claims) { return set(deps_.claims, claims); }
  EngineBuilder& dra(const DraSource* dra) { return set(deps_.dra, dra); }
  EngineBuilder& gate(const Gate* gate) { return set(deps_.gate, gate); }
  EngineBuilder& clock(const Clock* clock) { return set(deps_.clock, clock); }
  EngineBuilder& verdicts(state::FilterVerdicts* verdicts) { return set(deps_.verdicts, verdicts); }
  EngineBuilder& drives(DriveReserver* drives) { return set(deps_.drives, drives); }
  EngineBuilder& in_flight(state::InFlightHolds* holds) { return set(deps_.in_flight, holds); }

  const ExtenderOptions& options() const { return options_; }
  const ExtenderDeps& deps() const { return deps_; }
  // The Extender of these parts, in place (a member, a local) or on the heap.
  Extender build() const { return Extender(options_, deps_); }
  std::unique_ptr<Extender> build_owned() const { return std::make_unique<Extender>(options_, deps_); }

 private:
  template <class T>
  EngineBuilder& set(T*& slot, T* part) {
    slot = part;
    return *this;
  }

  ExtenderOptions options_;
  ExtenderDeps deps_;
};

}  // namespace extender::engine
