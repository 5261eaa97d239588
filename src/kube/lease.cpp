#include "extender/kube/lease.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <ctime>

#include "extender/kube/pod_reader.h"
#include "extender/kube/watch_event.h"
#include "extender/wire/json_text.h"

namespace extender::kube {

namespace {

Status read_string(const nlohmann::json& obj, const char* key, std::string& out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {};
  if (!it->is_string()) return Error{std::string("Lease field ") + key + " is not a string"};
  out = it->get<std::string>();
  return {};
}

Status read_integer(const nlohmann::json& obj, const char* key, std::int64_t& out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {};
  if (!it->is_number_integer()) return Error{std::string("Lease field ") + key + " is not an integer"};
  out = it->get<std::int64_t>();
  return {};
}

}  // namespace

bool LeaseRecord::same_spec(const LeaseRecord& o) const {
  return holder == o.holder && lease_duration_seconds == o.lease_duration_seconds && acquire_time == o.acquire_time &&
         renew_time == o.renew_time && transitions == o.transitions;
}

Result<LeaseRecord> parse_lease(std::string_view json) {
  nlohmann::json doc = parse_bounded(json);
  if (doc.is_discarded() || !doc.is_object()) return Error{"Lease is not a JSON object"};
  LeaseRecord r;
  if (auto meta = doc.find("metadata"); meta != doc.end() && meta->is_object()) {
    EXTENDER_TRY(read_string(*meta, "resourceVersion", r.resource_version));
  }
  auto spec = doc.find("spec");
  if (spec == doc.end() || spec->is_null()) return r;
  if (!spec->is_object()) return Error{"Lease spec is not an object"};
  EXTENDER_TRY(read_string(*spec, "holderIdentity", r.holder));
  EXTENDER_TRY(read_integer(*spec, "leaseDurationSeconds", r.lease_duration_seconds));
  EXTENDER_TRY(read_string(*spec, "acquireTime", r.acquire_time));
  EXTENDER_TRY(read_string(*spec, "renewTime", r.renew_time));
  EXTENDER_TRY(read_integer(*spec, "leaseTransitions", r.transitions));
  return r;
}

std::string lease_body(const std::string& ns, const std::string& name, const LeaseRecord& r) {
  std::string b = R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":)";
  wire::append_json_string(b, name);
  b += ",\"namespace\":";
  wire::append_json_string(b, ns);
  if (!r.resource_version.empty()) {
    b += ",\"resourceVersion\":";
    wire::append_json_string(b, r.resource_version);
  }
  b += "},\"spec\":{\"holderIdentity\":";
  wire::append_json_string(b, r.holder);
  b += ",\"leaseDurationSeconds\":" + std::to_string(r.lease_duration_seconds);
  for (auto [key, value] : {std::pair{"acquireTime", &r.acquire_time}, std::pair{"renewTime", &r.renew_time}}) {
    if (value->empty()) continue;
    b += ",\"";
    b += key;
    b += "\":";
    wire::append_json_string(b, *value);
  }
  b += ",\"leaseTransitions\":" + std::to_string(r.transitions) + "}}";
  return b;
}

std::string micro_time(std::chrono::system_clock::time_point t) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(us / 1'000'000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(us % 1'000'000));
  return buf;
}

Result<std::optional<LeaseRecord>> ApiLeaseStore::get() {
  auto reply = client_.get(
      "/apis/coordination.k8s.io/v1/namespaces/" + path_segment(ns_) + "/leases/" + path_segment(name_), timeout_);
  if (!reply) return reply.error();
  if (reply->status == 404) return std::optional<LeaseRecord>();
  if (reply->status != 200) {
    return Error{"reading Lease " + where() + ": HTTP " + std::to_string(reply->status) + ": " +
                 status_message(*reply)};
  }
  auto record = parse_lease(reply->body);
  if (!record) return Error{"reading Lease " + where() + ": " + record.message()};
  return std::optional<LeaseRecord>(std::move(*record));
}

Result<WriteOutcome> ApiLeaseStore::create(LeaseRecord& record) { return write("POST", record); }

Result<WriteOutcome> ApiLeaseStore::update(LeaseRecord& record) { return write("PUT", record); }

Result<WriteOutcome> ApiLeaseStore::write(const std::string& method, LeaseRecord& record) {
  const std::string collection = "/apis/coordination.k8s.io/v1/namespaces/" + path_segment(ns_) + "/leases";
  const std::string body = lease_body(ns_, name_, record);
  auto reply = method == "POST" ? client_.post(collection, body, timeout_)
                                : client_.put(collection + "/" + path_segment(name_), body, timeout_);
  if (!reply) return reply.error();
  if (reply->status == 409 || (method == "PUT" && reply->status == 404)) return WriteOutcome::kConflict;
  if (reply->status != 200 && reply->status != 201) {
    return Error{(method == "POST" ? "creating Lease " : "updating Lease ") + where() + ": HTTP " +
                 std::to_string(reply->status) + ": " + status_message(*reply)};
  }
  auto written = parse_lease(reply->body);
  if (!written) return Error{"writing Lease " + where() + ": " + written.message()};
  record.resource_version = written->resource_version;
  return WriteOutcome::kWritten;
}

}  // namespace extender::kube
