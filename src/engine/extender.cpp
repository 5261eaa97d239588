#include "extender/engine/extender.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <span>

#include "drive_choices.h"
#include "extender/policy/fit.h"
#include "extender/policy/gpu_model_constraint.h"
#include "extender/policy/node_eligibility.h"
#include "extender/policy/packing.h"
#include "extender/policy/score.h"
#include "filter_pass.h"
#include "gpu_model_count.h"
#include "group_hold.h"
#include "node_fit.h"
#include "nominated_pods.h"

namespace extender::engine {

Extender::Extender(ExtenderOptions options, ExtenderDeps deps)
    : demand_rules_(std::move(options.demand)),
      scoring_(options.scoring),
      reservation_ttl_(options.reservations.reservation_ttl),
      bind_timeout_(options.bind.bind_timeout),
      scheduler_names_(std::move(options.bind.scheduler_names)),
      deps_(std::move(deps)),
      clock_(deps_.clock ? *deps_.clock : steady_clock()),
      shapes_(static_cast<std::size_t>(scoring_.fragmentation_window), scoring_.fragmentation_prior,
              scoring_.fragmentation_size_exponent),
      unseen_(options.placement_wait) {}

void Extender::remember(const model::PodDemand& demand, TimePoint now, PodScope scope) {
  const bool known = deps_.demands->find(demand.uid, now).has_value();
  if (known && scope != PodScope::kManaged) return;  // what /bind reads comes from the GPU entry's verbs
  deps_.demands->remember(demand, now);
  if (known) return;
  const policy::GpuShape shape = window_shape(demand);
  std::lock_guard lock(shapes_mu_);
  shapes_.add(shape);
}

policy::GpuShape Extender::window_shape(const model::PodDemand& demand) const {
  policy::GpuShape shape = policy::shape_of(demand);
  const auto dra = dra_fit(demand);
  if (!dra) return shape;
  const state::Snapshot snapshot = deps_.state->snapshot();
  std::vector<const model::NodeSupply*> nodes;
  nodes.reserve(snapshot.nodes().size());
  for (const auto& [name, node] : snapshot.nodes()) nodes.push_back(&node->supply);
  shape.models = policy::gpu_models_of_both(shape.models, policy::gpu_models_served(demand, *dra, nodes));
  return shape;
}

std::shared_ptr<const model::GpuModelSupply> Extender::gpu_model_count(const state::Snapshot& snapshot) const {
  auto device_plugin = snapshot.shared_gpu_models();
  auto dra = deps_.dra ? deps_.dra->dra_snapshot() : nullptr;
  if (!dra || dra->nodes.empty()) return device_plugin;
  std::lock_guard lock(gpu_model_count_mu_);
  if (gpu_model_count_.device_plugin != device_plugin || gpu_model_count_.dra != dra) {
    auto both = std::make_shared<const model::GpuModelSupply>(gpu_models_with_dra(snapshot, *dra));
    gpu_model_count_ = {std::move(device_plugin), std::move(dra), std::move(both)};
  }
  return gpu_model_count_.both;
}

policy::ShapeMix Extender::shape_mix(const state::Snapshot& snapshot) const {
  const auto gpus = gpu_model_count(snapshot);
  std::lock_guard lock(shapes_mu_);
  return shapes_.mix(*gpus);
}

std::optional<GpuShareAssignment> Extender::share_assignment(const model::PodDemand& pod, const model::NodeSupply& node,
                                                             const model::Allocation& allocation) const {
  if (pod.gpu_share_bytes <= 0) return std::nullopt;
  const std::int64_t unit = demand_rules_.share.unit_bytes > 0 ? demand_rules_.share.unit_bytes : 1;
  for (const auto& hold : allocation.gpu_devices) {
    if (hold.whole) continue;
    return GpuShareAssignment{hold.index, pod.gpu_share_bytes / unit, node.gpu_devices.memory_bytes / unit};
  }
  return std::nullopt;
}

policy::GpuPlacement Extender::gpu_placement(policy::ShapeMix& mix, const state::Snapshot& snapshot) const {
  if (policy::packing_policy(scoring_.packing).needs_shape_mix) mix = shape_mix(snapshot);
  return {scoring_.packing, &mix};
}

Result<model::Pod> Extender::actionable_pod(const std::string& uid, const std::string& ns, const std::string& name,
                                            Refusal& refusal) const {
  const std::string who = ns + "/" + name + " (uid " + uid + ")";
  std::optional<model::Pod> pod = deps_.pods->pending_pod(uid);
  if (!pod) {
    auto fetched = deps_.pods->fetch_pod(ns, name);
    if (!fetched) {
      refusal = Refusal::kUnknownPod;
      return Error{"pod " + who + " is not in the watch yet and could not be read: " + fetched.message()};
    }
    pod = std::move(*fetched);
    if (pod && pod->uid != uid) pod.reset();
  }
  if (!pod) {
    refusal = Refusal::kUnknownPod;
    return Error{"pod " + who + " is not a pod the API server has"};
  }
  if (pod->namespace_name != ns || pod->name != name) {
    refusal = Refusal::kNameMismatch;
    return Error{"pod " + who + ": the uid belongs to another pod"};
  }
  if (pod->terminating) {
    refusal = Refusal::kTerminating;
    return Error{"pod " + who + " is being deleted"};
  }
  if (!pod->node_name.empty()) {
    refusal = Refusal::kBound;
    return Error{"pod " + who + " is already bound to node " + pod->node_name};
  }
  if (pod->phase == "Succeeded" || pod->phase == "Failed") {
    refusal = Refusal::kUnknownPod;
    return Error{"pod " + who + " has finished"};
  }
  if (std::find(scheduler_names_.begin(), scheduler_names_.end(), pod->scheduler_name) == scheduler_names_.end()) {
    refusal = Refusal::kOtherScheduler;
    return Error{"pod " + who + " belongs to scheduler \"" + pod->scheduler_name +
                 "\", which is not in kubernetes.scheduler_names"};
  }
  return std::move(*pod);
}

std::optional<std::string> Extender::not_ready() const {
  if (!deps_.gate) return std::nullopt;
  if (auto why = deps_.gate->not_ready()) return why;
  return deps_.gate->not_leading();
}

Result<model::PodDemand> Extender::demand_of(const model::Pod& pod) {
  const model::DemandRules* rules = &demand_rules_;
  model::DemandRules with_cluster_default;
  model::ClaimLookup claims;
  if (deps_.claims) {
    auto capacity_pools = pod.volumes.empty() ? nullptr : deps_.claims->capacity_class_pools();
    if (demand_rules_.default_class.empty() || (capacity_pools && !capacity_pools->empty())) {
      with_cluster_default = demand_rules_;
      if (demand_rules_.default_class.empty())
        with_cluster_default.default_class = deps_.claims->default_storage_class();
      if (capacity_pools) with_cluster_default.pool_by_class.insert(capacity_pools->begin(), capacity_pools->end());
      if (auto drives = deps_.claims->drive_classes()) {
        with_cluster_default.drive_class_by_class.insert(drives->begin(), drives->end());
      }
      rules = &with_cluster_default;
    }
    claims = [source = deps_.claims](const std::string& ns, const std::string& name) {
      return source->claim(ns, name);
    };
  }
  auto demand = model::compute_demand(pod, *rules, claims);
  if (!demand) return Error{"pod " + pod.display_name() + ": " + demand.message()};
  for (const auto& v : demand->volumes) {
    if (v.assumed) {
      spdlog::debug(
          "pod {}: volume {} is a PersistentVolumeClaim, which standalone mode cannot resolve; "
          "counted as {} bytes in pool {}",
          pod.display_name(), v.volume, v.bytes, v.pool);
    }
  }
  return demand;
}

namespace {

void pass_node(const wire::ExtenderArgs& args, std::span<const std::string_view> names, std::size_t i,
               FilterAnswer& answer) {
  if (args.nodes) {
    answer.result.node_objects->push_back((*args.nodes)[i].raw);
  } else {
    answer.result.node_names->emplace_back(names[i]);
  }
  ++answer.summary.nodes_out;
}

// Standalone: tells the request-nodes sink the nodes a Nodes-form request carries.
void observe_request_nodes(NodeSink* sink, const wire::ExtenderArgs& args) {
  if (!args.nodes || !sink) return;
  std::vector<const model::Node*> nodes;
  nodes.reserve(args.nodes->size());
  for (const auto& item : *args.nodes) nodes.push_back(&item.node);
  sink->observe(nodes);
}

// Judges the names in steps, with the deadline checked between them; false when it passed (the
// result is then that error alone: no answer rather than a partial one).
bool judge_in_steps(FilterPass& judge, std::span<const std::string_view> names, std::optional<TimePoint> deadline,
                    const Clock& clock, std::vector<std::uint32_t>& fitting, wire::FilterResult& r) {
  constexpr std::size_t kBetweenDeadlineChecks = 256;
  for (std::size_t begin = 0; begin < names.size(); begin += kBetweenDeadlineChecks) {
    if (deadline && begin > 0 && clock.now() > *deadline) {
      r = wire::FilterResult{};
      r.error = "filter took longer than server.request_deadline; no answer rather than a partial one";
      return false;
    }
    judge.judge(names, begin, std::min(names.size(), begin + kBetweenDeadlineChecks), fitting, r);
  }
  return true;
}

// The candidates prioritize scores, each node as DRA serves it where it does; `index` gives each
// name's candidate (none for a node not in the snapshot). A candidate points at its node's placed
// usage where the pod sees just that (most nodes), and at a copy here otherwise; the snapshot
// outlives the candidates.
struct ScoringCandidates {
  std::deque<model::NodeSupply> dra_supplies;  // what DRA-served candidates point at
  std::deque<model::NodeUsage> usages;         // what candidates not seeing their node's placed usage point at
  std::vector<policy::Candidate> list;
  std::vector<std::optional<std::size_t>> index;

  void add_all(const state::Snapshot& snap, std::span<const std::string_view> names, const model::PodDemand& demand,
               const policy::DraFit* dra, TimePoint now) {
    index.resize(names.size());
    list.reserve(names.size());
    std::vector<state::NodeIndex::Found> found(names.size());
    snap.lookup(names, found);
    const std::uint64_t uid_bits = state::NodeIndex::claim_bits(demand.uid);
    model::NodeUsage scratch;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const state::NodeState* node = found[i].node;
      if (!node) continue;
      index[i] = list.size();
      if (dra) {
        model::NodeUsage usage = node->usage_for(demand, now);
        if (auto view = dra->take_scoring_view(node->supply, usage)) {
          dra_supplies.push_back(std::move(view->supply));
          list.push_back({&dra_supplies.back(), &usages.emplace_back(std::move(view->usage))});
          continue;
        }
        list.push_back({&node->supply, &usages.emplace_back(std::move(usage))});
        continue;
      }
      if (demand.volumes.empty() && found[i].summary->sees_placed_only(uid_bits)) {
        list.push_back({&node->supply, &node->placed});
        continue;
      }
      const model::NodeUsage& usage = node->usage_for(demand, now, scratch);
      list.push_back({&node->supply, &usage == &scratch ? &usages.emplace_back(std::move(scratch)) : &usage});
    }
  }
};

// The claims of a pod's volumes that still need a placement ("namespace/name").
std::vector<std::string> unplaced_claims(const model::PodDemand& demand) {
  std::vector<std::string> claims;
  for (const auto& v : demand.volumes) {
    if (!v.claim.empty() && v.held_on.empty()) claims.push_back(v.claim);
  }
  return claims;
}

// What a wait cut short by the call's deadline leaves to decide and answer.
constexpr auto kAnswerMargin = std::chrono::milliseconds(2);

}  // namespace

bool Extender::in_scope(const model::PodDemand& demand, PodScope scope) {
  return scope == PodScope::kManaged ? !demand.needs_nothing() : !demand.needs_gpu();
}

void Extender::await_unseen_placements(const std::string& caller, const model::PodDemand& demand,
                                       std::optional<TimePoint> deadline) {
  if (!deps_.claims) return;
  auto placed = [this](const std::string& claim) {
    const auto slash = claim.find('/');
    if (slash == std::string::npos) return true;
    auto info = deps_.claims->claim(claim.substr(0, slash), claim.substr(slash + 1));
    return !info || info->bound || !info->node.empty();
  };
  const ChangeSignal* changes = deps_.claims->claim_changes();
  const auto start = clock_.now();
  auto limit = unseen_.wait_ends(caller, demand.uid, placed, start);
  if (limit <= start) return;
  if (deadline) limit = std::min(limit, *deadline - kAnswerMargin);
  for (;;) {
    const std::uint64_t seen = changes ? changes->version() : 0;
    const auto now = clock_.now();
    if (now >= limit) return;
    const auto until = std::min(limit, unseen_.wait_ends(caller, demand.uid, placed, now));
    if (until <= now) return;
    if (changes) {
      changes->await(seen, until, clock_);
    } else {
      clock_.sleep_until(until);
    }
  }
}

namespace {

// The answer with `error` as the whole call's error (and its log note).
FilterAnswer answered_error(FilterAnswer answer, std::string error) {
  answer.result.error = std::move(error);
  answer.summary.note = answer.result.error;
  return answer;
}

}  // namespace

FilterAnswer Extender::filter(const wire::ExtenderArgs& args, std::optional<TimePoint> deadline, PodScope scope,
                              const std::string& caller) {
  FilterAnswer answer;
  answer.owned_names = args.owned_names;
  wire::FilterResult& r = answer.result;
  answer.summary.pod = args.pod.display_name();
  const auto names = args.candidate_names();
  answer.summary.nodes_in = names.size();
  const bool nodes_form = args.nodes.has_value();
  answer.summary.form = nodes_form ? "objects" : "names";
  if (nodes_form) {
    r.node_objects.emplace();
  } else {
    r.node_names.emplace();
  }

  auto demand = demand_of(args.pod);
  if (!demand) return answered_error(std::move(answer), demand.message());
  if (!in_scope(*demand, scope)) {
    for (std::size_t i = 0; i < names.size(); ++i) pass_node(args, names, i, answer);
    answer.summary.note = demand->needs_nothing() ? "pod needs nothing managed" : "pod needs a GPU: left to /filter";
    return answer;
  }
  auto refused = not_ready();
  refused = refused ? std::optional<std::string>("scheduler-extender is not ready: " + *refused)
                    : volumes_of_pending_pod(args.pod, demand, answer.refusal);
  if (refused) return answered_error(std::move(answer), std::move(*refused));
  auto claims = unplaced_claims(*demand);
  if (!claims.empty()) await_unseen_placements(caller, *demand, deadline);
  const auto now = clock_.now();
  remember(*demand, now, scope);
  observe_request_nodes(deps_.request_nodes, args);
  if (deps_.in_flight && !args.pod.pod_group.empty()) deps_.in_flight->cycle(demand->uid, group_key(args.pod), now);

  const auto dra = dra_fit(*demand);
  FilterPass judge(*demand, dra.get(), deps_.state->snapshot(), now, answer.summary.pod,
                   deps_.drives && wants_drives(*demand));
  std::vector<std::uint32_t> fitting;
  if (!judge_in_steps(judge, names, deadline, clock_, fitting, r)) {
    answer.summary.note = r.error;
    return answer;
  }
  const bool held = judge_in_flight(args.pod, *demand, dra.get(), judge.snapshot(), names, fitting, r, now);
  if (auto not_held = reserve_drives(*demand, judge, names, fitting, r)) {
    if (held) deps_.in_flight->released(demand->uid);
    r = wire::FilterResult{};
    return answered_error(std::move(answer), std::move(*not_held));
  }
  for (std::uint32_t i : fitting) pass_node(args, names, i, answer);
  if (!fitting.empty() && !held) unseen_.record(caller, demand->uid, std::move(claims), clock_.now());
  if (scope == PodScope::kManaged) record_verdict(*demand, names, fitting, now);
  r.node_names_plain = !nodes_form && judge.passing_names_plain();
  answer.snapshot = judge.snapshot();
  return answer;
}

std::optional<std::string> Extender::volumes_of_pending_pod(const model::Pod& request_pod,
                                                            Result<model::PodDemand>& demand, Refusal& refusal) {
  if (!deps_.pods || (unplaced_claims(*demand).empty() && !wants_drives(*demand))) return std::nullopt;
  auto pod = actionable_pod(request_pod.uid, request_pod.namespace_name, request_pod.name, refusal);
  if (!pod) return "not judging the pod's volumes: " + pod.message();
  demand = demand_of(*pod);
  if (!demand) return demand.message();
  return std::nullopt;
}

std::optional<std::string> Extender::reserve_drives(const model::PodDemand& demand, const FilterPass& judged,
                                                    std::span<const std::string_view> names,
                                                    std::vector<std::uint32_t>& passed, wire::FilterResult& r) {
  if (!deps_.drives || !wants_drives(demand)) return std::nullopt;
  return hold_drives(*deps_.drives, demand, judged.placed_volumes(), names, passed, r);
}

bool Extender::judge_in_flight(const model::Pod& pod, const model::PodDemand& demand, const policy::DraFit* dra,
                               const state::Snapshot& snapshot, std::span<const std::string_view> names,
                               std::vector<std::uint32_t>& passed, wire::FilterResult& r, TimePoint now) {
  count_nominated(pod, demand, dra, snapshot, names, passed, r, now);
  if (passed.empty()) refuse_group_member(pod, demand);
  return hold_group_member(pod, demand, dra, snapshot, names, passed, now);
}

void Extender::refuse_group_member(const model::Pod& pod, const model::PodDemand& demand) {
  if (!deps_.in_flight || !deps_.pods || pod.pod_group.empty()) return;
  const auto members = deps_.pods->group_members(pod.namespace_name, pod.pod_group);
  const std::string group = group_key(pod);
  if (const std::size_t dropped = deps_.in_flight->refused(demand.uid, group, members.pending, members.bound)) {
    spdlog::info(
        "pod group {}: {} fits no node and the gang can no longer reach its minimum ({} pending, {} bound); "
        "released {} hold(s) of the cycle",
        group, demand.display_name(), members.pending, members.bound, dropped);
  }
}

bool Extender::hold_group_member(const model::Pod& pod, const model::PodDemand& demand, const policy::DraFit* dra,
                                 const state::Snapshot& snapshot, std::span<const std::string_view> names,
                                 std::vector<std::uint32_t>& passed, TimePoint now) {
  if (!deps_.in_flight || !needs_group_hold(pod, demand)) return false;
  policy::ShapeMix mix;
  const policy::GpuPlacement gpu = gpu_placement(mix, snapshot);
  return narrow_and_hold(pod, demand, dra, snapshot, names, passed, scoring_, gpu, mix, *deps_.in_flight, now);
}

void Extender::count_nominated(const model::Pod& pod, const model::PodDemand& demand, const policy::DraFit* dra,
                               const state::Snapshot& snapshot, std::span<const std::string_view> names,
                               std::vector<std::uint32_t>& passed, wire::FilterResult& r, TimePoint now) {
  if (!deps_.pods) return;
  const std::vector<model::Pod> nominated = deps_.pods->nominated_pods();
  if (nominated.empty()) return;
  policy::ShapeMix mix;
  const policy::GpuPlacement gpu = gpu_placement(mix, snapshot);
  const DemandOf of = [this](const model::Pod& q) -> std::optional<model::PodDemand> {
    auto d = demand_of(q);
    if (!d) return std::nullopt;
    d->volumes.clear();
    return std::move(*d);
  };
  refuse_where_nominated_fill(pod, demand, nominated, of, dra, snapshot, names, passed, r, gpu, now);
}

void Extender::record_verdict(const model::PodDemand& demand, std::span<const std::string_view> names,
                              const std::vector<std::uint32_t>& passed, TimePoint now) {
  if (!deps_.verdicts) return;
  std::vector<std::string_view> passed_names;
  passed_names.reserve(passed.size());
  for (std::uint32_t i : passed) passed_names.push_back(names[i]);
  deps_.verdicts->record(demand.uid, passed_names, now);
}

PrioritizeAnswer Extender::prioritize(const wire::ExtenderArgs& args, std::optional<TimePoint> deadline,
                                      PodScope scope) {
  PrioritizeAnswer answer;
  answer.owned_names = args.owned_names;
  answer.summary.pod = args.pod.display_name();
  const auto names = args.candidate_names();
  answer.summary.nodes_in = names.size();
  answer.summary.form = args.nodes ? "objects" : "names";

  auto demand = demand_of(args.pod);
  if (!demand) {
    answer.summary.note = demand.message();
    return answer;
  }
  if (!in_scope(*demand, scope)) {
    answer.summary.note =
        scope == PodScope::kManaged ? "pod needs nothing managed" : "pod needs a GPU: left to /prioritize";
    return answer;
  }
  if (auto why = not_ready()) {
    answer.summary.note = "not ready: " + *why;
    return answer;
  }
  const auto now = clock_.now();
  remember(*demand, now, scope);
  observe_request_nodes(deps_.request_nodes, args);
  if (deps_.in_flight && needs_group_hold(args.pod, *demand)) {
    deps_.in_flight->cycle(demand->uid, group_key(args.pod), now);
  }

  const state::Snapshot snap = deps_.state->snapshot();
  const auto dra = dra_fit(*demand);
  ScoringCandidates candidates;
  candidates.add_all(snap, names, *demand, dra.get(), now);
  if (deadline && clock_.now() > *deadline) {
    answer.summary.note = "took longer than server.request_deadline; no scores";
    return answer;
  }
  policy::ShapeMix mix;
  (void)gpu_placement(mix, snap);
  const std::vector<std::int64_t> scores = policy::score_candidates(*demand, candidates.list, scoring_, mix);
  if (scores.empty()) {
    answer.summary.note = "no scorer applies to the pod";
    return answer;
  }
  answer.scores.reserve(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    answer.scores.push_back({names[i], candidates.index[i] ? scores[*candidates.index[i]] : 0});
  }
  answer.summary.nodes_out = answer.scores.size();
  return answer;
}

Deadline Extender::fenced(Deadline deadline) const {
  if (!deps_.gate) return deadline;
  const std::optional<Deadline> fence = deps_.gate->write_fence();
  return fence ? std::min(deadline, *fence) : deadline;
}

std::optional<std::string> Extender::not_filtered(const wire::BindingArgs& args, TimePoint now) const {
  if (!deps_.verdicts) return std::nullopt;
  const std::string pod = args.pod_namespace + "/" + args.pod_name;
  switch (deps_.verdicts->verdict(args.pod_uid, args.node, now)) {
    case state::FilterVerdicts::Verdict::kPassed: return std::nullopt;
    case state::FilterVerdicts::Verdict::kNotPassed:
      return "node " + args.node + " did not pass /filter for pod " + pod +
             " (kube-scheduler did not send it, or scheduler-extender's filter failed it); a bind lands only where "
             "both passed";
    case state::FilterVerdicts::Verdict::kNotFiltered: break;
  }
  return "pod " + pod + " (uid " + args.pod_uid +
         ") was not filtered by scheduler-extender recently; a bind lands "
         "only on a node that passed /filter (configure filterVerb with bindVerb)";
}

namespace {

// Ends a bind with `why` as its error and note.
BindAnswer failed(BindAnswer& answer, std::string why) {
  answer.error = std::move(why);
  answer.summary.note = answer.error;
  return answer;
}

// Binding a pod again to where it already is succeeds, whatever this process remembers of it;
// to another node it fails. nullopt when the pod is not placed.
std::optional<BindAnswer> already_placed(const state::ClusterState& state, const wire::BindingArgs& args,
                                         BindAnswer& answer) {
  auto existing = state.claim_of(args.pod_uid);
  if (!existing || existing->kind != state::Claim::Kind::kPlaced) return std::nullopt;
  if (existing->node != args.node)
    return failed(answer, "pod " + answer.summary.pod + " is already placed on node " + existing->node);
  answer.summary.nodes_out = 1;
  answer.summary.note = "already placed there";
  return answer;
}

}  // namespace

Result<model::PodDemand> Extender::bind_demand(const wire::BindingArgs& args, TimePoint now, Refusal& refusal) {
  std::optional<model::PodDemand> demand;
  const std::string who = args.pod_namespace + "/" + args.pod_name;
  if (deps_.pods) {
    auto pod = actionable_pod(args.pod_uid, args.pod_namespace, args.pod_name, refusal);
    if (!pod) return pod.error();
    auto computed = demand_of(*pod);
    if (!computed) return computed.error();
    demand = std::move(*computed);
  } else {
    demand = deps_.demands->find(args.pod_uid, now);
    if (!demand) {
      refusal = Refusal::kUnknownPod;
      return Error{"pod " + who + " (uid " + args.pod_uid +
                   ") was not filtered or prioritized by scheduler-extender recently; it cannot be bound blind"};
    }
    if (demand->namespace_name != args.pod_namespace || demand->name != args.pod_name) {
      refusal = Refusal::kNameMismatch;
      return Error{"pod " + who + " (uid " + args.pod_uid + "): the uid belongs to another pod"};
    }
  }
  if (demand->needs_nothing()) {
    refusal = Refusal::kNothingManaged;
    return Error{"pod " + who +
                 " needs no GPU and no managed volume; scheduler-extender does not bind it "
                 "(list the GPU resources in the scheduler's managedResources)"};
  }
  if (auto why = not_filtered(args, now)) {
    refusal = Refusal::kNotFiltered;
    return Error{*why};
  }
  return std::move(*demand);
}

std::optional<BindAnswer> Extender::reserve_for_bind(const wire::BindingArgs& args, const model::PodDemand& demand,
                                                     TimePoint now, BindAnswer& answer, BindRecords& records) {
  const auto dra = dra_fit(demand);
  std::lock_guard lock(deps_.state->bind_lock(args.node));
  // Again under the lock: another bind of the same pod may have just landed.
  if (auto done = already_placed(*deps_.state, args, answer)) return done;
  const state::Snapshot snap = deps_.state->snapshot();
  const state::NodeState* node = snap.find(args.node);
  if (!node) return failed(answer, "node " + args.node + " is not known to scheduler-extender");
  const model::NodeUsage usage = node->usage_for(demand, now);
  if (policy::Eligibility e = policy::node_eligibility(demand, node->supply, usage); !e.eligible()) {
    answer.refusal = Refusal::kNodeIneligible;
    return failed(answer, "node " + args.node + " is not one kube-scheduler could place pod " + answer.summary.pod +
                              " on: " + e.reason);
  }
  policy::ShapeMix mix;
  policy::Fit fit = fit_on(dra.get(), demand, node->supply, usage, gpu_placement(mix, snap));
  if (fit.verdict != policy::Verdict::kFits) {
    return failed(answer, "node " + args.node + " no longer fits pod " + answer.summary.pod + ": " +
                              policy::format_reason(fit.reason));
  }
  state::Claim claim;
  claim.owner = answer.summary.pod;
  claim.node = args.node;
  claim.allocation = std::move(fit.allocation);
  claim.since = now;
  for (const auto& v : claim.allocation.volumes) {
    if (!v.device.empty() && !v.claim.empty()) records.claim_devices.emplace_back(v.claim, v.device);
  }
  records.share = share_assignment(demand, node->supply, claim.allocation);
  deps_.state->reserve(args.pod_uid, std::move(claim), reservation_ttl_, now);
  return std::nullopt;
}

std::string Extender::write_bind(const wire::BindingArgs& args, const BindRecords& records, Deadline deadline) {
  const std::string binding = "binding " + args.pod_namespace + "/" + args.pod_name + " to " + args.node;
  if (!records.claim_devices.empty()) {
    if (std::string error = deps_.binder->record_devices(records.claim_devices, fenced(deadline)); !error.empty()) {
      return binding + " failed: " + error;
    }
  }
  if (records.share) {
    if (std::string error = deps_.binder->record_gpu_share(args, *records.share, fenced(deadline)); !error.empty()) {
      return binding + " failed: " + error;
    }
  }
  if (std::string error = deps_.binder->wait_turn(deadline); !error.empty()) return binding + " failed: " + error;
  if (auto why = not_ready()) return binding + " abandoned: " + *why;
  if (std::string error = deps_.binder->bind(args, fenced(deadline)); !error.empty())
    return binding + " failed: " + error;
  return {};
}

BindAnswer Extender::bind(const wire::BindingArgs& args) {
  const Deadline binder_deadline = clock_.now() + bind_timeout_;
  BindAnswer answer;
  answer.summary.pod = args.pod_namespace + "/" + args.pod_name;
  answer.summary.nodes_in = 1;
  if (auto why = not_ready()) return failed(answer, "scheduler-extender is not ready: " + *why);
  const auto now = clock_.now();
  if (auto done = already_placed(*deps_.state, args, answer)) return *done;
  auto demand = bind_demand(args, now, answer.refusal);
  if (!demand) return failed(answer, demand.message());
  BindRecords records;
  if (auto done = reserve_for_bind(args, *demand, now, answer, records)) return *done;
  if (std::string error = write_bind(args, records, binder_deadline); !error.empty()) {
    deps_.state->drop_reservation(args.pod_uid);
    return failed(answer, std::move(error));
  }
  answer.summary.nodes_out = 1;
  return answer;
}

bool Extender::remove_pod(const std::string& uid) {
  if (!deps_.state->claim_of(uid)) return false;
  deps_.state->drop(uid);
  return true;
}

}  // namespace extender::engine
