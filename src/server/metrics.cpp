#include "extender/server/metrics.h"

#include <cstdio>

namespace extender::server {
namespace {

constexpr const char* kVerbNames[] = {"filter", "prioritize", "bind", "preempt"};
constexpr const char* kOutcomeNames[] = {"ok", "rejected", "error"};

void line(std::string& out, const char* fmt, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  out += buf;
}

}  // namespace

void Metrics::observe_request(Verb verb, Outcome outcome, std::chrono::nanoseconds latency) {
  const int v = static_cast<int>(verb);
  requests_[v][static_cast<int>(outcome)].fetch_add(1, std::memory_order_relaxed);
  const double seconds = std::chrono::duration<double>(latency).count();
  std::size_t bucket = 0;
  while (bucket < kBuckets.size() && seconds > kBuckets[bucket]) ++bucket;
  latency_[v].counts[bucket].fetch_add(1, std::memory_order_relaxed);
  latency_[v].sum_ns.fetch_add(static_cast<std::uint64_t>(latency.count()), std::memory_order_relaxed);
}

void Metrics::observe_filter(std::size_t passed, std::size_t failed, std::size_t unresolvable) {
  nodes_passed_.fetch_add(passed, std::memory_order_relaxed);
  nodes_failed_.fetch_add(failed, std::memory_order_relaxed);
  nodes_unresolvable_.fetch_add(unresolvable, std::memory_order_relaxed);
}

void Metrics::observe_refusal(Verb verb, engine::Refusal reason) {
  if (verb != Verb::kBind && verb != Verb::kPreempt) return;
  refusals_[verb == Verb::kBind ? 0 : 1][static_cast<int>(reason)].fetch_add(1, std::memory_order_relaxed);
}

std::string Metrics::render(const std::string& gauges) const {
  std::string out;
  out += "# HELP scheduler_extender_requests_total Requests answered, by verb and outcome.\n";
  out += "# TYPE scheduler_extender_requests_total counter\n";
  for (int v = 0; v < static_cast<int>(Verb::kCount); ++v) {
    for (int o = 0; o < static_cast<int>(Outcome::kCount); ++o) {
      line(out, "scheduler_extender_requests_total{verb=\"%s\",outcome=\"%s\"} %llu\n", kVerbNames[v], kOutcomeNames[o],
           static_cast<unsigned long long>(requests_[v][o].load(std::memory_order_relaxed)));
    }
  }
  out += "# HELP scheduler_extender_request_duration_seconds Time to answer a verb, from the whole body read.\n";
  out += "# TYPE scheduler_extender_request_duration_seconds histogram\n";
  for (int v = 0; v < static_cast<int>(Verb::kCount); ++v) {
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b <= kBuckets.size(); ++b) {
      cumulative += latency_[v].counts[b].load(std::memory_order_relaxed);
      if (b < kBuckets.size()) {
        line(out, "scheduler_extender_request_duration_seconds_bucket{verb=\"%s\",le=\"%g\"} %llu\n", kVerbNames[v],
             kBuckets[b], static_cast<unsigned long long>(cumulative));
      } else {
        line(out, "scheduler_extender_request_duration_seconds_bucket{verb=\"%s\",le=\"+Inf\"} %llu\n", kVerbNames[v],
             static_cast<unsigned long long>(cumulative));
      }
    }
    line(out, "scheduler_extender_request_duration_seconds_sum{verb=\"%s\"} %.9f\n", kVerbNames[v],
         static_cast<double>(latency_[v].sum_ns.load(std::memory_order_relaxed)) / 1e9);
    line(out, "scheduler_extender_request_duration_seconds_count{verb=\"%s\"} %llu\n", kVerbNames[v],
         static_cast<unsigned long long>(cumulative));
  }
  out += "# HELP scheduler_extender_filter_nodes_total Nodes judged by filter, by verdict.\n";
  out += "# TYPE scheduler_extender_filter_nodes_total counter\n";
  line(out, "scheduler_extender_filter_nodes_total{verdict=\"passed\"} %llu\n",
       static_cast<unsigned long long>(nodes_passed_.load(std::memory_order_relaxed)));
  line(out, "scheduler_extender_filter_nodes_total{verdict=\"failed\"} %llu\n",
       static_cast<unsigned long long>(nodes_failed_.load(std::memory_order_relaxed)));
  line(out, "scheduler_extender_filter_nodes_total{verdict=\"unresolvable\"} %llu\n",
       static_cast<unsigned long long>(nodes_unresolvable_.load(std::memory_order_relaxed)));
  out += "# HELP scheduler_extender_refusals_total Binds and preempts refused by the rules of who may bind, by reason.\n";
  out += "# TYPE scheduler_extender_refusals_total counter\n";
  for (int v = 0; v < 2; ++v) {
    for (int r = 1; r < static_cast<int>(engine::Refusal::kCount); ++r) {
      line(out, "scheduler_extender_refusals_total{verb=\"%s\",reason=\"%s\"} %llu\n", v == 0 ? "bind" : "preempt",
           engine::refusal_name(static_cast<engine::Refusal>(r)),
           static_cast<unsigned long long>(refusals_[v][r].load(std::memory_order_relaxed)));
    }
  }
  out += gauges;
  return out;
}

}  // namespace extender::server
