#pragma once
// PodMemo: the pods last decoded from request bodies, by their exact JSON. kube-scheduler sends
// one pod's same bytes in every call of its cycle (filter and prioritize, and the every-pod
// entry's two), so decoding it once serves them all: a later call compares the bytes and copies
// the decoded pod. Holds at most kCapacity pods of at most kMaxBytes of JSON each (larger pods
// are decoded every time), the oldest replaced first. Thread-safe.
#include <array>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "extender/model/pod.h"

namespace extender::wire {

class PodMemo {
 public:
  static constexpr std::size_t kCapacity = 8;
  static constexpr std::size_t kMaxBytes = 64 * 1024;

  // The pod decoded from exactly `json`, if kept.
  std::optional<model::Pod> find(std::string_view json) const;
  // Keeps `pod` as what `json` decodes to, in place of what was kept for it (nothing when `json`
  // is over kMaxBytes).
  void keep(std::string_view json, const model::Pod& pod);

 private:
  struct Kept {
    std::string json;
    model::Pod pod;
  };
  mutable std::mutex mu_;
  std::array<Kept, kCapacity> kept_;
  std::size_t next_ = 0;  // the slot replaced next
};

}  // namespace extender::wire
