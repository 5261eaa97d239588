#include "extender/wire/results.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <utility>

#include "extender/wire/json_text.h"

namespace extender::wire {
namespace {

// Sorts `items` by key(item), keeping the order of items with equal keys: least significant digit
// first, 11 bits a pass, as many passes as the largest key needs.
template <typename Key>
void radix_sort(std::vector<std::uint32_t>& items, Key key) {
  constexpr unsigned kBits = 11;
  constexpr std::uint32_t kDigits = 1u << kBits;
  std::uint32_t largest = 0;
  for (std::uint32_t item : items) largest = std::max(largest, key(item));
  std::vector<std::uint32_t> spare(items.size());
  std::vector<std::uint32_t> count(kDigits);
  for (unsigned shift = 0; shift < 32 && (largest >> shift) != 0; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (std::uint32_t item : items) ++count[(key(item) >> shift) & (kDigits - 1)];
    std::uint32_t at = 0;
    for (auto& c : count) at += std::exchange(c, at);
    for (std::uint32_t item : items) spare[count[(key(item) >> shift) & (kDigits - 1)]++] = item;
    items.swap(spare);
  }
}

using SortedFailures = std::vector<std::pair<std::string_view, const std::string*>>;

// A name its producer vouched needs no escaping, quoted.
void append_quoted(std::string& out, std::string_view s) {
  out.push_back('"');
  out.append(s);
  out.push_back('"');
}

// Each distinct reason is escaped once, however many nodes failed for it.
void append_failed(std::string& out, const FailedNodes& nodes, const SortedFailures& failed) {
  const std::vector<std::string>& reasons = nodes.reasons();
  std::vector<std::string> escaped(reasons.size());
  out.push_back('{');
  bool first = true;
  for (const auto& [k, v] : failed) {
    if (!first) out.push_back(',');
    first = false;
    if (nodes.names_plain()) {
      append_quoted(out, k);
    } else {
      append_json_string(out, k);
    }
    out.push_back(':');
    std::string& reason = escaped[static_cast<std::size_t>(v - reasons.data())];
    if (reason.empty()) append_json_string(reason, *v);
    out += reason;
  }
  out.push_back('}');
}

}  // namespace

std::uint32_t FailedNodes::add(std::string_view node, std::string reason, NameFacts facts) {
  if (reasons_.empty() || reasons_.back() != reason) reasons_.push_back(std::move(reason));
  const auto index = static_cast<std::uint32_t>(reasons_.size() - 1);
  entries_.push_back({node, index, facts.order});
  note(facts);
  return index;
}

void FailedNodes::add_again(std::string_view node, std::uint32_t reason, NameFacts facts) {
  if (reason >= reasons_.size()) throw std::out_of_range("no failure reason " + std::to_string(reason));
  entries_.push_back({node, reason, facts.order});
  note(facts);
}

const std::string* FailedNodes::find(std::string_view node) const {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->node == node) return &reasons_[it->reason];
  }
  return nullptr;
}

const std::string& FailedNodes::at(std::string_view node) const {
  const std::string* reason = find(node);
  if (!reason) throw std::out_of_range("no failed node " + std::string(node));
  return *reason;
}

std::vector<std::pair<std::string_view, const std::string*>> FailedNodes::sorted() const {
  std::vector<std::uint32_t> order(entries_.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  if (ordered_) {
    radix_sort(order, [&](std::uint32_t i) { return entries_[i].order; });
  } else {
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      const int c = entries_[a].node.compare(entries_[b].node);
      return c < 0 || (c == 0 && a < b);
    });
  }
  std::vector<std::pair<std::string_view, const std::string*>> out;
  out.reserve(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Entry& e = entries_[order[i]];
    if (i + 1 < order.size() && entries_[order[i + 1]].node == e.node) continue;
    out.emplace_back(e.node, &reasons_[e.reason]);
  }
  return out;
}

std::string encode_filter_result(const FilterResult& r) {
  std::string out;
  size_t reserve = 256;
  if (r.node_objects) {
    for (auto raw : *r.node_objects) reserve += raw.size() + 1;
  }
  if (r.node_names) {
    for (const auto& n : *r.node_names) reserve += n.size() + 3;
  }
  const SortedFailures failed = r.failed.sorted();
  const SortedFailures unresolvable = r.failed_unresolvable.sorted();
  for (const auto* m : {&failed, &unresolvable}) {
    for (const auto& [k, v] : *m) reserve += k.size() + v->size() + 6;
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
      if (r.node_names_plain) {
        append_quoted(out, n);
      } else {
        append_json_string(out, n);
      }
    }
    out.push_back(']');
  } else {
    out += "null";
  }
  out += ",\"FailedNodes\":";
  append_failed(out, r.failed, failed);
  out += ",\"FailedAndUnresolvableNodes\":";
  append_failed(out, r.failed_unresolvable, unresolvable);
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

std::vector<HostScore> above_lowest(std::vector<HostScore> scores) {
  if (scores.empty()) return scores;
  const std::int64_t lowest =
      std::min_element(scores.begin(), scores.end(), [](const HostScore& a, const HostScore& b) {
        return a.score < b.score;
      })->score;
  std::erase_if(scores, [lowest](const HostScore& s) { return s.score == lowest; });
  for (auto& s : scores) s.score -= lowest;
  return scores;
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
