#pragma once
// ExtenderArgs (the filter and prioritize request body), decoded with simdjson's on-demand API:
// node lists of tens of MB are walked once without a DOM, keeping only what policy reads, plus the
// byte range of each node object so that a filter answer can echo passing nodes byte for byte.
// Thread-safe: each call uses a parser of its own thread.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "extender/common/result.h"
#include "extender/model/node.h"
#include "extender/model/pod.h"

namespace extender::wire {

struct NodeItem {
  model::Node node;
  std::string_view raw;  // the node object's bytes inside the request body
};

// Which fields of each node to keep; everything else is skipped without being copied. The default
// keeps every label, annotation and resource.
struct NodeFieldFilter {
  bool keep_all = true;
  std::vector<std::string> labels;     // label keys
  std::vector<std::string> resources;  // capacity and allocatable names
  std::string annotation_prefix;       // annotations whose key starts with it (empty: none)

  bool keep_label(std::string_view key) const;
  bool keep_resource(std::string_view name) const;
  bool keep_annotation(std::string_view key) const;
};

struct ExtenderArgs {
  model::Pod pod;
  std::optional<std::vector<NodeItem>> nodes;        // the `Nodes` form (nodeCacheCapable: false)
  std::optional<std::vector<std::string>> node_names; // the `NodeNames` form (nodeCacheCapable: true)

  // Candidate names in request order, whichever form was sent.
  std::vector<std::string_view> candidate_names() const;
};

// Decodes a request body, which must be followed by simdjson::SIMDJSON_PADDING readable bytes.
// `body` must outlive the result (NodeItem::raw points into it). Every error means the request
// itself is malformed (HTTP 400); the message says where.
Result<ExtenderArgs> decode_extender_args(simdjson::padded_string_view body, const NodeFieldFilter& fields = {});

// The maximum nesting accepted in any request body.
inline constexpr std::size_t kMaxNesting = 128;

}  // namespace extender::wire
