#include "drive_reservations.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <future>

#include "extender/kube/watch_event.h"

namespace extender::sources {
namespace {

// The claim's name within its namespace ("team/data" -> "data").
std::string claim_name(const std::string& claim) {
  const auto slash = claim.find('/');
  return slash == std::string::npos ? claim : claim.substr(slash + 1);
}

// The reservation /filter's choices make: one request per claim, the AC chosen on each node.
wire::CapacityReservation reservation_of(const model::PodDemand& pod, std::span<const engine::DriveChoice> choices,
                                         const BaremetalStore& store) {
  wire::CapacityReservation acr;
  acr.name = pod.namespace_name + "-" + pod.name;
  acr.pod_namespace = pod.namespace_name;
  acr.status = wire::kReservationReserved;
  for (const auto& v : pod.volumes) {
    if (v.drive_class.empty() || !v.held_on.empty()) continue;
    const auto group = v.pool.find('/');
    acr.requests.push_back({claim_name(v.claim), v.drive_class, v.bytes,
                            group == std::string::npos ? std::string() : v.pool.substr(group + 1), {}});
  }
  for (const auto& choice : choices) {
    const std::string id = store.id_of(choice.node);
    if (id.empty()) continue;
    acr.requested_nodes.push_back(id);
    acr.reserved_nodes.push_back(id);
    for (const auto& placed : choice.volumes) {
      auto request = std::find_if(acr.requests.begin(), acr.requests.end(),
                                  [&](const wire::CapacityRequest& r) { return r.name == claim_name(placed.claim); });
      if (request != acr.requests.end()) request->reservations.push_back(placed.device);
    }
  }
  return acr;
}

bool same_content(wire::CapacityReservation a, const wire::CapacityReservation& b) {
  a.resource_version = b.resource_version;
  return a == b;
}

Error api_error(const std::string& what, const kube::ApiReply& reply) {
  return Error{what + ": HTTP " + std::to_string(reply.status) + ": " + kube::status_message(reply)};
}

}  // namespace

DriveReservations::DriveReservations(BaremetalStore& store, kube::ApiClient& client, PendingLookup pending,
                                     const BaremetalOptions& options, std::chrono::milliseconds timeout)
    : store_(store),
      client_(client),
      pending_(std::move(pending)),
      write_wait_(options.reservation_write_wait),
      grace_(options.reservation_grace),
      idle_(options.reservation_idle),
      timeout_(timeout) {}

DriveReservations::~DriveReservations() {
  std::lock_guard lock(mu_);
  for (auto& f : in_flight_) f.wait();
}

std::string DriveReservations::path(const std::string& name) {
  std::string p = "/apis/csi-baremetal.dell.com/v1/availablecapacityreservations";
  return name.empty() ? p : p + "/" + name;
}

Status DriveReservations::reserve(const model::PodDemand& pod, std::span<const engine::DriveChoice> choices) {
  wire::CapacityReservation acr = reservation_of(pod, choices, store_);
  const auto current = store_.reservation(acr.name);
  if (acr.reserved_nodes.empty()) {
    if (!current) return {};
    return remove(acr.name);
  }
  if (current && same_content(acr, *current)) {
    store_.reservation_confirmed(acr.name, SteadyClock::now());
    return {};
  }
  if (current) acr.resource_version = current->resource_version;
  store_.reservation_written(acr.name, acr, SteadyClock::now());
  auto done = std::async(std::launch::async, [this, acr, current] {
    auto written = write(acr);
    if (written) {
      store_.reservation_written(acr.name, std::move(*written), SteadyClock::now());
      return Status{};
    }
    spdlog::warn("csi-baremetal: reservation {} not written: {}", acr.name, written.message());
    store_.reservation_written(acr.name, current, SteadyClock::now());
    return Status{written.error()};
  });
  const bool answered = done.wait_for(write_wait_) == std::future_status::ready;
  if (answered) return done.get();
  std::lock_guard lock(mu_);
  std::erase_if(in_flight_, [](auto& f) { return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready; });
  in_flight_.push_back(std::move(done));
  return {};
}

Result<wire::CapacityReservation> DriveReservations::write(const wire::CapacityReservation& acr) {
  wire::CapacityReservation attempt = acr;
  for (int round = 0; round < 3; ++round) {
    const std::string body = wire::encode_capacity_reservation(attempt).dump();
    const bool update = !attempt.resource_version.empty();
    auto reply = update ? client_.put(path(acr.name), body, timeout_) : client_.post(path(), body, timeout_);
    if (!reply) return reply.error();
    if (reply->status == 200 || reply->status == 201) {
      auto doc = kube::parse_bounded(reply->body);
      auto written = wire::decode_capacity_reservation(doc);
      if (!written) return Error{"reservation " + acr.name + " as written: " + written.message()};
      return std::move(*written);
    }
    // 409: another write came first (update) or it exists already (create); 404: gone meanwhile.
    if (reply->status != 409 && !(update && reply->status == 404)) {
      return api_error((update ? "PUT " : "POST ") + path(acr.name), *reply);
    }
    attempt.resource_version.clear();
    if (reply->status == 409) {
      auto read = client_.get(path(acr.name), timeout_);
      if (!read) return read.error();
      if (read->status == 200) {
        auto doc = kube::parse_bounded(read->body);
        auto fresh = wire::decode_capacity_reservation(doc);
        if (!fresh) return Error{"reservation " + acr.name + " as read: " + fresh.message()};
        attempt.resource_version = fresh->resource_version;
      } else if (read->status != 404) {
        return api_error("GET " + path(acr.name), *read);
      }
    }
  }
  return Error{"reservation " + acr.name + ": written by someone else on every attempt"};
}

Status DriveReservations::remove(const std::string& name) {
  auto reply = client_.remove(path(name), timeout_);
  if (!reply) return reply.error();
  if (reply->status != 200 && reply->status != 202 && reply->status != 404) {
    return api_error("DELETE " + path(name), *reply);
  }
  store_.reservation_written(name, std::nullopt, SteadyClock::now());
  return {};
}

std::size_t DriveReservations::collect(TimePoint now) {
  std::size_t removed = 0;
  for (const auto& acr : store_.stale_reservations(now, grace_, idle_, pending_)) {
    if (auto done = remove(acr.name); !done) {
      spdlog::warn("csi-baremetal: stale reservation {} not deleted: {}", acr.name, done.message());
      continue;
    }
    spdlog::info("csi-baremetal: deleted reservation {}: its pod is no longer pending, or was not filtered for a while",
                 acr.name);
    ++removed;
  }
  return removed;
}

}  // namespace extender::sources
