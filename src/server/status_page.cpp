#include "extender/server/status_page.h"

#include <algorithm>
#include <charconv>
#include <chrono>

#include "extender/policy/fit.h"
#include "extender/server/cluster_view.h"
#include "extender/server/html_text.h"
#include "extender/server/pending_view.h"

namespace extender::server {
namespace {

using policy::format_bytes;

constexpr int kCell = 16;  // a GPU cell's size in the SVG, pixels
constexpr std::size_t kPodsShown = 100;

constexpr std::string_view kStyle =
    "body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222}"
    "table{border-collapse:collapse;margin:6px 0 18px}td,th{border:1px solid #ccc;padding:3px 6px;"
    "text-align:left;vertical-align:top}th{background:#f3f3f3}h1{font-size:18px}h2{font-size:15px;margin-top:22px}"
    ".num{text-align:right}.quiet{color:#777}.bad{color:#b00}svg{display:block}"
    ".legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}";

std::string num(std::int64_t v) { return std::to_string(v); }

std::string seconds_ago(TimePoint then, TimePoint now) {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(now - then).count();
  return s < 120 ? num(s) + "s ago" : num(s / 60) + "m ago";
}

void head(std::string& out, const StatusInputs& in, std::size_t nodes) {
  out += "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>";
  append_html(out, in.title);
  out += ": " + num(static_cast<std::int64_t>(nodes)) + " nodes</title><style>";
  out += kStyle;
  out += "</style></head><body><h1>";
  append_html(out, in.title);
  out += "</h1>";
}

void quality_section(std::string& out, const PlacementQuality& q) {
  out +=
      "<h2>Placement quality</h2><table id=\"quality\"><tr><th>nodes</th><th>GPUs</th><th>allocated</th>"
      "<th>free GPUs</th><th>fragmented share of free GPUs</th><th>pools used</th></tr><tr>";
  out += "<td class=\"num\">" + num(static_cast<std::int64_t>(q.nodes)) + "</td>";
  out += "<td class=\"num\">" + num(q.gpus_total) + "</td>";
  out += "<td class=\"num\">" + num(q.gpus_allocated) + " (" + percent(q.allocated_share) + ")</td>";
  out += "<td class=\"num\">" + std::to_string(static_cast<std::int64_t>(q.free_gpus + 0.5)) + "</td>";
  out += "<td class=\"num\">" + (q.mix_known ? percent(q.fragmented_share) : std::string("no mix learned")) + "</td>";
  out +=
      "<td class=\"num\">" + format_bytes(q.pool_used_bytes) + " of " + format_bytes(q.pool_capacity_bytes) + "</td>";
  out +=
      "</tr></table><p class=\"quiet\">Fragmented: the free GPU capacity that the recent mix of pod shapes "
      "could not use where it is (expected over the mix).</p>";
}

void groups_section(std::string& out, const std::vector<NodeGroup>& groups) {
  out +=
      "<h2>Alike nodes</h2><table id=\"groups\"><tr><th>nodes</th><th>shape</th><th>first</th>"
      "<th>GPUs whole / shared / free of</th><th>pods</th><th>binds in flight</th><th>pool free</th>"
      "<th>cordoned</th></tr>";
  for (const auto& g : groups) {
    out += "<tr><td class=\"num\">" + num(static_cast<std::int64_t>(g.nodes)) + "</td><td>";
    append_html(out, g.shape);
    out += "</td><td>";
    append_html(out, g.first);
    out += "</td><td class=\"num\">" + num(g.gpus_whole) + " / " + num(g.gpus_shared) + " / " + num(g.gpus_free) +
           " of " + num(g.gpus_total) + "</td><td class=\"num\">" + num(static_cast<std::int64_t>(g.pods)) +
           "</td><td class=\"num\">" + num(static_cast<std::int64_t>(g.in_flight)) + "</td><td class=\"num\">" +
           format_bytes(g.pool_free_bytes) + " of " + format_bytes(g.pool_capacity_bytes) + "</td><td class=\"num\">" +
           num(static_cast<std::int64_t>(g.unschedulable)) + "</td></tr>";
  }
  out += "</table>";
}

void refused_section(std::string& out, const StatusInputs& in) {
  out += "<h2>Pods refused (last answer)</h2>";
  if (in.refused.empty()) {
    out += "<p class=\"quiet\">No pod refused recently.</p>";
    return;
  }
  out +=
      "<table id=\"refused\"><tr><th>pod</th><th>when</th><th>passed / nodes</th><th>last reason (most "
      "nodes)</th></tr>";
  for (std::size_t i = 0; i < in.refused.size() && i < kPodsShown; ++i) {
    const PodRefusal& r = in.refused[i];
    out += "<tr><td><a href=\"/ui?pod=" + url_component(r.pod) + "\">";
    append_html(out, r.pod);
    out += "</a></td><td>" + seconds_ago(r.at, in.now) + "</td><td class=\"num\">" +
           num(static_cast<std::int64_t>(r.nodes_passed)) + " / " + num(static_cast<std::int64_t>(r.nodes_in)) +
           "</td><td>";
    append_html(out, !r.error.empty() ? r.error : r.reasons.empty() ? std::string() : r.reasons.front().reason);
    out += "</td></tr>";
  }
  out += "</table>";
}

void pod_section(std::string& out, const StatusInputs& in, const std::string& pod) {
  out += "<h2 id=\"why\">Why ";
  append_html(out, pod);
  out += " waits</h2>";
  auto it = std::find_if(in.refused.begin(), in.refused.end(), [&](const PodRefusal& r) { return r.pod == pod; });
  if (it == in.refused.end()) {
    out +=
        "<p>The daemon has refused this pod nothing recently (it may be placed, unknown, or past the memory of "
        "the last refused pods).</p>";
    return;
  }
  const PendingView v = pending_view(*it, *in.snapshot, in.now);
  out += "<p>Demand: ";
  append_html(out, v.demand.empty() ? std::string("unknown") : v.demand);
  out += ". Last /filter " + seconds_ago(it->at, in.now) + ": " + num(static_cast<std::int64_t>(v.nodes_passed)) +
         " of " + num(static_cast<std::int64_t>(v.nodes_in)) + " nodes passed.";
  if (!v.error.empty()) {
    out += " Error: ";
    append_html(out, v.error);
  }
  out +=
      "</p><table id=\"pending\"><tr><th>nodes</th><th>for example</th><th>daemon's reason</th><th>what it would "
      "take</th></tr>";
  for (const auto& g : v.groups) {
    out += "<tr><td class=\"num\">" + num(static_cast<std::int64_t>(g.nodes)) + "</td><td>";
    for (std::size_t i = 0; i < g.sample.size(); ++i) {
      if (i) out += ", ";
      append_html(out, g.sample[i]);
    }
    out += "</td><td>";
    append_html(out, g.reason);
    out += g.unresolvable ? " <span class=\"quiet\">(preemption cannot help)</span>" : "";
    out += "</td><td>";
    append_html(out, g.to_fit);
    out += "</td></tr>";
  }
  out += "</table>";
}

// The pods being placed now: reservations of binds in flight (the first kPodsShown, node order).
void in_flight_section(std::string& out, const StatusInputs& in) {
  out += "<h2>Binds in flight</h2>";
  std::size_t shown = 0;
  std::size_t total = 0;
  std::string rows;
  for (const auto& [name, node] : in.snapshot->nodes()) {
    if (node->reservations == 0) continue;
    for (const auto& [uid, claim] : node->claims) {
      if (claim.kind != state::Claim::Kind::kReserved || claim.expires <= in.now) continue;
      if (++total > kPodsShown) continue;
      ++shown;
      rows += "<tr><td>";
      append_html(rows, claim.owner);
      rows += "</td><td>";
      append_html(rows, name);
      rows += "</td><td>" + seconds_ago(claim.since, in.now) + "</td></tr>";
    }
  }
  if (total == 0) {
    out += "<p class=\"quiet\">None.</p>";
    return;
  }
  out += "<table id=\"in-flight\"><tr><th>pod</th><th>node</th><th>reserved</th></tr>" + rows + "</table>";
  if (total > shown) out += "<p class=\"quiet\">" + num(static_cast<std::int64_t>(total - shown)) + " more.</p>";
}

void decisions_section(std::string& out, const StatusInputs& in) {
  out +=
      "<h2>Recent decisions</h2><table id=\"decisions\"><tr><th>when</th><th>verb</th><th>pod</th>"
      "<th>nodes in → out</th><th>outcome</th><th>note</th></tr>";
  for (const auto& d : in.decisions) {
    out += "<tr><td>" + seconds_ago(d.at, in.now) + "</td><td>";
    append_html(out, d.verb);
    out += "</td><td>";
    append_html(out, d.pod);
    out += "</td><td class=\"num\">" + num(static_cast<std::int64_t>(d.nodes_in)) + " → " +
           num(static_cast<std::int64_t>(d.nodes_out)) + "</td><td>";
    append_html(out, d.outcome);
    out += "</td><td>";
    append_html(out, d.note);
    out += "</td></tr>";
  }
  out += "</table>";
}

std::string cell_title(const GpuCell& c) {
  std::string t = c.resource + " " + c.label;
  if (c.capacity_bytes > 0) t += " (" + format_bytes(c.capacity_bytes) + ")";
  if (c.free()) t += ": free";
  for (const auto& h : c.holders) {
    t += "\n" + h.pod + (h.whole ? ": whole" : ": " + format_bytes(h.bytes)) + (h.in_flight ? " (bind in flight)" : "");
  }
  if (c.whole && c.holders.empty()) t += ": in use";
  return t;
}

const char* cell_colour(const GpuCell& c) {
  if (c.whole) return c.kind == GpuCell::Kind::kPartition ? "#7a4fb0" : "#2f6db5";
  return c.kind == GpuCell::Kind::kPartition ? "#e6dcf3" : "#e3eefb";
}

void gpu_svg(std::string& out, const NodeRow& row) {
  if (row.gpus.empty()) {
    out += "<span class=\"quiet\">no GPUs</span>";
    return;
  }
  const int width = static_cast<int>(row.gpus.size()) * (kCell + 2);
  out += "<svg width=\"" + std::to_string(width) + "\" height=\"" + std::to_string(kCell) + "\" role=\"img\">";
  int x = 0;
  for (const auto& c : row.gpus) {
    out += "<g><title>";
    append_html(out, cell_title(c));
    out += "</title><rect x=\"" + std::to_string(x) + "\" y=\"0\" width=\"" + std::to_string(kCell) + "\" height=\"" +
           std::to_string(kCell) + "\" fill=\"" + cell_colour(c) + "\" stroke=\"#555\"/>";
    if (c.shared() && c.capacity_bytes > 0) {
      const int h = static_cast<int>(std::clamp<double>(
          static_cast<double>(c.used_bytes) / static_cast<double>(c.capacity_bytes) * kCell, 1, kCell));
      out += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(kCell - h) + "\" width=\"" +
             std::to_string(kCell) + "\" height=\"" + std::to_string(h) + "\" fill=\"#f0a030\"/>";
    }
    out += "</g>";
    x += kCell + 2;
  }
  out += "</svg>";
}

void holders_text(std::string& out, const NodeRow& row) {
  bool any = false;
  for (const auto& c : row.gpus) {
    for (const auto& h : c.holders) {
      out += any ? "<br>" : "";
      any = true;
      append_html(out, c.label);
      out += ": ";
      append_html(out, h.pod);
      if (!h.whole) {
        out += ' ';
        out += format_bytes(h.bytes);
      }
      if (h.in_flight) out += " (in flight)";
    }
  }
}

void pools_text(std::string& out, const NodeRow& row) {
  for (std::size_t i = 0; i < row.pools.size(); ++i) {
    const PoolRow& p = row.pools[i];
    out += i ? "<br>" : "";
    append_html(out, p.name + ": " + format_bytes(p.free_bytes()) + " free of " + format_bytes(p.capacity_bytes) +
                         (p.published_bytes >= 0 ? ", published " + format_bytes(p.published_bytes) : "") +
                         (p.in_flight_bytes > 0 ? ", " + format_bytes(p.in_flight_bytes) + " in flight" : "") + " (" +
                         p.source + ")");
  }
}

void node_row_html(std::string& out, const NodeRow& row) {
  out += "<tr><td class=\"node\">";
  append_html(out, row.name);
  if (row.unschedulable) out += " <span class=\"quiet\">(cordoned)</span>";
  for (const auto& p : row.problems) {
    out += "<br><span class=\"bad\">";
    append_html(out, p);
    out += "</span>";
  }
  out += "</td><td>";
  gpu_svg(out, row);
  out += "</td><td class=\"num\">" + num(row.gpus_whole) + " / " + num(row.gpus_shared) + " / " + num(row.gpus_free) +
         "</td><td>";
  holders_text(out, row);
  out += "</td><td>";
  pools_text(out, row);
  out += "</td><td class=\"num\">" + num(static_cast<std::int64_t>(row.pods)) + " / " +
         num(static_cast<std::int64_t>(row.in_flight)) + "</td></tr>";
}

void pager(std::string& out, std::size_t page, std::size_t pages) {
  out += "<p class=\"pager\">Page " + num(static_cast<std::int64_t>(page + 1)) + " of " +
         num(static_cast<std::int64_t>(pages)) + ". ";
  if (page > 0) out += "<a href=\"/ui?page=" + num(static_cast<std::int64_t>(page)) + "\">previous</a> ";
  if (page + 1 < pages) out += "<a href=\"/ui?page=" + num(static_cast<std::int64_t>(page + 2)) + "\">next</a>";
  out += "</p>";
}

void nodes_section(std::string& out, const StatusInputs& in, std::size_t page) {
  const auto& nodes = in.snapshot->nodes();
  const std::size_t pages = std::max<std::size_t>(1, (nodes.size() + kNodesPerPage - 1) / kNodesPerPage);
  page = std::min(page, pages - 1);
  out +=
      "<h2>Nodes</h2><p class=\"legend\">GPU cells:<span style=\"background:#e3eefb;border:1px solid #555\"></span>free"
      "<span style=\"background:#f0a030;border:1px solid #555\"></span>shared (height: memory held)"
      "<span style=\"background:#2f6db5;border:1px solid #555\"></span>held whole"
      "<span style=\"background:#7a4fb0;border:1px solid #555\"></span>DRA partition (MIG) allocated</p>";
  pager(out, page, pages);
  out +=
      "<table id=\"nodes\"><tr><th>node</th><th>GPUs</th><th>whole / shared / free</th><th>holders</th>"
      "<th>pools</th><th>pods / in flight</th></tr>";
  auto it = nodes.begin();
  std::advance(it, static_cast<std::ptrdiff_t>(std::min(nodes.size(), page * kNodesPerPage)));
  for (std::size_t k = 0; k < kNodesPerPage && it != nodes.end(); ++k, ++it) {
    node_row_html(out, node_row(*it->second, in.dra ? in.dra->node(it->first) : nullptr, in.now));
  }
  out += "</table>";
  pager(out, page, pages);
}

std::size_t parse_size(std::string_view s) {
  std::size_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() ? v : 0;
}

}  // namespace

PageQuery parse_page_query(std::string_view query) {
  PageQuery q;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const auto eq = pair.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = pair.substr(0, eq);
    const std::string_view value = pair.substr(eq + 1);
    if (key == "page") {
      const std::size_t p = parse_size(value);
      q.page = p > 0 ? p - 1 : 0;
    } else if (key == "pod") {
      q.pod = url_decode(value.substr(0, 1024));
    }
  }
  return q;
}

std::string render_status_page(const StatusInputs& in, const PageQuery& query) {
  const ClusterSummary summary = summarise(*in.snapshot, in.dra, in.mix, in.now);
  std::string out;
  out.reserve(64 * 1024);
  head(out, in, in.snapshot->nodes().size());
  if (!query.pod.empty()) pod_section(out, in, query.pod);
  quality_section(out, summary.quality);
  groups_section(out, summary.groups);
  refused_section(out, in);
  in_flight_section(out, in);
  decisions_section(out, in);
  nodes_section(out, in, query.page);
  out +=
      "<p class=\"quiet\">JSON: /debug/state, /debug/nodes/&lt;name&gt;, /debug/pods/&lt;namespace&gt;/&lt;name&gt;. "
      "Terminal: scheduler-extender inspect.</p></body></html>\n";
  return out;
}

}  // namespace extender::server
