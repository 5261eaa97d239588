#pragma once
// Extender: the four verbs over the cluster state. Decoded requests in, results to encode out;
// knows neither HTTP nor JSON. Filter and prioritize read one immutable snapshot; bind takes the
// node's bind lock for the re-check, the choice of devices and the reservation, and releases it
// before calling the Binder, which records those devices (a volume's on its claim, a GPU share's
// on the pod) and then creates the Binding (kubernetes mode), or makes the reservation the
// placement in memory (standalone: sources::LocalBinder); one bind path for both. A GPU resource
// a DeviceClass maps is decided on a DRA node by policy/dra_fit.h (filter and bind alike; the bind
// then reserves no device-plugin GPUs for it). What it asks of the world around it comes through
// ports.h. The verbs are in extender.cpp, except preempt (preempt.cpp). Thread-safe.
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "extender/common/clock.h"
#include "extender/engine/binder.h"
#include "extender/engine/options.h"
#include "extender/engine/ports.h"
#include "extender/engine/refusal.h"
#include "extender/model/gpu_model_supply.h"
#include "extender/policy/dra_fit.h"
#include "extender/policy/fit.h"
#include "extender/state/cluster_state.h"
#include "extender/state/demand_cache.h"
#include "extender/state/filter_verdicts.h"
#include "extender/state/in_flight_holds.h"
#include "extender/state/unseen_placements.h"
#include "extender/wire/extender_args.h"
#include "extender/wire/results.h"
#include "extender/wire/verb_args.h"

namespace extender::engine {

class FilterPass;  // filter_pass.h, private to the engine

// What a verb did, for the request log line.
struct Summary {
  std::string pod;  // namespace/name
  std::size_t nodes_in = 0;
  std::size_t nodes_out = 0;
  const char* form = "";  // "names" or "objects": how the candidates came (nodeCacheCapable or not)
  std::string note;       // why the verb could not evaluate, if so
};

// The node names in an answer are views into its request: into the request's body, which the
// caller keeps while it uses the answer, or into the names the request owns (escaped names, names
// given by set_node_names), which the answer keeps alive itself (owned_names). A filter's failed
// names may also be views into the snapshot's own copy of each name, which it keeps (snapshot).
struct FilterAnswer {
  wire::FilterResult result;
  Summary summary;
  // Set when the error is the request's: its pod is not one the verb may act on (actionable_pod).
  Refusal refusal = Refusal::kNone;
  std::shared_ptr<const std::deque<std::string>> owned_names;
  std::optional<state::Snapshot> snapshot;
};
struct PrioritizeAnswer {
  std::vector<wire::HostScore> scores;
  Summary summary;
  std::shared_ptr<const std::deque<std::string>> owned_names;
};

struct BindAnswer {
  std::string error;  // "" on success
  Refusal refusal = Refusal::kNone;
  Summary summary;
};
struct PreemptAnswer {
  std::map<std::string, wire::MetaVictims> victims;
  // Set when this replica may not vet victims (a standby): the call fails (HTTP 503), so that
  // the scheduler's preemption for the pod fails and is retried rather than approved unvetted.
  std::string error;
  Refusal refusal = Refusal::kNone;
  Summary summary;
};

// Which pods filter and prioritize decide. kManaged (/filter, /prioritize; the entry with
// managedResources, which kube-scheduler calls for pods that request a GPU resource): pods that
// need a GPU, a GPU share or a managed volume. kUnmanaged (/filter-unmanaged,
// /prioritize-unmanaged; the every-pod entry, without managedResources, which kube-scheduler calls
// for every pod): the pods the first entry does not see, those that need no GPU: pods that need
// only managed volumes are filtered and scored, pods that need nothing managed are scored (the
// packing policy places their CPU and memory with the GPU shapes in mind) and pass every node.
// Pods out of a verb's scope pass every node at once and get no scores.
enum class PodScope { kManaged, kUnmanaged };

// What the engine works with; it owns none of it, and each outlives the engine.
struct ExtenderDeps {
  state::ClusterState* state = nullptr;
  state::DemandCache* demands = nullptr;
  // Standalone: remembers request nodes. Null in kubernetes mode (the watch is the only source).
  NodeSink* request_nodes = nullptr;
  // Makes a placement official: kube::ApiBinder (kubernetes mode) or sources::LocalBinder
  // (standalone). Required.
  Binder* binder = nullptr;
  // Kubernetes mode: the pods the API server has; /bind and /preempt act only on those. Null in
  // standalone mode: /bind acts on pods remembered from /filter and /prioritize.
  const PodSource* pods = nullptr;
  // Kubernetes mode: claims and the default StorageClass. Null in standalone mode.
  const ClaimSource* claims = nullptr;
  // Kubernetes mode: the GPUs DRA offers and the DeviceClasses (policy/dra_fit.h decides with
  // them). Null, or a null inventory: every node is decided from its device-plugin allocatable.
  const DraSource* dra = nullptr;
  // Null: this process is always ready and always decides.
  const Gate* gate = nullptr;
  // Null: the process's steady clock.
  const Clock* clock = nullptr;
  // /filter records the nodes that passed for each pod; /bind refuses a node that is not among
  // them (kube-scheduler sent it and the daemon's filter passed it). Null: not checked.
  state::FilterVerdicts* verdicts = nullptr;
  // csi-baremetal: /filter reserves the drives of the nodes it passes. Null: nothing is reserved.
  DriveReserver* drives = nullptr;
  // Pod groups in flight: /filter narrows a group member that needs something only the daemon
  // accounts to its best node and holds it there (engine/group_hold.h). Null: no narrowing.
  state::InFlightHolds* in_flight = nullptr;
};

// Who may bind: in kubernetes mode /bind and /preempt act only for a pod that the API server
// shows pending (unbound, not terminating) under the namespace and name the request gives, whose
// spec.schedulerName is one of kubernetes.scheduler_names and that needs a managed resource; in
// standalone mode the pod (remembered from /filter or /prioritize) must need a managed resource
// and carry that namespace and name. In both modes /bind then places the pod only on a node
// kube-scheduler could have chosen for it (its nodeSelector, required node affinity, taints,
// cordon, and free cpu, memory and pods; policy/node_eligibility.h), checked under the node's
// lock before capacity is reserved, and, with `verdicts`, only on a node that passed the pod's
// latest /filter: one kube-scheduler sent, so one that passed all of its own filters. Anything else is refused with a
// reason (BindAnswer::refusal).
class Extender {
 public:
  Extender(ExtenderOptions options, ExtenderDeps deps);

  // Filter and prioritize give up with an error past `deadline` (a partial answer would be wrong).
  // A pod with claims still to be placed first waits, briefly, for the placements of the earlier
  // such pods the same `caller` (the request's peer address) filtered to show on their claims
  // (state/unseen_placements.h).
  FilterAnswer filter(const wire::ExtenderArgs& args, std::optional<TimePoint> deadline = {},
                      PodScope scope = PodScope::kManaged, const std::string& caller = {});
  PrioritizeAnswer prioritize(const wire::ExtenderArgs& args, std::optional<TimePoint> deadline = {},
                              PodScope scope = PodScope::kManaged);
  BindAnswer bind(const wire::BindingArgs& args);
  PreemptAnswer preempt(const wire::PreemptionArgs& args);

  // Removes a pod's placement or reservation (standalone admin); false when there was none.
  bool remove_pod(const std::string& uid);

  // The recent mix of task shapes: each pod counted once, at its first /filter or /prioritize (a
  // pod that needs no GPU as its CPU and memory), in a window of scoring.fragmentation_window pods
  // over scoring.fragmentation_prior, weighed by the cluster's GPUs by model (gpu_model_count).
  policy::ShapeMix shape_mix(const state::Snapshot& snapshot) const;

 private:
  Result<model::PodDemand> demand_of(const model::Pod& pod);
  static bool in_scope(const model::PodDemand& demand, PodScope scope);
  void await_unseen_placements(const std::string& caller, const model::PodDemand& demand,
                               std::optional<TimePoint> deadline);
  // Kubernetes mode, a pod with volumes to place: replaces `demand` (the request's) by the demand
  // of the pod the API server has pending under that uid, namespace and name, so that no wait,
  // hold or reservation follows what a caller wrote; why not (and `refusal`) when there is no
  // such pod.
  std::optional<std::string> volumes_of_pending_pod(const model::Pod& request_pod, Result<model::PodDemand>& demand,
                                                    Refusal& refusal);
  // csi-baremetal: reserves the drives the pod's volumes take on the passed nodes (a demand
  // volumes_of_pending_pod read from the API server's pod) and keeps in `passed` the nodes the
  // reservation holds (hold_drives); the filter's error, if any.
  std::optional<std::string> reserve_drives(const model::PodDemand& demand, const FilterPass& judged,
                                            std::span<const std::string_view> names, std::vector<std::uint32_t>& passed,
                                            wire::FilterResult& r);
  // What kube-scheduler decided but has not published (docs/kubernetes.md, "Pod groups"): the pods
  // nominated to the passed nodes count (count_nominated), then a pod group's member is narrowed
  // and held (hold_group_member), or, refused, may end its group's cycle; whether it was held.
  bool judge_in_flight(const model::Pod& pod, const model::PodDemand& demand, const policy::DraFit* dra,
                       const state::Snapshot& snapshot, std::span<const std::string_view> names,
                       std::vector<std::uint32_t>& passed, wire::FilterResult& r, TimePoint now);
  // A pod group's member that passed no node: its group's cycle ends when the gang can no longer
  // reach its minimum (InFlightHolds::refused).
  void refuse_group_member(const model::Pod& pod, const model::PodDemand& demand);
  // A pod group's member: narrows `passed` to one node and holds the member there; whether it did.
  bool hold_group_member(const model::Pod& pod, const model::PodDemand& demand, const policy::DraFit* dra,
                         const state::Snapshot& snapshot, std::span<const std::string_view> names,
                         std::vector<std::uint32_t>& passed, TimePoint now);
  // Refuses the passed nodes where the pod does not fit once the pods nominated there count
  // (engine/nominated_pods.h; kubernetes mode).
  void count_nominated(const model::Pod& pod, const model::PodDemand& demand, const policy::DraFit* dra,
                       const state::Snapshot& snapshot, std::span<const std::string_view> names,
                       std::vector<std::uint32_t>& passed, wire::FilterResult& r, TimePoint now);
  // Records the nodes that passed (FilterVerdicts).
  void record_verdict(const model::PodDemand& demand, std::span<const std::string_view> names,
                      const std::vector<std::uint32_t>& passed, TimePoint now);
  // The DRA view for one request: null when DRA is not served or the pod asks nothing a
  // DeviceClass backs (then policy::check_fit decides alone).
  std::unique_ptr<const policy::DraFit> dra_fit(const model::PodDemand& demand) const;
  std::optional<std::string> not_ready() const;
  // Why /bind may not place on args.node: it did not pass the pod's latest /filter (with verdicts).
  std::optional<std::string> not_filtered(const wire::BindingArgs& args, TimePoint now) const;
  // `deadline`, or the leadership term's write fence when that comes first.
  Deadline fenced(Deadline deadline) const;
  // Kubernetes mode: the pending pod `uid` as the API server has it, or why it may not be acted on.
  Result<model::Pod> actionable_pod(const std::string& uid, const std::string& ns, const std::string& name,
                                    Refusal& refusal) const;
  // /bind's steps. The demand of the pod to bind, or why it may not be bound (and `refusal`).
  Result<model::PodDemand> bind_demand(const wire::BindingArgs& args, TimePoint now, Refusal& refusal);
  // What a bind records besides the Binding: the devices of its volumes' claims, its GPU share.
  struct BindRecords {
    std::vector<std::pair<std::string, std::string>> claim_devices;
    std::optional<GpuShareAssignment> share;
  };
  // Under the node's bind lock, reserves the pod's fit on args.node; the answer when the bind ends
  // there (placed already, or refused).
  std::optional<BindAnswer> reserve_for_bind(const wire::BindingArgs& args, const model::PodDemand& demand,
                                             TimePoint now, BindAnswer& answer, BindRecords& records);
  // Writes the records and the Binding through the Binder; why it failed, empty when it did not.
  std::string write_bind(const wire::BindingArgs& args, const BindRecords& records, Deadline deadline);

  model::DemandRules demand_rules_;
  policy::ScoringRules scoring_;
  Duration reservation_ttl_;
  std::chrono::milliseconds bind_timeout_;  // the Binder's records and Binding together
  std::vector<std::string> scheduler_names_;
  ExtenderDeps deps_;
  const Clock& clock_;
  // Remembers the pod's demand and, for a pod not remembered yet, adds its shape to the window.
  // The every-pod verbs (kUnmanaged) never replace a demand remembered before (standalone /bind
  // reads it).
  void remember(const model::PodDemand& demand, TimePoint now, PodScope scope);
  // The pod's shape for the window: its models narrowed to those of the nodes that could give it
  // its GPUs when a DeviceClass backs a resource it asks (policy::gpu_models_served).
  policy::GpuShape window_shape(const model::PodDemand& demand) const;
  policy::GpuPlacement gpu_placement(policy::ShapeMix& mix, const state::Snapshot& snapshot) const;
  // The GPU a share pod takes in `allocation` (what its Binder records on the pod); nullopt for
  // a pod that asks no share.
  std::optional<GpuShareAssignment> share_assignment(const model::PodDemand& pod, const model::NodeSupply& node,
                                                     const model::Allocation& allocation) const;
  // The snapshot's GPUs by model with DRA's GPUs (engine/gpu_model_count.h), computed again only
  // when either changed.
  std::shared_ptr<const model::GpuModelSupply> gpu_model_count(const state::Snapshot& snapshot) const;
  struct GpuModelCount {
    std::shared_ptr<const model::GpuModelSupply> device_plugin;
    std::shared_ptr<const model::DraInventory> dra;
    std::shared_ptr<const model::GpuModelSupply> both;
  };
  mutable std::mutex gpu_model_count_mu_;
  mutable GpuModelCount gpu_model_count_;
  mutable std::mutex shapes_mu_;
  policy::ShapeWindow shapes_;
  state::UnseenPlacements unseen_;
};

}  // namespace extender::engine
