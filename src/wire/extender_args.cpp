#include "extender/wire/extender_args.h"

#include <simdjson.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "extender/wire/json_text.h"
#include "extender/wire/k8s_objects.h"

namespace extender::wire {
namespace {

namespace od = simdjson::ondemand;

// Bodies above this are parsed by a parser of their own, freed with the request: what a worker
// thread keeps between requests stays small (a 5,000-name NodeNames body is ~190 KB).
constexpr std::size_t kLargeBody = 1u << 20;
constexpr std::size_t kMaxBody = std::size_t{4} << 30;
// The Pod is parsed into a DOM, which costs several times its text: it is held to what the API
// server could have stored.
constexpr std::size_t kMaxPodBytes = std::size_t{4} << 20;

Error malformed(std::string_view where, simdjson::error_code code) {
  return Error{std::string(where) + ": " + simdjson::error_message(code)};
}

#define OD_TRY(expr, where)          \
  do {                               \
    if (auto _e = (expr); _e) {      \
      return malformed((where), _e); \
    }                                \
  } while (0)

bool is_null(od::value& v) {
  od::json_type type;
  if (v.type().get(type)) return false;
  return type == od::json_type::null;
}

// Reads a scalar as text: strings unescaped, numbers as written (Quantity accepts both).
Status read_scalar_text(od::value v, std::string& out, std::string_view where, bool numbers_allowed) {
  od::json_type type;
  OD_TRY(v.type().get(type), where);
  if (type == od::json_type::string) {
    std::string_view s;
    OD_TRY(v.get_string().get(s), where);
    out.assign(s);
    return {};
  }
  if (numbers_allowed && type == od::json_type::number) {
    std::string_view token = v.raw_json_token();
    while (!token.empty() &&
           (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' || token.back() == '\t')) {
      token.remove_suffix(1);
    }
    out.assign(token);
    return {};
  }
  if (type == od::json_type::null) return {};
  return Error{std::string(where) + ": expected " + (numbers_allowed ? "a quantity" : "a string")};
}

// Reads an object of scalars into `out`, keeping the keys `keep` accepts.
template <class Keep>
Status read_map(od::value v, model::StringMap& out, std::string_view where, bool numbers_allowed, const Keep& keep) {
  if (is_null(v)) return {};
  od::object obj;
  OD_TRY(v.get_object().get(obj), std::string(where) + " (expected an object)");
  for (auto f : obj) {
    std::string_view key;
    OD_TRY(f.unescaped_key().get(key), where);
    if (!keep(key)) continue;
    std::string k(key);
    std::string value;
    od::value fv;
    OD_TRY(f.value().get(fv), where);
    if (auto st = read_scalar_text(fv, value, where, numbers_allowed); !st) {
      return Error{std::string(where) + "." + k + st.message().substr(where.size())};
    }
    out[std::move(k)] = std::move(value);
  }
  return {};
}

Status read_taints(od::value v, std::vector<model::Taint>& out) {
  if (is_null(v)) return {};
  od::array arr;
  OD_TRY(v.get_array().get(arr), "Node.spec.taints (expected an array)");
  for (auto item : arr) {
    od::object obj;
    OD_TRY(item.get_object().get(obj), "Node.spec.taints[] (expected an object)");
    model::Taint t;
    for (auto f : obj) {
      std::string_view key;
      OD_TRY(f.unescaped_key().get(key), "Node.spec.taints[]");
      std::string* target = key_matches(key, "key")      ? &t.key
                            : key_matches(key, "value")  ? &t.value
                            : key_matches(key, "effect") ? &t.effect
                                                         : nullptr;
      if (!target) continue;
      od::value fv;
      OD_TRY(f.value().get(fv), "Node.spec.taints[]");
      if (auto st = read_scalar_text(fv, *target, "Node.spec.taints[]", false); !st) return st.error();
    }
    out.push_back(std::move(t));
  }
  return {};
}

Status read_node_section(std::string_view section, od::value v, model::Node& node, const NodeFieldFilter& fields) {
  if (is_null(v)) return {};
  od::object obj;
  OD_TRY(v.get_object().get(obj), "Node." + std::string(section) + " (expected an object)");
  for (auto f : obj) {
    std::string_view key;
    OD_TRY(f.unescaped_key().get(key), "Node");
    od::value fv;
    OD_TRY(f.value().get(fv), "Node");
    Status st;
    if (section == "metadata") {
      if (key_matches(key, "name")) {
        st = read_scalar_text(fv, node.name, "Node.metadata.name", false);
      } else if (key_matches(key, "labels")) {
        node.labels.clear();
        st = read_map(fv, node.labels, "Node.metadata.labels", false, [&](std::string_view k) {
          const bool keep = fields.keep_label(k);
          node.labels_complete = node.labels_complete && keep;
          return keep;
        });
      } else if (key_matches(key, "annotations")) {
        node.annotations.clear();
        st = read_map(fv, node.annotations, "Node.metadata.annotations", false,
                      [&](std::string_view k) { return fields.keep_annotation(k); });
      }
    } else if (section == "spec") {
      if (key_matches(key, "unschedulable") && !is_null(fv)) {
        bool b = false;
        OD_TRY(fv.get_bool().get(b), "Node.spec.unschedulable (expected true or false)");
        node.unschedulable = b;
      } else if (key_matches(key, "taints")) {
        node.taints.clear();
        st = read_taints(fv, node.taints);
      }
    } else if (section == "status") {
      if (key_matches(key, "capacity")) {
        node.capacity.clear();
        st = read_map(fv, node.capacity, "Node.status.capacity", true,
                      [&](std::string_view k) { return fields.keep_resource(k); });
      } else if (key_matches(key, "allocatable")) {
        node.allocatable.clear();
        st = read_map(fv, node.allocatable, "Node.status.allocatable", true,
                      [&](std::string_view k) { return fields.keep_resource(k); });
      }
    }
    if (!st) return st.error();
  }
  return {};
}

Result<NodeItem> read_node(od::value v, const NodeFieldFilter& fields) {
  od::object obj;
  OD_TRY(v.get_object().get(obj), "Nodes.items[] (expected an object)");
  NodeItem item;
  for (auto f : obj) {
    std::string_view key;
    OD_TRY(f.unescaped_key().get(key), "Nodes.items[]");
    od::value fv;
    OD_TRY(f.value().get(fv), "Nodes.items[]");
    for (std::string_view section : {"metadata", "spec", "status"}) {
      if (key_matches(key, section)) {
        if (auto st = read_node_section(section, fv, item.node, fields); !st) return st.error();
        break;
      }
    }
  }
  OD_TRY(obj.reset().error(), "Nodes.items[]");
  OD_TRY(obj.raw_json().get(item.raw), "Nodes.items[]");
  if (item.node.name.empty()) return Error{"Nodes.items[]: a node has no metadata.name"};
  return item;
}

Error too_many(std::string_view form, std::size_t max_nodes) {
  return Error{std::string(form) + " lists more than " + std::to_string(max_nodes) +
               " nodes (server.max_nodes_per_request)"};
}

Result<std::vector<NodeItem>> read_node_list(od::value v, const NodeFieldFilter& fields, const DecodeLimits& limits,
                                             bool& too_large) {
  od::object obj;
  OD_TRY(v.get_object().get(obj), "Nodes (expected a NodeList object)");
  std::vector<NodeItem> nodes;
  for (auto f : obj) {
    std::string_view key;
    OD_TRY(f.unescaped_key().get(key), "Nodes");
    if (!key_matches(key, "items")) continue;
    od::value items;
    OD_TRY(f.value().get(items), "Nodes.items");
    nodes.clear();
    if (is_null(items)) continue;
    od::array arr;
    OD_TRY(items.get_array().get(arr), "Nodes.items (expected an array)");
    for (auto element : arr) {
      if (nodes.size() == limits.max_nodes) {
        too_large = true;
        return too_many("Nodes.items", limits.max_nodes);
      }
      od::value nv;
      OD_TRY(element.get(nv), "Nodes.items[]");
      auto node = read_node(nv, fields);
      if (!node) return node.error();
      nodes.push_back(std::move(*node));
    }
  }
  return nodes;
}

// A name is a view of its bytes in the body unless it has escapes; those are kept unescaped in
// `owned`.
Status read_names(od::value v, std::vector<std::string_view>& names, std::deque<std::string>& owned,
                  const DecodeLimits& limits, bool& too_large) {
  od::array arr;
  OD_TRY(v.get_array().get(arr), "NodeNames (expected an array of strings)");
  names.clear();
  for (auto element : arr) {
    if (names.size() == limits.max_nodes) {
      too_large = true;
      return too_many("NodeNames", limits.max_nodes);
    }
    od::value ev;
    OD_TRY(element.get(ev), "NodeNames[]");
    od::json_type type;
    OD_TRY(ev.type().get(type), "NodeNames[]");
    if (type != od::json_type::string) return Error{"NodeNames[]: expected a string"};
    std::string_view token = ev.raw_json_token();
    while (!token.empty() && token.back() != '"') token.remove_suffix(1);
    if (token.size() < 2) return Error{"NodeNames[]: expected a string"};
    token = token.substr(1, token.size() - 2);
    if (token.find('\\') == std::string_view::npos) {
      names.push_back(token);
      continue;
    }
    std::string_view unescaped;
    OD_TRY(ev.get_string().get(unescaped), "NodeNames[]");
    names.push_back(owned.emplace_back(unescaped));
  }
  return {};
}

Result<model::Pod> read_pod(od::value v, bool& too_large, PodMemo* memo) {
  od::object obj;
  OD_TRY(v.get_object().get(obj), "Pod (expected an object)");
  std::string_view raw;
  OD_TRY(obj.raw_json().get(raw), "Pod");
  if (raw.size() > kMaxPodBytes) {
    too_large = true;
    return Error{"Pod is larger than " + std::to_string(kMaxPodBytes >> 20) +
                 " MiB (the API server takes no request over 3 MiB)"};
  }
  if (memo) {
    if (auto kept = memo->find(raw)) return std::move(*kept);  // these bytes passed every check below
  }
  if (!nesting_within(raw, kMaxNesting)) {
    return Error{"Pod nests deeper than " + std::to_string(kMaxNesting) + " levels"};
  }
  nlohmann::json pod = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (pod.is_discarded()) return Error{"Pod: not valid JSON"};
  auto decoded = decode_pod(pod);
  if (decoded && memo) memo->keep(raw, *decoded);
  return decoded;
}

// simdjson indexes every token of a body before it is read: 4 bytes a token, a token for each
// operator and at most one value after each. True when that index stays within 1.25 times the
// body (bodies kube-scheduler sends need about 0.8 times; 128 MiB of one-letter names would need 2).
bool index_fits(std::string_view body) {
  std::size_t operators = 0;
  for (const char c : body) {
    operators += static_cast<std::size_t>((c == ',') | (c == ':') | (c == '{') | (c == '}') | (c == '[') | (c == ']'));
  }
  return 4 * (2 * operators + 1) <= body.size() + body.size() / 4;
}

Result<ExtenderArgs> decode(simdjson::padded_string_view body, const NodeFieldFilter& fields,
                            const DecodeLimits& limits, PodMemo* memo, bool& too_large) {
  // Each thread keeps a parser sized for ordinary bodies; outsized ones get a parser of their own,
  // so that one huge request does not pin its buffers to a worker thread for good.
  thread_local od::parser shared_parser(kMaxBody);
  std::optional<od::parser> own_parser;
  od::parser* parser = &shared_parser;
  if (body.size() > kLargeBody) {
    if (!index_fits(body)) {
      too_large = true;
      return Error{"body has more JSON tokens than its size allows (over 5 in 32 bytes are punctuation)"};
    }
    parser = &own_parser.emplace(kMaxBody);
  }
  od::document doc;
  OD_TRY(parser->iterate(body).get(doc), "body is not JSON");
  od::json_type top_type;
  OD_TRY(doc.type().get(top_type), "body is not JSON");
  if (top_type != od::json_type::object) return Error{"body is not a JSON object"};
  od::object top;
  OD_TRY(doc.get_object().get(top), "body is not JSON");
  ExtenderArgs args;
  bool has_pod = false;
  for (auto f : top) {
    std::string_view key;
    OD_TRY(f.unescaped_key().get(key), "body");
    od::value v;
    OD_TRY(f.value().get(v), "body");
    if (key_matches(key, "Pod")) {
      has_pod = false;
      if (is_null(v)) continue;
      auto pod = read_pod(v, too_large, memo);
      if (!pod) return pod.error();
      args.pod = std::move(*pod);
      has_pod = true;
    } else if (key_matches(key, "Nodes")) {
      args.nodes.reset();
      if (is_null(v)) continue;
      auto nodes = read_node_list(v, fields, limits, too_large);
      if (!nodes) return nodes.error();
      args.nodes = std::move(*nodes);
    } else if (key_matches(key, "NodeNames")) {
      args.node_names.reset();
      if (is_null(v)) continue;
      if (!args.owned_names) args.owned_names = std::make_shared<std::deque<std::string>>();
      EXTENDER_TRY(read_names(v, args.node_names.emplace(), *args.owned_names, limits, too_large));
    }
  }
  if (!has_pod) return Error{"body has no Pod"};
  if (args.nodes && args.node_names) {
    return Error{"body sets both Nodes and NodeNames; kube-scheduler sends one of them"};
  }
  return args;
}

}  // namespace

void ExtenderArgs::set_node_names(std::vector<std::string> names) {
  owned_names = std::make_shared<std::deque<std::string>>(std::make_move_iterator(names.begin()),
                                                          std::make_move_iterator(names.end()));
  node_names.emplace(owned_names->begin(), owned_names->end());
}

std::vector<std::string_view> ExtenderArgs::candidate_names() const {
  std::vector<std::string_view> names;
  if (nodes) {
    names.reserve(nodes->size());
    for (const auto& n : *nodes) names.push_back(n.node.name);
  } else if (node_names) {
    names = *node_names;
  }
  return names;
}

bool NodeFieldFilter::keep_label(std::string_view key) const {
  return keep_all || std::find(labels.begin(), labels.end(), key) != labels.end();
}

bool NodeFieldFilter::keep_resource(std::string_view name) const {
  return keep_all || std::find(resources.begin(), resources.end(), name) != resources.end();
}

bool NodeFieldFilter::keep_annotation(std::string_view key) const {
  return keep_all || (!annotation_prefix.empty() && key.substr(0, annotation_prefix.size()) == annotation_prefix);
}

Result<ExtenderArgs> decode_extender_args(const PaddedBody& body, const NodeFieldFilter& fields,
                                          const DecodeLimits& limits, DecodeFailure* failure, PodMemo* memo) {
  bool too_large = false;
  const simdjson::padded_string_view padded(body.bytes().data(), body.size(), body.size() + kBodyPadding);
  auto result = decode(padded, fields, limits, memo, too_large);
  if (failure) *failure = too_large ? DecodeFailure::kTooLarge : DecodeFailure::kMalformed;
  return result;
}

}  // namespace extender::wire
