#pragma once
// ExtenderArgs (the filter and prioritize request body), decoded with simdjson's on-demand API:
// node lists of tens of MB are walked once without a DOM, keeping only what policy reads, plus the
// byte range of each node object so that a filter answer can echo passing nodes byte for byte.
// Node names are views into the body. What decoding costs is bounded by the body: at most
// DecodeLimits::max_nodes nodes (refused at the next one, while decoding), a Pod of at most
// 4 MiB, and a body above 1 MiB whose token index could pass 1.25 times its size is refused
// before it is indexed.
// Thread-safe: each call uses a parser of its own thread.
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "extender/common/result.h"
#include "extender/model/node.h"
#include "extender/model/pod.h"
#include "extender/wire/padded_body.h"
#include "extender/wire/pod_memo.h"

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
  std::optional<std::vector<NodeItem>> nodes;  // the `Nodes` form (nodeCacheCapable: false)
  // The `NodeNames` form (nodeCacheCapable: true): views into the body, or into owned_names for a
  // name written with escapes and for names given by set_node_names.
  std::optional<std::vector<std::string_view>> node_names;
  // Shared by copies, so that their views stay valid; a deque, so that adding keeps them valid.
  std::shared_ptr<std::deque<std::string>> owned_names;

  // The `NodeNames` form from names the args own.
  void set_node_names(std::vector<std::string> names);
  // Candidate names in request order, whichever form was sent.
  std::vector<std::string_view> candidate_names() const;
};

struct DecodeLimits {
  // Nodes in either form. Kubernetes supports 5,000 nodes a cluster and the largest managed
  // clusters 65,000; kube-scheduler sends only the nodes that passed its own filters.
  std::size_t max_nodes = 100'000;
};

// Why a body was refused. kTooLarge: well-formed as far as read, but past DecodeLimits or too
// dense to index within its size; the daemon declines it rather than calling it malformed.
enum class DecodeFailure { kMalformed, kTooLarge };

// Decodes a request body.
// `body` must outlive the result (NodeItem::raw and node_names point into it). On error the
// message says where, and `failure` (when given) says which kind. With `memo`, a pod whose JSON
// was decoded before is copied from it, and a pod decoded is kept there.
Result<ExtenderArgs> decode_extender_args(const PaddedBody& body, const NodeFieldFilter& fields = {},
                                          const DecodeLimits& limits = {}, DecodeFailure* failure = nullptr,
                                          PodMemo* memo = nullptr);

// The maximum nesting accepted in any request body.
inline constexpr std::size_t kMaxNesting = 128;

}  // namespace extender::wire
