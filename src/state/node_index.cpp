#include "extender/state/node_index.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "extender/state/cluster_state.h"

namespace extender::state {
namespace {

std::uint64_t fold(std::uint64_t a, std::uint64_t b) {
  const unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
  return static_cast<std::uint64_t>(product) ^ static_cast<std::uint64_t>(product >> 64);
}

// A process-wide random seed, so that names chosen to collide in one daemon do not in another.
const std::uint64_t kSeed = [] {
  std::random_device device;
  return (std::uint64_t{device()} << 32) ^ device();
}();

}  // namespace

// Eight bytes a step, each folded in with one 128-bit multiply, inlined: a filter hashes every
// name it is sent, and std::hash (a library call, three multiplies a step) was a third of a lookup.
std::size_t NodeIndex::hash_of(std::string_view s) {
  std::uint64_t h = kSeed ^ (s.size() * 0x9e3779b97f4a7c15ULL);
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    h = fold(h ^ word, 0x9fb21c651e98df25ULL);
  }
  if (i < s.size()) {
    // The last eight bytes, overlapping the step before (one load, not a copy of the rest).
    std::uint64_t word = 0;
    if (s.size() >= 8) {
      std::memcpy(&word, s.data() + s.size() - 8, 8);
    } else {
      for (; i < s.size(); ++i) word = word << 8 | static_cast<unsigned char>(s[i]);
    }
    h = fold(h ^ word, 0xbf58476d1ce4e5b9ULL);
  }
  return fold(h, 0x94d049bb133111ebULL);
}

std::optional<model::GpuResourceAvailability> NodeSummary::gpu() const {
  if (!resource) return std::nullopt;
  model::GpuResourceAvailability r;
  r.resource = *resource;
  r.allocatable = allocatable;
  r.free = free;
  if (has_memory) r.memory_bytes = memory_bytes;
  return r;
}

NodeMap::const_iterator& NodeMap::const_iterator::operator++() {
  ++pos_;
  if (++offset_ == map_->blocks_[block_]->size()) {
    ++block_;
    offset_ = 0;
  }
  return *this;
}

NodeMap::Place NodeMap::lower_bound(std::string_view name) const {
  const auto block =
      std::partition_point(blocks_.begin(), blocks_.end(), [&](const auto& b) { return b->back().first < name; });
  if (block == blocks_.end()) return {blocks_.size(), 0};
  const auto at = std::lower_bound((*block)->begin(), (*block)->end(), name,
                                   [](const value_type& e, std::string_view n) { return e.first < n; });
  return {static_cast<std::size_t>(block - blocks_.begin()), static_cast<std::size_t>(at - (*block)->begin())};
}

NodeMap::const_iterator NodeMap::find(std::string_view name) const {
  const Place p = lower_bound(name);
  return holds(p, name) ? const_iterator(this, p.block, p.offset, starts_[p.block] + p.offset) : end();
}

NodeMap::Block& NodeMap::owned(std::size_t block) {
  if (blocks_[block].use_count() > 1) blocks_[block] = std::make_shared<Block>(*blocks_[block]);
  return *blocks_[block];
}

void NodeMap::renumber() {
  starts_.resize(blocks_.size());
  std::size_t at = 0;
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    starts_[b] = at;
    at += blocks_[b]->size();
  }
  size_ = at;
}

void NodeMap::set(std::string_view name, std::shared_ptr<const NodeState> node) {
  Place p = lower_bound(name);
  if (holds(p, name)) {
    owned(p.block)[p.offset] = {name, std::move(node)};
    return;
  }
  if (blocks_.empty()) {
    blocks_.push_back(std::make_shared<Block>());
  } else if (p.block == blocks_.size()) {
    p = {blocks_.size() - 1, blocks_.back()->size()};
  }
  Block& block = owned(p.block);
  block.insert(block.begin() + static_cast<std::ptrdiff_t>(p.offset), {name, std::move(node)});
  if (block.size() > 2 * kBlock) {
    const auto half = block.begin() + static_cast<std::ptrdiff_t>(kBlock);
    auto upper = std::make_shared<Block>(std::make_move_iterator(half), std::make_move_iterator(block.end()));
    block.erase(half, block.end());
    blocks_.insert(blocks_.begin() + static_cast<std::ptrdiff_t>(p.block) + 1, std::move(upper));
  }
  renumber();
}

void NodeMap::erase(std::string_view name) {
  const Place p = lower_bound(name);
  if (!holds(p, name)) return;
  Block& block = owned(p.block);
  block.erase(block.begin() + static_cast<std::ptrdiff_t>(p.offset));
  if (block.empty()) blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(p.block));
  renumber();
}

NodeIndex::NodeIndex(std::shared_ptr<const NodeMap> nodes) : nodes_(std::move(nodes)) { build(); }

NodeIndex::NodeIndex(std::shared_ptr<const NodeMap> nodes, const NodeIndex& previous,
                     std::span<const std::string_view> changed)
    : nodes_(std::move(nodes)) {
  const bool same_names =
      nodes_->size() == previous.nodes_->size() &&
      std::all_of(changed.begin(), changed.end(), [&](std::string_view name) {
        const auto it = nodes_->find(name);
        const Found before = previous.lookup(name);
        return it != nodes_->end() && before.node && before.order == static_cast<std::uint32_t>(it - nodes_->begin());
      });
  if (!same_names) {
    build();
    return;
  }
  layout_ = previous.layout_;
  names_ = layout_->names.data();
  blocks_ = previous.blocks_;
  gpu_models_ = previous.gpu_models_;
  std::shared_ptr<model::GpuModelSupply> models;
  std::vector<std::size_t> copied;
  for (std::string_view name : changed) {
    const auto it = nodes_->find(name);
    const model::NodeSupply& before = previous.lookup(name).node->supply;
    const model::NodeSupply& after = it->second->supply;
    if (before.gpu_devices.count != after.gpu_devices.count || before.gpu_model != after.gpu_model) {
      if (!models) models = std::make_shared<model::GpuModelSupply>(*gpu_models_);
      models->remove(before);
      models->add(after);
    }
    const auto order = static_cast<std::size_t>(it - nodes_->begin());
    const std::size_t b = order / kBlock;
    if (std::find(copied.begin(), copied.end(), b) == copied.end()) {
      blocks_[b] = std::make_shared<Block>(*blocks_[b]);
      copied.push_back(b);
    }
    (*blocks_[b])[order % kBlock] = {it->second.get(), summarize(*it->second)};
  }
  if (models) gpu_models_ = std::move(models);
}

void NodeIndex::build() {
  layout_ = std::make_shared<Layout>();
  Layout& l = *layout_;
  std::size_t size = 8;
  while (size < 2 * nodes_->size()) size *= 2;
  l.slots.resize(size);
  std::size_t bytes = 0;
  for (const auto& [name, node] : *nodes_) bytes += name.size();
  l.names.reserve(bytes);
  blocks_.reserve((nodes_->size() + kBlock - 1) / kBlock);
  const std::size_t mask = size - 1;
  auto models = std::make_shared<model::GpuModelSupply>();
  std::uint32_t order = 0;
  for (const auto& [name, node] : *nodes_) {
    models->add(node->supply);
    if (order % kBlock == 0) blocks_.push_back(std::make_shared<Block>());
    (*blocks_.back())[order % kBlock] = {node.get(), summarize(*node)};
    const std::size_t hash = hash_of(name);
    std::size_t at = hash & mask;
    while (l.slots[at].order != kEmpty) at = (at + 1) & mask;
    l.slots[at] = {static_cast<std::uint32_t>(hash >> 32), order, static_cast<std::uint32_t>(l.names.size()),
                   static_cast<std::uint32_t>(name.size())};
    l.names += name;
    ++order;
  }
  l.names_dns_only = std::all_of(l.names.begin(), l.names.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
  });
  names_ = l.names.data();
  gpu_models_ = std::move(models);
}

std::uint64_t NodeIndex::claim_bits(std::string_view uid) {
  const std::size_t hash = hash_of(uid);
  return std::uint64_t{1} << (hash & 63) | std::uint64_t{1} << ((hash >> 6) & 63);
}

NodeSummary NodeIndex::summarize(const NodeState& node) {
  NodeSummary s;
  s.claim_bits = node.claim_bits;
  s.reserved = node.reservations > 0;
  const auto& gpus = node.placed_gpus;
  s.gpus_summarized = gpus.size() <= 1 && (gpus.empty() || !gpus.front().problem);
  if (!s.gpus_summarized || gpus.empty()) return s;
  const model::GpuResourceAvailability& gpu = gpus.front();
  auto& resources = layout_->gpu_resources;
  auto known =
      std::find_if(resources.begin(), resources.end(), [&](const auto& name) { return *name == gpu.resource; });
  if (known == resources.end()) {
    resources.push_back(std::make_unique<std::string>(gpu.resource));
    known = resources.end() - 1;
  }
  s.resource = known->get();
  s.allocatable = gpu.allocatable;
  s.free = gpu.free;
  s.has_memory = gpu.memory_bytes.has_value();
  s.memory_bytes = gpu.memory_bytes.value_or(0);
  return s;
}

NodeIndex::Found NodeIndex::lookup(std::string_view name) const {
  const std::size_t hash = hash_of(name);
  const auto tag = static_cast<std::uint32_t>(hash >> 32);
  const std::vector<Slot>& slots = layout_->slots;
  const std::size_t mask = slots.size() - 1;
  for (std::size_t at = hash & mask;; at = (at + 1) & mask) {
    const Slot& slot = slots[at];
    if (slot.order == kEmpty) return {};
    if (slot.hash == tag && names_match(slot, name)) return found_at(slot);
  }
}

void NodeIndex::lookup(std::span<const std::string_view> names, std::span<Found> out) const {
  constexpr std::size_t kBatch = 64;
  const std::vector<Slot>& slots = layout_->slots;
  const std::size_t mask = slots.size() - 1;
  std::size_t hashes[kBatch];
  const Slot* candidate[kBatch];
  for (std::size_t base = 0; base < names.size(); base += kBatch) {
    const std::size_t n = std::min(kBatch, names.size() - base);
    for (std::size_t k = 0; k < n; ++k) {
      hashes[k] = hash_of(names[base + k]);
      __builtin_prefetch(&slots[hashes[k] & mask]);
    }
    // The first slot of a matching tag along the probe (nearly always the only one), or none.
    for (std::size_t k = 0; k < n; ++k) {
      const auto tag = static_cast<std::uint32_t>(hashes[k] >> 32);
      candidate[k] = nullptr;
      for (std::size_t at = hashes[k] & mask; slots[at].order != kEmpty; at = (at + 1) & mask) {
        if (slots[at].hash == tag) {
          candidate[k] = &slots[at];
          __builtin_prefetch(names_ + slots[at].name_at);
          __builtin_prefetch(&entry(slots[at].order));
          break;
        }
      }
    }
    for (std::size_t k = 0; k < n; ++k) {
      const std::string_view name = names[base + k];
      if (!candidate[k]) {
        out[base + k] = {};
      } else if (names_match(*candidate[k], name)) {
        out[base + k] = found_at(*candidate[k]);
      } else {
        out[base + k] = lookup(name);
      }
    }
  }
}

}  // namespace extender::state
