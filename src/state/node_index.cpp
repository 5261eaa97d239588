#include "extender/state/node_index.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "extender/state/cluster_state.h"

namespace extender::state {

NodeIndex::NodeIndex(std::shared_ptr<const NodeMap> nodes) : nodes_(std::move(nodes)) {
  std::size_t size = 8;
  while (size < 2 * nodes_->size()) size *= 2;
  slots_.resize(size);
  std::size_t bytes = 0;
  for (const auto& entry : *nodes_) bytes += entry.first.size();
  names_.reserve(bytes);
  const std::size_t mask = size - 1;
  std::uint32_t order = 0;
  summaries_.reserve(nodes_->size());
  for (const auto& [name, node] : *nodes_) {
    summaries_.push_back(summarize(*node));
    const std::size_t hash = std::hash<std::string_view>{}(name);
    std::size_t at = hash & mask;
    while (slots_[at].node) at = (at + 1) & mask;
    slots_[at] = {hash, static_cast<std::uint32_t>(names_.size()), static_cast<std::uint32_t>(name.size()), order++,
                  node.get()};
    names_ += name;
  }
}

std::uint64_t NodeIndex::claim_bits(std::string_view uid) {
  const std::size_t hash = std::hash<std::string_view>{}(uid);
  return std::uint64_t{1} << (hash & 63) | std::uint64_t{1} << ((hash >> 6) & 63);
}

NodeSummary NodeIndex::summarize(const NodeState& node) {
  NodeSummary s;
  for (const auto& [uid, claim] : node.claims) s.claim_bits |= claim_bits(uid);
  s.reserved = node.reservations > 0;
  const auto& gpus = node.placed_gpus;
  s.gpus_summarized = gpus.size() <= 1 && (gpus.empty() || !gpus.front().problem);
  if (!s.gpus_summarized || gpus.empty()) return s;
  s.gpu_count = 1;
  s.gpu = gpus.front();
  auto known = std::find_if(gpu_resources_.begin(), gpu_resources_.end(),
                            [&](const auto& name) { return *name == s.gpu.resource; });
  if (known == gpu_resources_.end()) {
    gpu_resources_.push_back(std::make_unique<std::string>(s.gpu.resource));
    known = gpu_resources_.end() - 1;
  }
  s.gpu.resource = **known;
  return s;
}

NodeIndex::Found NodeIndex::lookup(std::string_view name) const {
  const std::size_t hash = std::hash<std::string_view>{}(name);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t at = hash & mask;; at = (at + 1) & mask) {
    const Slot& slot = slots_[at];
    if (!slot.node) return {};
    if (slot.hash == hash && slot.name_size == name.size() &&
        std::memcmp(names_.data() + slot.name_at, name.data(), name.size()) == 0) {
      return {slot.node, slot.order, &summaries_[slot.order]};
    }
  }
}

}  // namespace extender::state
