#pragma once
// The coordination.k8s.io/v1 Lease that leader election runs on: its record (holder, duration,
// times, transitions, resourceVersion), decoded from and encoded to the API's JSON, and LeaseStore,
// the three calls the election makes on it. ApiLeaseStore makes them on the API server: updates
// carry the resourceVersion read, so a write based on a stale read is refused (409) instead of
// overwriting another replica's. Decoding is pure; ApiLeaseStore is thread-safe (ApiClient is).
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "extender/common/result.h"
#include "extender/kube/api_client.h"

namespace extender::kube {

struct LeaseRecord {
  std::string holder;  // spec.holderIdentity; empty: released
  std::int64_t lease_duration_seconds = 0;
  std::string acquire_time;      // spec.acquireTime (MicroTime), as written
  std::string renew_time;        // spec.renewTime (MicroTime), as written
  std::int64_t transitions = 0;  // spec.leaseTransitions
  std::string resource_version;  // metadata.resourceVersion; empty for a Lease not created yet

  // Same holder, duration, times and transitions: the lease has not been written since.
  bool same_spec(const LeaseRecord& other) const;
};

// A Lease object's record. Errors: not JSON, too deep, not an object, or fields of the wrong type.
Result<LeaseRecord> parse_lease(std::string_view json);
// The Lease object to create (no resourceVersion) or update (with it).
std::string lease_body(const std::string& ns, const std::string& name, const LeaseRecord& record);
// A wall-clock time as MicroTime ("2006-01-02T15:04:05.000000Z").
std::string micro_time(std::chrono::system_clock::time_point t);

enum class WriteOutcome { kWritten, kConflict };

class LeaseStore {
 public:
  virtual ~LeaseStore() = default;
  // The lease, nullopt when it does not exist, or an error (unreachable, refused, undecodable).
  virtual Result<std::optional<LeaseRecord>> get() = 0;
  // Creates the lease; kConflict when it exists already. The written record (with its new
  // resourceVersion) is returned through `record`.
  virtual Result<WriteOutcome> create(LeaseRecord& record) = 0;
  // Updates the lease guarded by record.resource_version; kConflict when it changed meanwhile.
  virtual Result<WriteOutcome> update(LeaseRecord& record) = 0;
  // Where the lease lives, for logs ("namespace/name").
  virtual std::string where() const = 0;
};

class ApiLeaseStore : public LeaseStore {
 public:
  ApiLeaseStore(ApiClient& client, std::string ns, std::string name, std::chrono::milliseconds timeout)
      : client_(client), ns_(std::move(ns)), name_(std::move(name)), timeout_(timeout) {}
  Result<std::optional<LeaseRecord>> get() override;
  Result<WriteOutcome> create(LeaseRecord& record) override;
  Result<WriteOutcome> update(LeaseRecord& record) override;
  std::string where() const override { return ns_ + "/" + name_; }

 private:
  Result<WriteOutcome> write(const std::string& method, LeaseRecord& record);
  ApiClient& client_;
  std::string ns_;
  std::string name_;
  std::chrono::milliseconds timeout_;
};

}  // namespace extender::kube
