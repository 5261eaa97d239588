#include "extender/inspect/inspect_tables.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

namespace extender::inspect {
namespace {

using nlohmann::json;
using Row = std::vector<std::string>;

std::string printable(const std::string& s) {
  std::string out;
  for (char c : s) out.push_back(static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c);
  return out;
}

// UTF-8 aware width: continuation bytes take no column.
std::size_t width(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string table(const Row& header, const std::vector<Row>& rows) {
  std::vector<std::size_t> w(header.size(), 0);
  auto measure = [&w](const Row& r) {
    for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], width(r[i]));
  };
  measure(header);
  for (const auto& r : rows) measure(r);
  std::string out;
  auto line = [&](const Row& r) {
    std::string l;
    for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) {
      l += r[i];
      if (i + 1 < r.size()) l += std::string(w[i] - width(r[i]) + 2, ' ');
    }
    out += l + "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
  return out;
}

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return "";
  return it->is_string() ? printable(it->get<std::string>()) : it->dump();
}

std::int64_t integer(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

Result<json> parse(std::string_view text, const char* what) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{std::string("the daemon's answer is not ") + what};
  return j;
}

std::string gpus_cell(const json& node) {
  std::string out;
  const auto it = node.find("gpus");
  if (it == node.end() || !it->is_object()) return "-";
  for (const auto& [resource, g] : it->items()) {
    if (!g.is_object()) continue;
    if (!out.empty()) out += ", ";
    out += std::to_string(integer(g, "used")) + "/" + std::to_string(integer(g, "allocatable")) + " " +
           printable(resource);
  }
  return out.empty() ? "-" : out;
}

// One character a device: "W" held whole, "S" holding shares, "." free.
std::string devices_cell(const json& node) {
  const auto it = node.find("gpu_devices");
  if (it == node.end() || !it->is_object() || !it->contains("devices")) return "-";
  std::string out;
  for (const auto& d : (*it)["devices"]) {
    if (!d.is_object()) continue;
    out += integer(d, "whole") > 0 ? 'W' : integer(d, "shares") > 0 ? 'S' : '.';
  }
  return out;
}

std::string pools_cell(const json& node) {
  std::string out;
  const auto it = node.find("pools");
  if (it == node.end() || !it->is_array()) return "-";
  for (const auto& p : *it) {
    if (!p.is_object()) continue;
    if (!out.empty()) out += ", ";
    out += str(p, "name") + " " + str(p, "free") + " free";
  }
  return out.empty() ? "-" : out;
}

std::size_t count(const json& node, const char* key) {
  const auto it = node.find(key);
  return it != node.end() && it->is_array() ? it->size() : 0;
}

const json& nodes_of(const json& state) {
  static const json kEmpty = json::array();
  const auto it = state.find("nodes");
  return it != state.end() && it->is_array() ? *it : kEmpty;
}

// The devices' holders: index -> "pod (whole)" / "pod 10 GiB", from the node's pods and reservations.
std::map<std::int64_t, std::vector<std::string>> holders(const json& node) {
  std::map<std::int64_t, std::vector<std::string>> out;
  for (const char* list : {"pods", "reservations"}) {
    const auto it = node.find(list);
    if (it == node.end() || !it->is_array()) continue;
    for (const auto& c : *it) {
      const auto devs = c.find("gpu_devices");
      if (!c.is_object() || devs == c.end() || !devs->is_array()) continue;
      for (const auto& h : *devs) {
        if (!h.is_object()) continue;
        std::string who = str(c, "pod");
        if (!h.contains("whole")) who.append(" ").append(std::to_string(integer(h, "bytes") >> 20)).append(" MiB");
        if (std::string(list) == "reservations") who += " (in flight)";
        out[integer(h, "index")].push_back(who);
      }
    }
  }
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

Result<std::string> nodes_table(std::string_view state_json) {
  auto state = parse(state_json, "/debug/state");
  if (!state) return state.error();
  std::vector<Row> rows;
  for (const auto& n : nodes_of(*state)) {
    if (!n.is_object()) continue;
    rows.push_back({str(n, "name"), gpus_cell(n), devices_cell(n), std::to_string(count(n, "pods")),
                    std::to_string(count(n, "reservations")), pools_cell(n)});
  }
  return table({"NODE", "GPUS USED", "DEVICES (W whole, S shared, . free)", "PODS", "IN FLIGHT", "POOLS"}, rows);
}

Result<std::string> node_table(std::string_view node_json) {
  auto node = parse(node_json, "/debug/nodes/<name>");
  if (!node) return node.error();
  std::string out = "node " + str(*node, "name") + ": GPUs " + gpus_cell(*node) + "\n";
  const auto by_index = holders(*node);
  std::vector<Row> rows;
  if (auto it = node->find("gpu_devices"); it != node->end() && it->is_object() && it->contains("devices")) {
    for (const auto& d : (*it)["devices"]) {
      if (!d.is_object()) continue;
      const std::int64_t i = integer(d, "index");
      const std::string state = integer(d, "whole") > 0 ? "whole" : integer(d, "shares") > 0 ? "shared" : "free";
      auto h = by_index.find(i);
      rows.push_back({std::to_string(i), state, d.contains("free") ? str(d, "free") : "-",
                      h == by_index.end() ? "-" : join(h->second)});
    }
  }
  out += table({"GPU", "STATE", "FREE", "HOLDERS"}, rows);
  std::vector<Row> pools;
  if (auto it = node->find("pools"); it != node->end() && it->is_array()) {
    for (const auto& p : *it) {
      if (!p.is_object()) continue;
      pools.push_back({str(p, "name"), str(p, "capacity"), str(p, "used"), str(p, "free"), str(p, "source")});
    }
  }
  if (!pools.empty()) {
    out += '\n';
    out += table({"POOL", "CAPACITY", "USED", "FREE", "SOURCE"}, pools);
  }
  return out;
}

Result<std::string> pools_table(std::string_view state_json) {
  auto state = parse(state_json, "/debug/state");
  if (!state) return state.error();
  std::vector<Row> rows;
  for (const auto& n : nodes_of(*state)) {
    if (!n.is_object() || !n.contains("pools") || !n["pools"].is_array()) continue;
    std::map<std::string, std::int64_t> in_flight;
    if (auto r = n.find("reservations"); r != n.end() && r->is_array()) {
      for (const auto& c : *r) {
        if (!c.is_object() || !c.contains("volumes") || !c["volumes"].is_array()) continue;
        for (const auto& v : c["volumes"]) {
          if (v.is_object()) in_flight[str(v, "pool")] += integer(v, "bytes");
        }
      }
    }
    for (const auto& p : n["pools"]) {
      if (!p.is_object()) continue;
      const std::int64_t flight = in_flight[str(p, "name")];
      rows.push_back({str(n, "name"), str(p, "name"), str(p, "capacity"),
                      p.contains("published") ? str(p, "published") : "-", str(p, "used"),
                      flight > 0 ? std::to_string(flight >> 30) + " GiB" : "0", str(p, "free"), str(p, "source")});
    }
  }
  return table({"NODE", "POOL", "CAPACITY", "PUBLISHED", "USED", "IN FLIGHT", "FREE", "SOURCE"}, rows);
}

Result<std::string> pod_table(std::string_view pending_json) {
  auto v = parse(pending_json, "/debug/pods/<namespace>/<name>");
  if (!v) return v.error();
  std::string out = "pod " + str(*v, "pod") + " needs " + str(*v, "demand") + "\n";
  out += "last /filter: " + std::to_string(integer(*v, "nodes_passed")) + " of " +
         std::to_string(integer(*v, "nodes_in")) + " nodes passed\n";
  if (v->contains("error")) out += "error: " + str(*v, "error") + "\n";
  std::vector<Row> rows;
  if (auto it = v->find("groups"); it != v->end() && it->is_array()) {
    for (const auto& g : *it) {
      if (!g.is_object()) continue;
      std::vector<std::string> sample;
      if (auto s = g.find("sample"); s != g.end() && s->is_array()) {
        for (const auto& name : *s) sample.push_back(name.is_string() ? printable(name.get<std::string>()) : "?");
      }
      rows.push_back({std::to_string(integer(g, "nodes")), join(sample), str(g, "reason"), str(g, "to_fit")});
    }
  }
  return out + table({"NODES", "FOR EXAMPLE", "REASON", "TO FIT"}, rows);
}

}  // namespace extender::inspect
