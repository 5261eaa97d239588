#pragma once
// The status page (/ui on the admin port): one server-rendered HTML document with inline SVG and
// CSS, no script and nothing fetched from elsewhere. It shows the placement quality, the groups
// of alike nodes (the whole cluster in a few rows), the pods the daemon refused with their last
// reasons (and, with ?pod=NS/NAME, why that pod waits: pending_view.h), binds in flight, the
// recent decisions, and one page of nodes in name order (?page=N, kNodesPerPage a page), each
// node a row of its GPUs as cells (free, shared with each holder's share, held whole; DRA GPUs
// and partitions alike) and its pools. Every name and reason is HTML-escaped (html_text.h).
// Pure rendering of its inputs; thread-safe.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "extender/common/clock.h"
#include "extender/model/dra_inventory.h"
#include "extender/policy/gpu_placement.h"
#include "extender/server/decision_log.h"
#include "extender/state/cluster_state.h"

namespace extender::server {

inline constexpr std::size_t kNodesPerPage = 100;

struct StatusInputs {
  const state::Snapshot* snapshot = nullptr;  // required
  const model::DraInventory* dra = nullptr;
  std::vector<PodRefusal> refused;  // most recent first
  std::vector<Decision> decisions;  // newest first
  policy::ShapeMix mix;             // the learned mix of shapes; empty: no fragmentation figure
  TimePoint now{};
  std::string title = "scheduler-extender";
};

struct PageQuery {
  std::size_t page = 0;  // 0-based
  std::string pod;       // namespace/name, "" for none
};

// ?page=N (1-based, as shown) and ?pod=NS/NAME; anything else is ignored.
PageQuery parse_page_query(std::string_view query);
std::string render_status_page(const StatusInputs& in, const PageQuery& query);

}  // namespace extender::server
