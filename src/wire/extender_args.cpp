#include "extender/wire/extender_args.h"

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

Error malformed(std::string_view where, simdjson::error_code code) {
  return Error{std::string(where) + ": " + simdjson::error_message(code)};
}

#define OD_TRY(expr, where)                 \
  do {                                      \
    if (auto _e = (expr); _e) {             \
      return malformed((where), _e);        \
    }                                       \
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
    while (!token.empty() && (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' || token.back() == '\t')) {
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
      std::string* target = key_matches(key, "key") ? &t.key : key_matches(key, "value") ? &t.value
                          : key_matches(key, "effect") ? &t.effect : nullptr;
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

Result<std::vector<NodeItem>> read_node_list(od::value v, const NodeFieldFilter& fields) {
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
      od::value nv;
      OD_TRY(element.get(nv), "Nodes.items[]");
      auto node = read_node(nv, fields);
      if (!node) return node.error();
      nodes.push_back(std::move(*node));
    }
  }
  return nodes;
}

Result<std::vector<std::string>> read_names(od::value v) {
  od::array arr;
  OD_TRY(v.get_array().get(arr), "NodeNames (expected an array of strings)");
  std::vector<std::string> names;
  for (auto element : arr) {
    std::string_view s;
    OD_TRY(element.get_string().get(s), "NodeNames[] (expected a string)");
    names.emplace_back(s);
  }
  return names;
}

Result<model::Pod> read_pod(od::value v) {
  od::object obj;
  OD_TRY(v.get_object().get(obj), "Pod (expected an object)");
  std::string_view raw;
  OD_TRY(obj.raw_json().get(raw), "Pod");
  if (!nesting_within(raw, kMaxNesting)) return Error{"Pod nests deeper than " + std::to_string(kMaxNesting) + " levels"};
  nlohmann::json pod = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (pod.is_discarded()) return Error{"Pod: not valid JSON"};
  return decode_pod(pod);
}

}  // namespace

std::vector<std::string_view> ExtenderArgs::candidate_names() const {
  std::vector<std::string_view> names;
  if (nodes) {
    for (const auto& n : *nodes) names.push_back(n.node.name);
  } else if (node_names) {
    for (const auto& n : *node_names) names.push_back(n);
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

Result<ExtenderArgs> decode_extender_args(simdjson::padded_string_view body, const NodeFieldFilter& fields) {
  // Each thread keeps a parser sized for ordinary bodies; outsized ones get a parser of their own,
  // so that one huge request does not pin its buffers to a worker thread for good.
  thread_local od::parser shared_parser(kMaxBody);
  std::optional<od::parser> own_parser;
  od::parser* parser = &shared_parser;
  if (body.size() > kLargeBody) parser = &own_parser.emplace(kMaxBody);
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
      auto pod = read_pod(v);
      if (!pod) return pod.error();
      args.pod = std::move(*pod);
      has_pod = true;
    } else if (key_matches(key, "Nodes")) {
      args.nodes.reset();
      if (is_null(v)) continue;
      auto nodes = read_node_list(v, fields);
      if (!nodes) return nodes.error();
      args.nodes = std::move(*nodes);
    } else if (key_matches(key, "NodeNames")) {
      args.node_names.reset();
      if (is_null(v)) continue;
      auto names = read_names(v);
      if (!names) return names.error();
      args.node_names = std::move(*names);
    }
  }
  if (!has_pod) return Error{"body has no Pod"};
  if (args.nodes && args.node_names) return Error{"body sets both Nodes and NodeNames; kube-scheduler sends one of them"};
  return args;
}

}  // namespace extender::wire
