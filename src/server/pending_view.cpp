#include "extender/server/pending_view.h"

#include <chrono>
#include <nlohmann/json.hpp>

namespace extender::server {
namespace {

using policy::format_bytes;
using Kind = policy::FitReason::Kind;

std::string n(std::int64_t v) { return std::to_string(v); }

std::string to_fit_now(const model::PodDemand& demand, const state::Snapshot& snapshot,
                       const std::vector<std::string>& sample, TimePoint now) {
  for (const auto& name : sample) {
    const state::NodeState* node = snapshot.find(name);
    if (!node) continue;
    const policy::Fit fit = policy::check_fit(demand, node->supply, node->usage_for(demand, now),
                                              policy::GpuPlacement{.verdict_only = true});
    return what_would_fit(fit.reason);
  }
  return "the node is no longer known";
}

}  // namespace

std::string demand_text(const model::PodDemand& d) {
  std::string out;
  auto sep = [&out] {
    if (!out.empty()) out += ", ";
  };
  for (const auto& [resource, count] : d.gpus) {
    sep();
    out += n(count) + " " + resource;
  }
  if (d.gpu_share_bytes > 0) {
    sep();
    out += format_bytes(d.gpu_share_bytes) + " of one GPU (" + d.gpu_share_resource + ")";
  }
  if (d.gpu_memory_floor_bytes) {
    sep();
    out += "at least " + format_bytes(*d.gpu_memory_floor_bytes) + " per GPU";
  }
  for (const auto& v : d.volumes) {
    sep();
    out += format_bytes(v.bytes) + " in pool " + v.pool + " (volume " + v.volume + ")";
  }
  if (out.empty()) out = "nothing this daemon manages";
  return out;
}

std::string what_would_fit(const policy::FitReason& r) {
  switch (r.kind) {
    case Kind::kNone: return "fits now: the cluster changed since the daemon's answer";
    case Kind::kInvalidValue: return "a readable " + r.subject + " on the node (it reports " + r.detail + ")";
    case Kind::kGpusNotAllocatable:
      return "a node with " + n(r.need) + " " + r.subject + " (these have " + (r.have > 0 ? n(r.have) : "none") + ")";
    case Kind::kGpusNotFree:
      return n(r.need - r.have) + " more free " + r.subject + " on one node (" + n(r.have) + " of " + n(r.total) +
             " free): pods ending, or preemption of lower-priority pods";
    case Kind::kShareNoGpu:
    case Kind::kShareNoGpuMemory: return "a node whose GPUs report their memory (" + r.subject + ")";
    case Kind::kShareGpuTooSmall:
      return "GPUs of at least " + format_bytes(r.need) + " (these have " + format_bytes(r.total) + ")";
    case Kind::kShareNoRoom:
      return format_bytes(r.need - r.have) + " more free on one GPU (the most free has " + format_bytes(r.have) + ")";
    case Kind::kMemoryFloorUnknown: return "the node's GPU memory label for " + r.subject;
    case Kind::kMemoryFloorTooSmall:
      return "GPUs of at least " + format_bytes(r.need) + " (these have " + format_bytes(r.have) + ")";
    case Kind::kPoolShort:
      return format_bytes(r.need - r.have) + " more free in pool " + r.subject + " (" + format_bytes(r.have) + " of " +
             format_bytes(r.total) + " free)";
    case Kind::kVolumeNoDevice:
      return "one device of pool " + r.subject + " with " + format_bytes(r.need) + " free (the most free has " +
             format_bytes(r.have) + ")";
    case Kind::kVolumeHeldElsewhere: return "node " + r.detail + ", where the claim of volume " + r.subject + " is";
    case Kind::kNoSuchPool: return "a pool " + r.subject + " of " + format_bytes(r.need) + " on the node";
    case Kind::kVolumeTooLarge:
      return "volumes of " + format_bytes(r.need) + " allowed in pool " + r.subject + " (at most " +
             format_bytes(r.have) + ")";
    case Kind::kNoLocalVolume:
      return "a free local volume of " + format_bytes(r.need) + " in pool " + r.subject + " (" + n(r.have) + " of " +
             n(r.total) + " free)";
    case Kind::kDraTooFewDevices:
    case Kind::kNoDrive: return r.detail;
  }
  return "";
}

PendingView pending_view(const PodRefusal& refusal, const state::Snapshot& snapshot, TimePoint now) {
  PendingView v;
  v.pod = refusal.pod;
  if (refusal.demand) v.demand = demand_text(*refusal.demand);
  v.age_seconds = std::chrono::duration<double>(now - refusal.at).count();
  v.nodes_in = refusal.nodes_in;
  v.nodes_passed = refusal.nodes_passed;
  v.error = refusal.error;
  v.other_nodes = refusal.other_nodes;
  for (const auto& r : refusal.reasons) {
    PendingGroup g{r.reason, r.unresolvable, r.nodes, r.sample, {}};
    g.to_fit = refusal.demand ? to_fit_now(*refusal.demand, snapshot, r.sample, now) : "";
    v.groups.push_back(std::move(g));
  }
  return v;
}

std::string render_pending_json(const PendingView& v) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["pod"] = v.pod;
  j["demand"] = v.demand;
  j["age_seconds"] = static_cast<double>(static_cast<std::int64_t>(v.age_seconds * 10)) / 10.0;
  j["nodes_in"] = v.nodes_in;
  j["nodes_passed"] = v.nodes_passed;
  if (!v.error.empty()) j["error"] = v.error;
  ordered_json groups = ordered_json::array();
  for (const auto& g : v.groups) {
    groups.push_back({{"reason", g.reason},
                      {"unresolvable", g.unresolvable},
                      {"nodes", g.nodes},
                      {"sample", g.sample},
                      {"to_fit", g.to_fit}});
  }
  j["groups"] = std::move(groups);
  if (v.other_nodes > 0) j["other_nodes"] = v.other_nodes;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace extender::server
