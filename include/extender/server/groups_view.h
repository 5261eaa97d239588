#pragma once
// The /debug/groups view: pod groups in flight (docs/kubernetes.md, "Pod groups"): per group, each
// member kube-scheduler has decided but not yet published, the node the daemon holds it on, its
// phase (filtered, nominated, prebind), what it holds there and how long the hold has left; pods
// held outside a group (nominated) under the group "". Indented JSON a person reads with curl.
// Pure rendering.
#include <string>
#include <vector>

#include "extender/common/clock.h"
#include "extender/state/in_flight_holds.h"

namespace extender::server {

std::string render_groups(const std::vector<state::InFlightHolds::HoldView>& holds, TimePoint now);

}  // namespace extender::server
