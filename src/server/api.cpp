#include "extender/server/api.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "extender/common/logging.h"
#include "extender/engine/extender.h"
#include "extender/server/debug_view.h"
#include "extender/server/dra_view.h"
#include "extender/server/groups_view.h"
#include "extender/server/pending_view.h"
#include "extender/server/status_page.h"
#include "extender/version.h"
#include "extender/wire/extender_args.h"
#include "extender/wire/json_text.h"
#include "extender/wire/results.h"
#include "extender/wire/verb_args.h"

namespace extender::server {
namespace {

const Clock& clock_of(const ApiDeps& deps) { return deps.clock ? *deps.clock : steady_clock(); }

http::HttpResponse json(int status, std::string body) { return {status, std::move(body), "application/json", {}}; }
http::HttpResponse error(int status, std::string_view message) {
  return json(status, wire::encode_request_error(message));
}

const char* verb_name(Endpoint e) {
  switch (e) {
    case Endpoint::kFilter: return "filter";
    case Endpoint::kPrioritize: return "prioritize";
    case Endpoint::kPrioritizeUnmanaged: return "prioritize-unmanaged";
    case Endpoint::kFilterUnmanaged: return "filter-unmanaged";
    case Endpoint::kBind: return "bind";
    default: return "preempt";
  }
}

// A decoded request and its decision, which the answer no longer needs (http::HttpResponse::spent).
// Both point into the body, or into the padded copy `padded` holds when the body lacked padding.
template <class Answer>
struct Spent {
  wire::PaddedBody padded;
  wire::ExtenderArgs args;
  Answer answer;
};

Verb metric_verb(Endpoint e) {
  switch (e) {
    case Endpoint::kFilter: return Verb::kFilter;
    case Endpoint::kPrioritize: return Verb::kPrioritize;
    case Endpoint::kPrioritizeUnmanaged: return Verb::kPrioritizeUnmanaged;
    case Endpoint::kFilterUnmanaged: return Verb::kFilterUnmanaged;
    case Endpoint::kBind: return Verb::kBind;
    default: return Verb::kPreempt;
  }
}

bool is_filter(Endpoint e) { return e == Endpoint::kFilter || e == Endpoint::kFilterUnmanaged; }

// What answering one verb request gave: the answer, and what the metrics and the log line tell.
struct VerbCall {
  http::HttpResponse res;
  Outcome outcome = Outcome::kOk;
  engine::Summary summary;
  std::string body_error;  // the body is malformed: answered 400
  engine::Refusal refusal = engine::Refusal::kNone;
  std::string declined;        // a body past the decode limits
  std::string pod_uid;         // the request's pod, when it was read
  bool callers_error = false;  // the answer is an error the request caused (CallPacing)
};

// A filter or prioritize body past the decode limits: filter answers an Error, prioritize 413.
void decline(Endpoint endpoint, std::string message, VerbCall& call) {
  call.outcome = Outcome::kRejected;
  call.declined = std::move(message);
  if (is_filter(endpoint)) {
    wire::FilterResult r;
    r.error = "scheduler-extender declines the request: " + call.declined;
    call.res = json(200, wire::encode_filter_result(r));
  } else {
    call.res = error(413, "prioritize request declined: " + call.declined);
  }
}

void remember_filter(const ApiDeps& deps, const model::Pod& pod, std::size_t nodes_in, const wire::FilterResult& r) {
  const TimePoint now = clock_of(deps).now();
  std::optional<model::PodDemand> demand;
  if (deps.demands) demand = deps.demands->find(pod.uid, now);
  deps.decisions->add_filter(pod.namespace_name, pod.name, pod.uid, std::move(demand), nodes_in, r, now);
}

const char* outcome_name(const VerbCall& call) {
  if (call.refusal != engine::Refusal::kNone) return "refused";
  switch (call.outcome) {
    case Outcome::kOk: return "ok";
    case Outcome::kError: return "error";
    default: return "rejected";
  }
}

void remember_decision(const ApiDeps& deps, Endpoint endpoint, const VerbCall& call) {
  if (!deps.decisions) return;
  const engine::Summary& s = call.summary;
  std::string note = !call.declined.empty() ? call.declined : !call.body_error.empty() ? call.body_error : s.note;
  deps.decisions->add_decision(
      {clock_of(deps).now(), verb_name(endpoint), s.pod, s.nodes_in, s.nodes_out, outcome_name(call), std::move(note)});
  if (endpoint == Endpoint::kBind && call.outcome == Outcome::kOk && call.refusal == engine::Refusal::kNone) {
    deps.decisions->forget_pod(s.pod);
  }
}

// Filter and prioritize, managed or unmanaged; the decoded request and decision stay alive with
// the answer (http::HttpResponse::spent).
void answer_scoring(const ApiDeps& deps, Endpoint endpoint, const http::HttpRequest& request, TimePoint deadline,
                    VerbCall& call) {
  const auto padded = wire::PaddedBody::of(request.body);
  wire::DecodeFailure failure = wire::DecodeFailure::kMalformed;
  auto args = wire::decode_extender_args(padded, deps.node_fields, deps.decode_limits, &failure, deps.pods);
  if (!args && failure == wire::DecodeFailure::kTooLarge) return decline(endpoint, args.message(), call);
  if (!args) {
    call.body_error = args.message();
    return;
  }
  const auto scope = endpoint == Endpoint::kPrioritizeUnmanaged || endpoint == Endpoint::kFilterUnmanaged
                         ? engine::PodScope::kUnmanaged
                         : engine::PodScope::kManaged;
  if (is_filter(endpoint)) {
    auto spent = std::make_shared<Spent<engine::FilterAnswer>>();
    spent->padded = padded;
    spent->args = std::move(*args);
    call.pod_uid = spent->args.pod.uid;
    spent->answer = deps.extender->filter(spent->args, deadline, scope, request.peer_ip);
    engine::FilterAnswer& a = spent->answer;
    call.summary = std::move(a.summary);
    call.callers_error = a.refusal != engine::Refusal::kNone;
    if (!a.result.error.empty()) call.outcome = Outcome::kError;
    if (deps.metrics)
      deps.metrics->observe_filter(call.summary.nodes_out, a.result.failed.size(), a.result.failed_unresolvable.size());
    if (deps.decisions) remember_filter(deps, spent->args.pod, call.summary.nodes_in, a.result);
    call.res = json(200, wire::encode_filter_result(a.result));
    call.res.spent = std::move(spent);
  } else {
    auto spent = std::make_shared<Spent<engine::PrioritizeAnswer>>();
    spent->padded = padded;
    spent->args = std::move(*args);
    call.pod_uid = spent->args.pod.uid;
    spent->answer = deps.extender->prioritize(spent->args, deadline, scope);
    engine::PrioritizeAnswer& a = spent->answer;
    call.summary = std::move(a.summary);
    call.res = json(200, wire::encode_host_priority_list(wire::above_lowest(std::move(a.scores))));
    call.res.spent = std::move(spent);
  }
}

void answer_bind(const ApiDeps& deps, const http::HttpRequest& request, VerbCall& call) {
  auto args = wire::decode_binding_args(request.body);
  if (!args) {
    call.body_error = args.message();
    return;
  }
  call.pod_uid = args->pod_uid;
  engine::BindAnswer a = deps.extender->bind(*args);
  call.summary = std::move(a.summary);
  if (!a.error.empty()) call.outcome = Outcome::kError;
  call.refusal = a.refusal;
  call.res = json(200, wire::encode_binding_result(a.error));
}

void answer_preempt(const ApiDeps& deps, const http::HttpRequest& request, VerbCall& call) {
  auto args = wire::decode_preemption_args(request.body);
  if (!args) {
    call.body_error = args.message();
    return;
  }
  call.pod_uid = args->pod.uid;
  engine::PreemptAnswer a = deps.extender->preempt(*args);
  call.summary = std::move(a.summary);
  call.refusal = a.refusal;
  if (!a.error.empty()) {
    call.outcome = Outcome::kError;
    call.res = error(503, a.error);
  } else {
    call.res = json(200, wire::encode_preemption_result(a.victims));
  }
}

// What a caller's calls past its log budget were, for the line that reports them.
std::string unlogged_calls(const LogBudget::Verdict& v, const http::HttpRequest& request) {
  const double seconds = std::chrono::duration<double>(v.span).count();
  return fmt::format("{} calls {} not logged in the last {:.1f} s (past logging.lines_per_caller)", v.unlogged,
                     v.shared ? "from callers past the ones the log budget remembers" : "from " + request.peer_ip,
                     seconds);
}

// Writes a call's log line within its caller's log budget (null: always), with the calls past it
// before it.
template <class... Args>
void log_call(LogBudget* budget, const Clock& clock, const http::HttpRequest& request, spdlog::level::level_enum level,
              fmt::format_string<Args...> format, Args&&... args) {
  const LogBudget::Verdict v = budget ? budget->admit(request.peer_ip, clock.now()) : LogBudget::Verdict{};
  if (v.write) {
    const std::string line = fmt::format(format, std::forward<Args>(args)...);
    if (v.unlogged == 0) {
      spdlog::log(level, "{}", line);
    } else {
      spdlog::log(level, "{}; {}", line, unlogged_calls(v, request));
    }
  }
}

// Counts the request (and a refusal) in the metrics and writes its log line.
void record(const ApiDeps& deps, LogBudget& budget, Endpoint endpoint, const http::HttpRequest& request,
            const VerbCall& call, Duration elapsed) {
  const char* name = verb_name(endpoint);
  if (deps.metrics) deps.metrics->observe_request(metric_verb(endpoint), call.outcome, elapsed);
  const double ms = std::chrono::duration<double, std::milli>(elapsed).count();
  const engine::Summary& summary = call.summary;
  const Clock& clock = clock_of(deps);
  using spdlog::level::info, spdlog::level::warn;
  if (!call.declined.empty()) {
    log_call(&budget, clock, request, warn, "{} from {}: declined, {} ({:.2f} ms)", name, request.remote,
             printable(call.declined), ms);
  } else if (call.outcome == Outcome::kRejected) {
    log_call(&budget, clock, request, warn, "{} from {}: 400 {} ({:.2f} ms)", name, request.remote,
             printable(call.body_error), ms);
  } else if (call.refusal != engine::Refusal::kNone) {
    if (deps.metrics) deps.metrics->observe_refusal(metric_verb(endpoint), call.refusal);
    log_call(&budget, clock, request, warn, "{} {} from {}: refused ({}): {}", name, printable(summary.pod, 256),
             request.remote, engine::refusal_name(call.refusal), printable(summary.note));
  } else {
    const std::string form = *summary.form ? std::string(" [") + summary.form + "]" : std::string();
    // A bind that landed is a Binding, which the API write budget bounds already.
    const bool landed = endpoint == Endpoint::kBind && call.outcome == Outcome::kOk;
    log_call(landed ? nullptr : &budget, clock, request, info, "{} {}: nodes {} -> {}{} ({:.2f} ms){}{}", name,
             printable(summary.pod, 256), summary.nodes_in, summary.nodes_out, form, ms,
             summary.note.empty() ? "" : ": ", printable(summary.note));
  }
}

// Holds the answer when `pacing` paces the call, saying why in its note.
void pace(const ApiDeps& deps, CallPacing& pacing, Endpoint endpoint, const http::HttpRequest& request,
          VerbCall& call) {
  const bool error = call.callers_error || call.refusal != engine::Refusal::kNone || !call.body_error.empty() ||
                     !call.declined.empty();
  const TimePoint now = clock_of(deps).now();
  const CallPacing::Verdict v = pacing.judge(request.peer_ip, verb_name(endpoint), call.pod_uid, error, now);
  if (v.reason == CallPacing::Reason::kNone) return;
  call.res.not_before = v.answer_at;
  if (deps.metrics) deps.metrics->observe_paced(v.reason == CallPacing::Reason::kRepeated);
  const auto held = std::chrono::duration_cast<std::chrono::milliseconds>(v.answer_at - now).count();
  std::string why =
      v.reason == CallPacing::Reason::kRepeated
          ? fmt::format(
                "call {} of {} for this pod from {} within a second (kube-scheduler makes one "
                "an attempt)",
                v.repeats, verb_name(endpoint), request.peer_ip)
          : fmt::format("the requests of {} caused more error answers than server.pacing allows", request.peer_ip);
  std::string& note = call.summary.note;
  note += fmt::format("{}answer held {} ms: {}", note.empty() ? "" : "; ", held, why);
}

}  // namespace

http::HttpResponse Api::handle(const http::HttpRequest& request) {
  RouteResult r = route(request.method, request.path, routes_);
  if (!r.route) {
    if (r.status == 405) {
      http::HttpResponse res = error(405, "method " + request.method + " is not allowed here; use " + r.allow);
      res.headers.emplace_back("Allow", r.allow);
      return res;
    }
    return error(404, "no such endpoint: " + request.path.substr(0, 256));
  }
  const Route& rt = *r.route;
  if (loopback_only(rt.endpoint) && !request.peer_loopback) {
    log_call(&log_budget_, clock_of(deps_), request, spdlog::level::warn,
             "{} {} from {}: 403, debug and admin endpoints answer loopback peers only", request.method,
             printable(request.path, 256), request.remote);
    return error(403, "debug and admin endpoints answer loopback peers only (use kubectl port-forward)");
  }
  switch (rt.endpoint) {
    case Endpoint::kFilter:
    case Endpoint::kPrioritize:
    case Endpoint::kPrioritizeUnmanaged:
    case Endpoint::kFilterUnmanaged:
    case Endpoint::kBind:
    case Endpoint::kPreempt: {
      http::HttpResponse res = verb(rt, request);
      res.close = deps_.leadership && !deps_.leadership().leading;
      return res;
    }
    case Endpoint::kHealthz: return json(200, "{\"status\":\"ok\"}");
    case Endpoint::kReadyz: return readyz();
    case Endpoint::kVersion: return version();
    case Endpoint::kMetrics: return metrics();
    case Endpoint::kDebugState: return debug_state();
    case Endpoint::kDebugDra: return debug_dra();
    case Endpoint::kDebugGroups: return debug_groups();
    case Endpoint::kDebugNode: return debug_node(rt.argument);
    case Endpoint::kAdminPod: return admin_remove_pod(rt.argument);
    case Endpoint::kDebugPod: return debug_pod(rt.argument);
    case Endpoint::kUi: return status_page(request.query);
  }
  return error(404, "no such endpoint");
}

http::HttpResponse Api::version() const {
  std::string body = "{\"version\":";
  wire::append_json_string(body, kVersion);
  body += ",\"gitCommit\":";
  wire::append_json_string(body, kGitCommit);
  body += ",\"mode\":";
  wire::append_json_string(body, deps_.mode);
  append_leadership(body);
  body += "}";
  return json(200, std::move(body));
}

http::Lane Api::lane_of(std::string_view method, std::string_view path) const {
  RouteResult r = route(method, path, routes_);
  if (!r.route) return http::Lane::kInline;
  switch (r.route->endpoint) {
    case Endpoint::kFilter:
    case Endpoint::kPrioritize:
    case Endpoint::kPrioritizeUnmanaged:
    case Endpoint::kFilterUnmanaged:
    case Endpoint::kPreempt: return http::Lane::kCompute;
    case Endpoint::kBind: return http::Lane::kBlocking;
    case Endpoint::kHealthz: return http::Lane::kInline;
    default: return http::Lane::kLight;
  }
}

http::HttpResponse Api::verb(const Route& route, const http::HttpRequest& request) {
  const auto started = request.queued_at != TimePoint{} ? request.queued_at : clock_of(deps_).now();
  VerbCall call;
  if (request.body.empty()) {
    call.body_error = "request body is empty; send a JSON object";
  } else if (!wire::valid_utf8(request.body)) {
    call.body_error = "request body is not valid UTF-8";
  }
  if (call.body_error.empty()) {
    switch (route.endpoint) {
      case Endpoint::kFilter:
      case Endpoint::kPrioritize:
      case Endpoint::kPrioritizeUnmanaged:
      case Endpoint::kFilterUnmanaged:
        answer_scoring(deps_, route.endpoint, request, started + deps_.request_deadline, call);
        break;
      case Endpoint::kBind: answer_bind(deps_, request, call); break;
      default: answer_preempt(deps_, request, call); break;
    }
  }
  if (!call.body_error.empty()) {
    call.outcome = Outcome::kRejected;
    call.res = error(400, "malformed " + std::string(verb_name(route.endpoint)) + " request: " + call.body_error);
  }
  pace(deps_, pacing_, route.endpoint, request, call);
  record(deps_, log_budget_, route.endpoint, request, call, clock_of(deps_).now() - started);
  remember_decision(deps_, route.endpoint, call);
  return std::move(call.res);
}

http::HttpResponse Api::readyz() const {
  if (auto why = deps_.not_ready ? deps_.not_ready() : std::nullopt) {
    std::string body = "{\"status\":\"not ready\",\"reason\":";
    wire::append_json_string(body, *why);
    body += "}";
    return json(503, std::move(body));
  }
  std::string body = "{\"status\":\"ready\"";
  append_leadership(body);
  body += "}";
  return json(200, std::move(body));
}

void Api::append_leadership(std::string& body) const {
  if (!deps_.leadership) return;
  const LeadershipView l = deps_.leadership();
  body += l.leading ? ",\"leading\":true,\"leaderSince\":" : ",\"leading\":false,\"standbySince\":";
  wire::append_json_string(body, l.since);
  body += ",\"leader\":";
  wire::append_json_string(body, l.holder);
}

http::HttpResponse Api::metrics() const {
  ScrapeView view;
  std::optional<state::Snapshot> snap;
  if (deps_.state) view.snapshot = &snap.emplace(deps_.state->snapshot());
  view.now = clock_of(deps_).now();
  if (deps_.demands) view.demand_cache_entries = deps_.demands->size();
  if (deps_.watches) view.watches = deps_.watches();
  if (deps_.leadership) view.leadership = deps_.leadership();
  std::shared_ptr<const model::DraInventory> dra;
  if (deps_.dra) dra = deps_.dra->dra_snapshot();
  view.dra = dra.get();
  std::string body = deps_.metrics ? deps_.metrics->render(view) : std::string();
  return {200, std::move(body), "text/plain; version=0.0.4; charset=utf-8", {}};
}

http::HttpResponse Api::debug_state() const {
  std::optional<LeadershipView> leadership;
  if (deps_.leadership) leadership = deps_.leadership();
  return json(200, render_state(deps_.state->snapshot(), clock_of(deps_).now(), leadership ? &*leadership : nullptr));
}

http::HttpResponse Api::debug_dra() const {
  if (!deps_.dra) return json(200, render_dra(nullptr, {}, deps_.state->snapshot()));
  const auto inventory = deps_.dra->dra_snapshot();
  return json(200, render_dra(inventory.get(), deps_.dra->dra_device_classes(), deps_.state->snapshot()));
}

http::HttpResponse Api::debug_groups() const {
  const auto holds = deps_.in_flight ? deps_.in_flight->holds() : std::vector<state::InFlightHolds::HoldView>{};
  return json(200, render_groups(holds, clock_of(deps_).now()));
}

http::HttpResponse Api::debug_node(const std::string& name) const {
  const state::Snapshot snap = deps_.state->snapshot();
  const state::NodeState* node = snap.find(name);
  if (!node) return error(404, "node " + name.substr(0, 256) + " is not known");
  return json(200, render_node(*node, clock_of(deps_).now()));
}

http::HttpResponse Api::admin_remove_pod(const std::string& uid) {
  if (!deps_.admin_mutations) {
    return error(409, "placements come from the API server in kubernetes mode; delete the pod there instead");
  }
  if (!deps_.extender->remove_pod(uid))
    return error(404, "no placement or reservation for pod uid " + uid.substr(0, 256));
  spdlog::info("admin: removed the placement of pod uid {}", uid);
  return json(200, "{\"removed\":true}");
}

http::HttpResponse Api::status_page(const std::string& query) const {
  const state::Snapshot snap = deps_.state->snapshot();
  StatusInputs in;
  in.snapshot = &snap;
  std::shared_ptr<const model::DraInventory> dra;
  if (deps_.dra) dra = deps_.dra->dra_snapshot();
  in.dra = dra.get();
  if (deps_.decisions) {
    in.refused = deps_.decisions->refused_pods();
    in.decisions = deps_.decisions->decisions();
  }
  if (deps_.extender) in.mix = deps_.extender->shape_mix(snap);
  in.now = clock_of(deps_).now();
  in.title = "scheduler-extender (" + deps_.mode + ")";
  return {200, render_status_page(in, parse_page_query(query)), "text/html; charset=utf-8", {}};
}

http::HttpResponse Api::debug_pod(const std::string& pod) const {
  std::optional<PodRefusal> refusal;
  if (deps_.decisions) refusal = deps_.decisions->refused_pod(pod);
  if (!refusal) {
    return error(404,
                 "pod " + pod.substr(0, 256) +
                     " was refused nothing recently (placed, unknown, or past the memory of the last refused pods)");
  }
  return json(200, render_pending_json(pending_view(*refusal, deps_.state->snapshot(), clock_of(deps_).now())));
}

}  // namespace extender::server
