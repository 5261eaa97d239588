#include "extender/state/node_index.h"

#include <cstring>
#include <functional>

namespace extender::state {

NodeIndex::NodeIndex(std::shared_ptr<const NodeMap> nodes) : nodes_(std::move(nodes)) {
  std::size_t size = 8;
  while (size < 2 * nodes_->size()) size *= 2;
  slots_.resize(size);
  std::size_t bytes = 0;
  for (const auto& entry : *nodes_) bytes += entry.first.size();
  names_.reserve(bytes);
  const std::size_t mask = size - 1;
  for (const auto& [name, node] : *nodes_) {
    const std::size_t hash = std::hash<std::string_view>{}(name);
    std::size_t at = hash & mask;
    while (slots_[at].node) at = (at + 1) & mask;
    slots_[at] = {hash, static_cast<std::uint32_t>(names_.size()), static_cast<std::uint32_t>(name.size()), node.get()};
    names_ += name;
  }
}

const NodeState* NodeIndex::find(std::string_view name) const {
  const std::size_t hash = std::hash<std::string_view>{}(name);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t at = hash & mask;; at = (at + 1) & mask) {
    const Slot& slot = slots_[at];
    if (!slot.node) return nullptr;
    if (slot.hash == hash && slot.name_size == name.size() &&
        std::memcmp(names_.data() + slot.name_at, name.data(), name.size()) == 0) {
      return slot.node;
    }
  }
}

}  // namespace extender::state
