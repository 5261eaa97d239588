#pragma once
// The /debug view: per node its supply, its usage by pod, devices and pools, and reservations with
// their age, and what it holds beyond its capacity ("overcommitted", with the likely causes), as
// indented JSON a person reads with curl. Pure rendering of a snapshot.
#include <string>

#include "extender/common/clock.h"
#include "extender/server/leadership_view.h"
#include "extender/state/cluster_state.h"

namespace extender::server {

// With `leadership`, the view starts with this replica's part in leader election.
std::string render_state(const state::Snapshot& snapshot, TimePoint now, const LeadershipView* leadership = nullptr);
std::string render_node(const state::NodeState& node, TimePoint now);

}  // namespace extender::server
