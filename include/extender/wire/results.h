#pragma once
// Encoders for the answers, byte for byte as Go's encoding/json writes the extender/v1 structs:
// compact, fields in declaration order, map keys sorted, `<>&` escaped. Pure; thread-safe.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace extender::wire {

// FailedNodes / FailedAndUnresolvableNodes: node names (views into the request) with the reason
// each failed, recorded in any order and written in name order as Go writes a map, the last
// reason recorded for a name winning. Reasons are kept once and named by index, so that nodes
// failing alike (the nodes of one kind mostly do) cost no allocation each. A node may come with
// what the caller knows of its name (NameFacts): its place in name order (any numbering that
// sorts as the names do, such as its index among a name-sorted list of nodes), and that it needs
// no JSON escaping. While every node recorded has a place, the names are put in order by it
// instead of by comparing them; while every one is plain, they are written without a scan.
struct NameFacts {
  static constexpr std::uint32_t kUnordered = UINT32_MAX;
  std::uint32_t order = kUnordered;
  bool plain = false;  // the caller vouches that the name needs no JSON escaping
};

class FailedNodes {
 public:
  using NameFacts = wire::NameFacts;
  static constexpr std::uint32_t kUnordered = NameFacts::kUnordered;
  // Records `node` with `reason` and returns the reason's index (the last one's, when equal).
  std::uint32_t add(std::string_view node, std::string reason, NameFacts facts = {});
  // Records `node` with a reason add() returned.
  void add_again(std::string_view node, std::uint32_t reason, NameFacts facts = {});
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // The reason of `node`, the last recorded; null when it did not fail.
  const std::string* find(std::string_view node) const;
  std::size_t count(std::string_view node) const { return find(node) ? 1 : 0; }
  // The reason of `node`; throws std::out_of_range when it did not fail (as map::at).
  const std::string& at(std::string_view node) const;
  // Each failed node once, in name order, with its reason (a pointer into reasons()).
  std::vector<std::pair<std::string_view, const std::string*>> sorted() const;
  // The distinct reasons, by index.
  const std::vector<std::string>& reasons() const { return reasons_; }
  // Whether every node recorded was vouched plain.
  bool names_plain() const { return plain_; }

 private:
  struct Entry {
    std::string_view node;
    std::uint32_t reason = 0;  // index into reasons_
    std::uint32_t order = kUnordered;
  };
  void note(NameFacts facts) {
    ordered_ = ordered_ && facts.order != kUnordered;
    plain_ = plain_ && facts.plain;
  }
  std::vector<Entry> entries_;
  std::vector<std::string> reasons_;
  bool ordered_ = true;  // every entry has an order
  bool plain_ = true;    // every entry was vouched plain
};

// Node names and objects are views into the request they answer, which must outlive the result.
struct FilterResult {
  std::optional<std::vector<std::string_view>> node_objects;  // raw node bytes (Nodes form)
  std::optional<std::vector<std::string_view>> node_names;    // NodeNames form
  bool node_names_plain = false;    // the producer vouches that no name in node_names needs JSON escaping
  FailedNodes failed;               // FailedNodes
  FailedNodes failed_unresolvable;  // FailedAndUnresolvableNodes
  std::string error;
};
std::string encode_filter_result(const FilterResult& r);

struct HostScore {
  std::string_view host;  // a view into the request
  std::int64_t score = 0;
};
// A bare JSON array, as HostPriorityList is.
std::string encode_host_priority_list(const std::vector<HostScore>& scores);
// The same ranking in fewer entries: each score less the lowest, the hosts then at 0 left out
// (all equal: none). kube-scheduler adds an extender's weighted score to each node it lists and
// nothing to the others, so lowering every candidate by one amount changes none of its choices;
// an answer over ~500 candidates where most tie at the bottom (empty nodes under packing) shrinks
// to the few above them, and so does kube-scheduler's decoding of it. Order kept.
std::vector<HostScore> above_lowest(std::vector<HostScore> scores);

std::string encode_binding_result(std::string_view error);

struct MetaVictims {
  std::vector<std::string> uids;
  std::int64_t num_pdb_violations = 0;
};
std::string encode_preemption_result(const std::map<std::string, MetaVictims>& victims_by_node);

// {"error":"..."} for answers to malformed requests (people with curl read these).
std::string encode_request_error(std::string_view message);

}  // namespace extender::wire
