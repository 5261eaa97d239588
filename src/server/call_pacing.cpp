#include "extender/server/call_pacing.h"

#include <algorithm>
#include <chrono>
#include <iterator>

namespace extender::server {

void CallPacing::forget_ended(TimePoint now) {
  if (forgotten_ != TimePoint{} && now - forgotten_ < std::chrono::seconds(1)) return;
  forgotten_ = now;
  for (auto it = windows_.begin(); it != windows_.end();) {
    it = now - it->second.start >= std::chrono::seconds(1) ? windows_.erase(it) : std::next(it);
  }
}

int CallPacing::count_repeat(std::string_view caller, std::string_view verb, std::string_view pod_uid, TimePoint now) {
  std::string key;
  key.reserve(caller.size() + verb.size() + pod_uid.size() + 2);
  key.append(caller).append(1, '\0').append(verb).append(1, '\0').append(pod_uid);
  std::lock_guard lock(mu_);
  auto it = windows_.find(key);
  if (it == windows_.end()) {
    if (windows_.size() >= options_.max_pods) forget_ended(now);
    if (windows_.size() >= options_.max_pods) return 0;
    it = windows_.emplace(std::move(key), Window{now, 0}).first;
  }
  Window& w = it->second;
  if (now - w.start >= std::chrono::seconds(1)) w = Window{now, 0};
  return ++w.calls;
}

CallPacing::Verdict CallPacing::judge(std::string_view caller, std::string_view verb, std::string_view pod_uid,
                                      bool error, TimePoint now) {
  Verdict v;
  if (options_.hold <= Duration::zero()) return v;
  if (!pod_uid.empty()) v.repeats = count_repeat(caller, verb, pod_uid, now);
  if (v.repeats > options_.repeats_per_second) {
    v.reason = Reason::kRepeated;
    v.answer_at = now + options_.hold * std::min(v.repeats / options_.repeats_per_second, kMostHolds);
  } else if (error && !errors_.admit(caller, now).write) {
    v.reason = Reason::kErrors;
    v.answer_at = now + options_.hold;
  }
  return v;
}

std::size_t CallPacing::windows() const {
  std::lock_guard lock(mu_);
  return windows_.size();
}

}  // namespace extender::server
