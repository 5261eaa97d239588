#include "extender/server/groups_view.h"

#include <chrono>
#include <map>

#include <nlohmann/json.hpp>

#include "extender/policy/fit.h"

namespace extender::server {
namespace {

using nlohmann::ordered_json;

ordered_json readable_allocation_json(const model::Allocation& a) {
  ordered_json j = ordered_json::object();
  if (!a.gpus.empty()) j["gpus"] = a.gpus;
  ordered_json shares = ordered_json::array();
  for (const auto& h : a.gpu_devices) {
    if (!h.whole) shares.push_back({{"gpu", h.index}, {"memory", policy::format_bytes(h.bytes)}});
  }
  if (!shares.empty()) j["gpu_shares"] = std::move(shares);
  ordered_json volumes = ordered_json::array();
  for (const auto& v : a.volumes) {
    ordered_json vj = {{"claim", v.claim}, {"pool", v.pool}, {"size", policy::format_bytes(v.bytes)}};
    if (!v.device.empty()) vj["device"] = v.device;
    volumes.push_back(std::move(vj));
  }
  if (!volumes.empty()) j["volumes"] = std::move(volumes);
  return j;
}

}  // namespace

std::string render_groups(const std::vector<state::InFlightHolds::HoldView>& holds, TimePoint now) {
  std::map<std::string, ordered_json> by_group;
  for (const auto& h : holds) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(h.expires - now).count();
    ordered_json m = {{"pod", h.owner},
                      {"uid", h.uid},
                      {"node", h.node},
                      {"phase", state::InFlightHolds::phase_name(h.phase)},
                      {"holds", readable_allocation_json(h.allocation)},
                      {"expires_in_seconds", static_cast<double>(left > 0 ? left : 0) / 1000.0}};
    auto [it, added] = by_group.try_emplace(h.group, ordered_json::array());
    it->second.push_back(std::move(m));
  }
  ordered_json groups = ordered_json::array();
  for (auto& [name, members] : by_group) {
    groups.push_back({{"group", name}, {"members", members.size()}, {"held", std::move(members)}});
  }
  ordered_json j;
  j["holds"] = holds.size();
  j["groups"] = std::move(groups);
  return j.dump(2);
}

}  // namespace extender::server
