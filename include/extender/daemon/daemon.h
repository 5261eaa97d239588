#pragma once
// Daemon: the whole daemon built from its config in one place: the cluster state and demand
// cache, the feed (an inventory and request nodes standalone, the API server's watches and
// binder in kubernetes mode), leader election, the engine, metrics, the APIs and their listeners.
// create() builds and binds the listeners; start() runs the watches, the election, the
// listeners' threads and the sweeper; stop() makes the daemon not ready, finishes the requests
// in flight and stops everything (the destructor stops a started daemon). start() and stop() are
// called from one thread.
#include <memory>
#include <string>

#include "extender/common/result.h"
#include "extender/config/config.h"
#include "extender/engine/extender.h"
#include "extender/state/cluster_state.h"

namespace extender::daemon {

class Daemon {
 public:
  // Fails with a readable reason: an inventory or credentials that cannot be loaded, an address
  // that cannot be bound.
  static Result<std::unique_ptr<Daemon>> create(const config::Config& cfg);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  void start();
  void stop();

  int port() const;        // the scheduler listener's
  int admin_port() const;  // the admin listener's; 0 when admin.listen is empty (served on port())
  engine::Extender& extender();
  state::ClusterState& state();

  struct Parts;  // defined in the .cpp

 private:
  explicit Daemon(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

}  // namespace extender::daemon
