#pragma once
// DecisionLog: what the daemon has been answering, for the status page (/ui) and `inspect`.
// Two bounded memories, both thread-safe (one mutex each, held for a copy):
// - the last `decisions` verb answers (verb, pod, nodes in and out, outcome, note), a ring;
// - per pod (namespace/name), the last /filter answer that refused it any node: the demand,
//   how many nodes came and passed, and its reasons grouped by text (each with its node count and
//   a few node names); at most `pods` pods, least recently refused dropped first (LRU), at most
//   kMaxReasons distinct reasons per pod (the rest counted together) and kMaxSample names per
//   reason, texts cut at kMaxText bytes: a few tens of KB per pod at worst, whatever callers send.
//   A successful /bind of the pod forgets it.
#include <cstddef>
#include <deque>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "extender/common/clock.h"
#include "extender/model/demand.h"
#include "extender/wire/results.h"

namespace extender::server {

struct Decision {
  TimePoint at{};
  std::string verb;
  std::string pod;  // namespace/name
  std::size_t nodes_in = 0;
  std::size_t nodes_out = 0;
  std::string outcome;  // "ok", "error", "rejected", "refused"
  std::string note;
};

struct ReasonGroup {
  std::string reason;
  bool unresolvable = false;  // FailedAndUnresolvableNodes: preemption cannot help
  std::size_t nodes = 0;
  std::vector<std::string> sample;  // the first kMaxSample node names, in name order
};

struct PodRefusal {
  std::string pod;  // namespace/name
  std::string uid;
  std::optional<model::PodDemand> demand;
  TimePoint at{};
  std::size_t nodes_in = 0;
  std::size_t nodes_passed = 0;
  std::string error;                 // the filter's Error, if it gave one
  std::vector<ReasonGroup> reasons;  // most nodes first
  std::size_t other_nodes = 0;       // nodes refused for reasons past kMaxReasons
};

class DecisionLog {
 public:
  static constexpr std::size_t kMaxReasons = 16;
  static constexpr std::size_t kMaxSample = 3;
  static constexpr std::size_t kMaxText = 256;

  explicit DecisionLog(std::size_t decisions = 50, std::size_t pods = 512);

  void add_decision(Decision d);
  // A /filter answer for `pod`: remembered when it refused the pod any node, forgotten otherwise.
  void add_filter(std::string_view ns, std::string_view name, std::string_view uid,
                  std::optional<model::PodDemand> demand, std::size_t nodes_in, const wire::FilterResult& result,
                  TimePoint at);
  void forget_pod(std::string_view pod);

  std::vector<Decision> decisions() const;                            // newest first
  std::vector<PodRefusal> refused_pods() const;                       // most recently refused first
  std::optional<PodRefusal> refused_pod(std::string_view pod) const;  // namespace/name

 private:
  std::size_t decision_capacity_;
  std::size_t pod_capacity_;
  mutable std::mutex decisions_mu_;
  std::deque<Decision> decisions_;  // newest first
  mutable std::mutex pods_mu_;
  std::list<PodRefusal> pods_;  // most recent first
  std::unordered_map<std::string, std::list<PodRefusal>::iterator> index_;
};

}  // namespace extender::server
