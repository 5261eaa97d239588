#pragma once
// Metrics: request counts and latencies per verb and outcome, filter verdicts and bind results,
// rendered in the Prometheus text format for GET /metrics. Labels are bounded (no pod or node
// names). Thread-safe: counters are atomics.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "extender/engine/extender.h"

namespace extender::server {

enum class Verb { kFilter, kPrioritize, kBind, kPreempt, kCount };
enum class Outcome { kOk, kRejected, kError, kCount };  // rejected: 4xx; error: Error field set

class Metrics {
 public:
  void observe_request(Verb verb, Outcome outcome, std::chrono::nanoseconds latency);
  void observe_filter(std::size_t passed, std::size_t failed, std::size_t unresolvable);
  // A bind or preempt refused by the rules of who may bind.
  void observe_refusal(Verb verb, engine::Refusal reason);
  // Renders every metric; `gauges` is appended verbatim (state sizes computed by the caller).
  std::string render(const std::string& gauges) const;

 private:
  static constexpr std::array<double, 12> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05,   0.1,   0.25,   0.5,   1,     2.5};
  struct Histogram {
    std::array<std::atomic<std::uint64_t>, kBuckets.size() + 1> counts{};
    std::atomic<std::uint64_t> sum_ns{0};
  };
  std::array<std::array<std::atomic<std::uint64_t>, static_cast<int>(Outcome::kCount)>, static_cast<int>(Verb::kCount)>
      requests_{};
  std::array<Histogram, static_cast<int>(Verb::kCount)> latency_{};
  std::array<std::array<std::atomic<std::uint64_t>, static_cast<int>(engine::Refusal::kCount)>, 2> refusals_{};  // bind, preempt
  std::atomic<std::uint64_t> nodes_passed_{0};
  std::atomic<std::uint64_t> nodes_failed_{0};
  std::atomic<std::uint64_t> nodes_unresolvable_{0};
};

}  // namespace extender::server
