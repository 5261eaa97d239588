#include "drive_reservations.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <system_error>

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
    acr.requests.push_back({claim_name(v.claim),
                            v.drive_class,
                            v.bytes,
                            group == std::string::npos ? std::string() : v.pool.substr(group + 1),
                            {}});
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

Error api_error(const std::string& what, const kube::ApiReply& reply) {
  return Error{what + ": HTTP " + std::to_string(reply.status) + ": " + kube::status_message(reply)};
}

}  // namespace

DriveReservations::DriveReservations(BaremetalStore& store, kube::ApiClient& client, PendingLookup pending,
                                     const BaremetalOptions& options, std::chrono::milliseconds timeout,
                                     const Clock& clock)
    : store_(store),
      client_(client),
      pending_(std::move(pending)),
      clock_(clock),
      write_wait_(options.reservation_write_wait),
      grace_(options.reservation_grace),
      idle_(options.reservation_idle),
      rewrite_interval_(options.reservation_rewrite_interval),
      timeout_(timeout) {
  for (std::size_t i = 0; i < kWriters; ++i) {
    try {
      writers_.emplace_back([this] { run_writer(); });
    } catch (const std::system_error& e) {
      spdlog::error("csi-baremetal: {} of {} reservation writer threads started: {}", i, kWriters, e.what());
      break;
    }
  }
}

DriveReservations::~DriveReservations() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (auto& job : queue_) job.done->set(Error{"shutting down: reservation " + job.acr.name + " not written"});
    queue_.clear();
  }
  wake_.notify_all();
  for (auto& t : writers_) t.join();
}

void DriveReservations::set_terms(kube::RateLimiter* writes, const engine::Gate* gate) {
  writes_ = writes;
  gate_ = gate;
}

std::string DriveReservations::path(const std::string& name) {
  std::string p = "/apis/csi-baremetal.dell.com/v1/availablecapacityreservations";
  return name.empty() ? p : p + "/" + name;
}

Result<engine::DriveHold> DriveReservations::reserve(const model::PodDemand& pod,
                                                     std::span<const engine::DriveChoice> choices) {
  wire::CapacityReservation acr = reservation_of(pod, choices, store_);
  std::unique_lock changing(change_mu_);
  const auto current = store_.reservation(acr.name);
  if (current && current->pod_namespace != acr.pod_namespace) {
    return Error{"reservation " + acr.name + " is held by a pod of namespace \"" + current->pod_namespace +
                 "\" whose name gives the same reservation name; not overwritten"};
  }
  const auto now = clock_.now();
  if (current && (store_.being_placed(*current) || acr.same_content(*current))) {
    store_.reservation_confirmed(acr.name, now);
    return engine::DriveHold{};
  }
  if (acr.reserved_nodes.empty()) return engine::DriveHold{};
  if (current) {
    if (auto changed = changed_.find(acr.name);
        changed != changed_.end() && now < changed->second + rewrite_interval_) {
      store_.reservation_confirmed(acr.name, now);
      return standing(*current, choices, now - changed->second);
    }
    acr.resource_version = current->resource_version;
  }
  store_.reservation_written(acr.name, acr, now, true);
  auto done = std::make_shared<Outcome>();
  if (auto queued = enqueue(Job{acr, current, done}); !queued) {
    store_.reservation_written(acr.name, current, clock_.now());
    return queued.error();
  }
  if (changed_.size() >= kQueued)
    std::erase_if(changed_, [&](const auto& e) { return e.second + rewrite_interval_ <= now; });
  changed_[acr.name] = now;
  changing.unlock();
  std::unique_lock lock(done->mu);
  if (clock_.wait(lock, done->cv, clock_.now() + write_wait_, [&] { return done->status.has_value(); })) {
    if (!*done->status) return done->status->error();
  }
  return engine::DriveHold{};
}

engine::DriveHold DriveReservations::standing(const wire::CapacityReservation& current,
                                              std::span<const engine::DriveChoice> choices, Duration age) const {
  engine::DriveHold hold;
  hold.only.emplace();
  for (const auto& choice : choices) {
    const std::string id = store_.id_of(choice.node);
    if (id.empty() ||
        std::find(current.reserved_nodes.begin(), current.reserved_nodes.end(), id) == current.reserved_nodes.end())
      continue;
    const bool as_chosen =
        std::all_of(choice.volumes.begin(), choice.volumes.end(), [&](const model::VolumePlacement& placed) {
          const auto request =
              std::find_if(current.requests.begin(), current.requests.end(),
                           [&](const wire::CapacityRequest& r) { return r.name == claim_name(placed.claim); });
          return request != current.requests.end() &&
                 std::find(request->reservations.begin(), request->reservations.end(), placed.device) !=
                     request->reservations.end();
        });
    if (as_chosen) hold.only->push_back(choice.node);
  }
  hold.others_why = "the pod's csi-baremetal reservation " + current.name + " was rewritten " +
                    std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(age).count()) +
                    " ms ago and does not hold this node's drives; it is rewritten at most once every " +
                    std::to_string(rewrite_interval_.count()) + " ms, so a later try may pass it";
  return hold;
}

void DriveReservations::Outcome::set(Status s) {
  {
    std::lock_guard lock(mu);
    if (!status) status = std::move(s);
  }
  cv.notify_all();
}

Status DriveReservations::enqueue(Job job) {
  {
    std::lock_guard lock(mu_);
    if (writers_.empty() || stopping_) return Error{"reservation " + job.acr.name + ": no writer thread to send it"};
    auto same = std::find_if(queue_.begin(), queue_.end(), [&](const Job& j) { return j.acr.name == job.acr.name; });
    if (same != queue_.end()) {
      job.before = std::move(same->before);
      same->done->set(Status{});  // superseded by this newer write
      *same = std::move(job);
    } else if (queue_.size() >= kQueued) {
      return Error{"reservation " + job.acr.name + ": " + std::to_string(kQueued) +
                   " reservation writes already queued"};
    } else {
      queue_.push_back(std::move(job));
    }
  }
  wake_.notify_all();
  return {};
}

std::optional<DriveReservations::Job> DriveReservations::take_ready() {
  auto ready = std::find_if(queue_.begin(), queue_.end(), [&](const Job& j) { return !sending_.count(j.acr.name); });
  if (ready == queue_.end()) return std::nullopt;
  Job job = std::move(*ready);
  queue_.erase(ready);
  sending_.insert(job.acr.name);
  return job;
}

void DriveReservations::run_writer() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    auto job = take_ready();
    if (!job) {
      wake_.wait(lock);
      continue;
    }
    lock.unlock();
    finish(*job, write(job->acr));
    lock.lock();
    sending_.erase(job->acr.name);
    wake_.notify_all();
  }
}

void DriveReservations::finish(const Job& job, Result<wire::CapacityReservation> written) {
  if (written) {
    store_.reservation_answered(job.acr, std::move(*written), clock_.now());
    job.done->set(Status{});
    return;
  }
  spdlog::warn("csi-baremetal: reservation {} not written: {}", job.acr.name, written.message());
  store_.reservation_answered(job.acr, job.before, clock_.now());
  job.done->set(Status{written.error()});
}

Result<std::chrono::milliseconds> DriveReservations::send_terms() {
  const auto now = clock_.now();
  TimePoint deadline = now + timeout_;
  if (const engine::Gate* gate = gate_.load()) {
    if (auto why = gate->not_leading()) return Error{"not sent: " + *why};
    if (auto fence = gate->write_fence()) deadline = std::min(deadline, *fence);
  }
  if (deadline <= now) return Error{"not sent: this replica's leadership term has passed its write fence"};
  if (kube::RateLimiter* writes = writes_.load()) {
    if (auto turn = writes->wait(deadline); !turn) return Error{"not sent: " + turn.message()};
  }
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_.now());
  if (left.count() < 1) return Error{"not sent: no time left before this replica's write fence"};
  return left;
}

Result<wire::CapacityReservation> DriveReservations::write(const wire::CapacityReservation& acr) {
  wire::CapacityReservation attempt = acr;
  for (int round = 0; round < 3; ++round) {
    const std::string body = wire::encode_capacity_reservation(attempt).dump();
    const bool update = !attempt.resource_version.empty();
    auto terms = send_terms();
    if (!terms) return terms.error();
    auto reply = update ? client_.put(path(acr.name), body, *terms) : client_.post(path(), body, *terms);
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
      auto read = client_.get(path(acr.name), timeout_);  // a read: no fence, no write budget
      if (!read) return read.error();
      if (read->status == 200) {
        auto doc = kube::parse_bounded(read->body);
        auto fresh = wire::decode_capacity_reservation(doc);
        if (!fresh) return Error{"reservation " + acr.name + " as read: " + fresh.message()};
        if (fresh->pod_namespace != acr.pod_namespace) {
          return Error{"reservation " + acr.name + " is held by a pod of namespace \"" + fresh->pod_namespace +
                       "\" whose name gives the same reservation name; not overwritten"};
        }
        attempt.resource_version = fresh->resource_version;
      } else if (read->status != 404) {
        return api_error("GET " + path(acr.name), *read);
      }
    }
  }
  return Error{"reservation " + acr.name + ": written by someone else on every attempt"};
}

Status DriveReservations::remove(const std::string& name) {
  auto terms = send_terms();
  if (!terms) return terms.error();
  auto reply = client_.remove(path(name), *terms);
  if (!reply) return reply.error();
  if (reply->status != 200 && reply->status != 202 && reply->status != 404) {
    return api_error("DELETE " + path(name), *reply);
  }
  store_.reservation_written(name, std::nullopt, clock_.now());
  return {};
}

std::size_t DriveReservations::collect(TimePoint now) {
  if (const engine::Gate* gate = gate_.load(); gate && gate->not_leading()) {
    leading_since_.reset();
    return 0;
  }
  if (!leading_since_) {
    leading_since_ = now;
    store_.confirm_all(now);
  }
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
