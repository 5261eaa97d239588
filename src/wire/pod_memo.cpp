#include "extender/wire/pod_memo.h"

namespace extender::wire {

std::optional<model::Pod> PodMemo::find(std::string_view json) const {
  if (json.empty() || json.size() > kMaxBytes) return std::nullopt;
  std::lock_guard lock(mu_);
  for (const Kept& k : kept_) {
    if (k.json == json) return k.pod;
  }
  return std::nullopt;
}

void PodMemo::keep(std::string_view json, const model::Pod& pod) {
  if (json.empty() || json.size() > kMaxBytes) return;
  std::lock_guard lock(mu_);
  for (Kept& k : kept_) {
    if (k.json == json) {
      k.pod = pod;
      return;
    }
  }
  kept_[next_] = {std::string(json), pod};
  next_ = (next_ + 1) % kCapacity;
}

}  // namespace extender::wire
