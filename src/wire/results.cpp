#include "extender/wire/results.h"

#include <charconv>

#include "extender/wire/json_text.h"

namespace extender::wire {
namespace {

void append_string_map(std::string& out, const std::map<std::string_view, std::string>& m) {
  out.push_back('{');
  bool first = true;
  for (const auto& [k, v] : m) {
    if (!first) out.push_back(',');
    first = false;
    append_json_string(out, k);
    out.push_back(':');
    append_json_string(out, v);
  }
  out.push_back('}');
}

}  // namespace

std::string encode_filter_result(const FilterResult& r) {
  std::string out;
  size_t reserve = 256;
  if (r.node_objects) {
    for (auto raw : *r.node_objects) reserve += raw.size() + 1;
  }
  if (r.node_names) {
    for (const auto& n : *r.node_names) reserve += n.size() + 3;
  }
  for (const auto* m : {&r.failed, &r.failed_unresolvable}) {
    for (const auto& [k, v] : *m) reserve += k.size() + v.size() + 6;
  }
  out.reserve(reserve);
  out += "{\"Nodes\":";
  if (r.node_objects) {
    out += "{\"metadata\":{},\"items\":[";
    bool first = true;
    for (auto raw : *r.node_objects) {
      if (!first) out.push_back(',');
      first = false;
      out += raw;
    }
    out += "]}";
  } else {
    out += "null";
  }
  out += ",\"NodeNames\":";
  if (r.node_names) {
    out.push_back('[');
    bool first = true;
    for (const auto& n : *r.node_names) {
      if (!first) out.push_back(',');
      first = false;
      append_json_string(out, n);
    }
    out.push_back(']');
  } else {
    out += "null";
  }
  out += ",\"FailedNodes\":";
  append_string_map(out, r.failed);
  out += ",\"FailedAndUnresolvableNodes\":";
  append_string_map(out, r.failed_unresolvable);
  out += ",\"Error\":";
  append_json_string(out, r.error);
  out.push_back('}');
  return out;
}

std::string encode_host_priority_list(const std::vector<HostScore>& scores) {
  std::string out;
  size_t reserve = 2;
  for (const auto& s : scores) reserve += s.host.size() + 40;
  out.reserve(reserve);
  out.push_back('[');
  bool first = true;
  for (const auto& s : scores) {
    if (!first) out.push_back(',');
    first = false;
    out += "{\"Host\":";
    append_json_string(out, s.host);
    out += ",\"Score\":";
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, s.score).ptr;
    out.append(digits, end);
    out.push_back('}');
  }
  out.push_back(']');
  return out;
}

std::string encode_binding_result(std::string_view error) {
  std::string out = "{\"Error\":";
  append_json_string(out, error);
  out.push_back('}');
  return out;
}

std::string encode_preemption_result(const std::map<std::string, MetaVictims>& victims_by_node) {
  std::string out = "{\"NodeNameToMetaVictims\":{";
  bool first_node = true;
  for (const auto& [node, victims] : victims_by_node) {
    if (!first_node) out.push_back(',');
    first_node = false;
    append_json_string(out, node);
    out += ":{\"Pods\":[";
    bool first = true;
    for (const auto& uid : victims.uids) {
      if (!first) out.push_back(',');
      first = false;
      out += "{\"UID\":";
      append_json_string(out, uid);
      out.push_back('}');
    }
    out += "],\"NumPDBViolations\":" + std::to_string(victims.num_pdb_violations) + "}";
  }
  out += "}}";
  return out;
}

std::string encode_request_error(std::string_view message) {
  std::string out = "{\"error\":";
  append_json_string(out, message);
  out.push_back('}');
  return out;
}

}  // namespace extender::wire
