#pragma once
// PodGroupSink: the watch of scheduling.k8s.io/v1beta1 PodGroups (where served; KEP-4671's
// GenericWorkload gate). kube-scheduler patches a group's PodGroupInitiallyScheduled condition
// after each cycle whose outcome differs from the last one it wrote; a change to False
// (Unschedulable, SchedulerError) means it gave up the cycle and forgot whatever members it had
// assumed, so the holds of that group's members end (state/in_flight_holds.h). A relist that
// shows such a change counts the same. Keeps the groups it has seen, for /debug. Private to sources;
// thread-safe.
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "extender/common/clock.h"
#include "extender/kube/reflector.h"
#include "extender/model/pod_group.h"
#include "extender/state/in_flight_holds.h"

namespace extender::sources {

class PodGroupSink final : public kube::ReflectorSink {
 public:
  // `holds` may be null: the groups are only kept. `clock`: when a group's holds end.
  explicit PodGroupSink(state::InFlightHolds* holds, const Clock& clock = steady_clock())
      : holds_(holds), clock_(clock) {}

  void begin_list() override;
  void list_item(const nlohmann::json& object) override;
  void end_list() override;
  void event(std::string_view type, const nlohmann::json& object) override;

  std::vector<model::PodGroup> groups() const;

 private:
  // Needs mu_. Keeps `group`, ending its members' holds when its condition newly says False.
  void seen(model::PodGroup group);

  state::InFlightHolds* holds_;
  const Clock& clock_;
  mutable std::mutex mu_;
  std::map<std::string, model::PodGroup, std::less<>> groups_;
  std::map<std::string, model::PodGroup, std::less<>> listing_;
  bool listing_active_ = false;
};

}  // namespace extender::sources
