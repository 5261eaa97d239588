#pragma once
// Api: turns HTTP requests into verbs and answers. Malformed requests (not JSON, not an object,
// no Pod, invalid UTF-8) get 400 with a JSON error; well-formed ones get 200 with the decision
// inside. A filter or prioritize body past ApiDeps::decode_limits is declined: filter with an
// Error in a 200 answer, prioritize with 413 (its answer has no error field). The decoded request
// points into the body, which the caller keeps until the answer's `spent` is released. /debug
// and /admin answer 403 to any peer not on loopback. A standby is ready (200) once its caches
// have synced; /readyz, /version and /debug/state say whether it leads. Writes one
// log line per verb request (refusals with the caller's address) within its caller's LogBudget,
// but for a bind that landed (each one a Binding, which the API write budget bounds already),
// and feeds Metrics. A verb's answer is held when CallPacing paces its call (a pod's calls past
// the limit, or a caller's errors past its budget: refusals, malformed or declined bodies; never
// the daemon's own errors, such as not being ready). Thread-safe.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "extender/common/clock.h"
#include "extender/engine/ports.h"
#include "extender/http/http_message.h"
#include "extender/server/call_pacing.h"
#include "extender/server/decision_log.h"
#include "extender/server/log_budget.h"
#include "extender/server/metrics.h"
#include "extender/server/router.h"
#include "extender/state/cluster_state.h"
#include "extender/state/demand_cache.h"
#include "extender/state/in_flight_holds.h"
#include "extender/wire/extender_args.h"

namespace extender::engine {
class Extender;  // engine/extender.h
}  // namespace extender::engine

namespace extender::server {

struct ApiDeps {
  engine::Extender* extender = nullptr;
  state::ClusterState* state = nullptr;
  Metrics* metrics = nullptr;
  // A reason while not ready (caches not synced, shutting down); nullopt when ready.
  std::function<std::optional<std::string>()> not_ready;
  std::string mode;                                   // "standalone" or "kubernetes", shown by /version
  std::chrono::milliseconds request_deadline{4'000};  // filter and prioritize give up past this
  bool admin_mutations = true;        // DELETE /admin/pods (standalone only: in a cluster the API server is the record)
  wire::NodeFieldFilter node_fields;  // what to keep of each node in Nodes-form requests
  // Past these, filter answers an Error (kube-scheduler's event shows it) and prioritize 413.
  wire::DecodeLimits decode_limits;
  state::DemandCache* demands = nullptr;            // its size is a metric
  wire::PodMemo* pods = nullptr;                    // the pods last decoded, shared by the verbs of one cycle
  std::function<std::vector<WatchView>()> watches;  // Kubernetes mode: the reflectors, for /metrics
  // Kubernetes mode with leader election: this replica's part, for /readyz, /version, /debug/state
  // and /metrics. Empty: no election (every verb is decided here). A replica that does not lead
  // closes the connection after answering a verb: kube-scheduler keeps its connections alive, and
  // one kept to a replica that lost the lease (alive, its pod no longer behind the leader-only
  // Service) would be refused forever instead of reaching the new leader.
  std::function<LeadershipView()> leadership;
  // Kubernetes mode: DRA as the watches have it, for /debug/dra and /metrics.
  const engine::DraSource* dra = nullptr;
  // What the verbs answered (recent decisions, the last refusal of each pod), for /ui and
  // /debug/pods; null: not recorded (those views then show none).
  DecisionLog* decisions = nullptr;
  // Pod groups in flight, for /debug/groups; null: none are held (the view is empty).
  const state::InFlightHolds* in_flight = nullptr;
  // The listeners' clock (their requests' queued_at), which the views' ages are measured on too;
  // null: steady_clock().
  const Clock* clock = nullptr;
  // The per-call log lines one caller (peer address) may have written a second (LogBudget);
  // 0: every one.
  double log_lines_per_caller = 0;
  // Which callers' answers are held, and for how long (CallPacing); a zero hold: none.
  CallPacing::Options pacing{};
};

class Api {
 public:
  Api(ApiDeps deps, RouterOptions routes)
      : deps_(std::move(deps)),
        routes_(std::move(routes)),
        log_budget_({deps_.log_lines_per_caller}),
        pacing_(deps_.pacing) {}
  http::HttpResponse handle(const http::HttpRequest& request);
  // The worker lane a request runs on: verbs that decide, binds, light reads, or inline for
  // /healthz and answers that need no work (404, 405).
  http::Lane lane_of(std::string_view method, std::string_view path) const;

 private:
  http::HttpResponse verb(const Route& route, const http::HttpRequest& request);
  http::HttpResponse debug_state() const;
  http::HttpResponse debug_dra() const;
  http::HttpResponse debug_groups() const;
  http::HttpResponse debug_node(const std::string& name) const;
  http::HttpResponse admin_remove_pod(const std::string& uid);
  http::HttpResponse status_page(const std::string& query) const;
  http::HttpResponse debug_pod(const std::string& pod) const;
  http::HttpResponse readyz() const;
  http::HttpResponse version() const;
  // `,"leading":...,"leaderSince"|"standbySince":...,"leader":...` when there is an election.
  void append_leadership(std::string& body) const;
  http::HttpResponse metrics() const;

  ApiDeps deps_;
  RouterOptions routes_;
  LogBudget log_budget_;
  CallPacing pacing_;
};

}  // namespace extender::server
