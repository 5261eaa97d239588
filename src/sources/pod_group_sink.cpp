#include "pod_group_sink.h"

#include <spdlog/spdlog.h>

#include "extender/wire/k8s_objects.h"

namespace extender::sources {
namespace {

std::optional<model::PodGroup> decode(const nlohmann::json& object) {
  auto group = wire::decode_pod_group(object);
  if (!group || group->name.empty()) {
    spdlog::warn("podgroups: skipping an object that cannot be read: {}", group ? "no name" : group.message());
    return std::nullopt;
  }
  return std::move(*group);
}

}  // namespace

void PodGroupSink::seen(model::PodGroup group) {
  const std::string key = group.key();
  auto it = groups_.find(key);
  const bool failed_now = group.scheduled == "False" &&
                          (it == groups_.end() || it->second.scheduled != "False" || it->second.since != group.since ||
                           it->second.message != group.message || it->second.reason != group.reason);
  if (failed_now && holds_ && it != groups_.end()) {
    const std::size_t ended = holds_->group_failed(key, clock_.now());
    if (ended)
      spdlog::info("pod group {}: kube-scheduler gave up its cycle ({}); released {} hold(s)", key, group.reason,
                   ended);
  }
  if (holds_) holds_->group_min_count(key, group.min_count);
  groups_.insert_or_assign(key, std::move(group));
}

void PodGroupSink::begin_list() {
  std::lock_guard lock(mu_);
  listing_.clear();
  listing_active_ = true;
}

void PodGroupSink::list_item(const nlohmann::json& object) {
  auto group = decode(object);
  if (!group) return;
  std::lock_guard lock(mu_);
  listing_.insert_or_assign(group->key(), std::move(*group));
}

void PodGroupSink::end_list() {
  std::lock_guard lock(mu_);
  auto listed = std::move(listing_);
  listing_.clear();
  listing_active_ = false;
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (listed.count(it->first)) {
      ++it;
      continue;
    }
    if (holds_) holds_->group_min_count(it->first, 0);
    it = groups_.erase(it);
  }
  for (auto& [key, group] : listed) seen(std::move(group));
}

void PodGroupSink::event(std::string_view type, const nlohmann::json& object) {
  auto group = decode(object);
  if (!group) return;
  std::lock_guard lock(mu_);
  if (type == "DELETED") {
    groups_.erase(group->key());
    if (holds_) {
      holds_->group_failed(group->key(), clock_.now());
      holds_->group_min_count(group->key(), 0);
    }
    return;
  }
  seen(std::move(*group));
}

std::vector<model::PodGroup> PodGroupSink::groups() const {
  std::lock_guard lock(mu_);
  std::vector<model::PodGroup> out;
  out.reserve(groups_.size());
  for (const auto& [key, group] : groups_) out.push_back(group);
  return out;
}

}  // namespace extender::sources
