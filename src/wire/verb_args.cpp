#include "extender/wire/verb_args.h"

#include <simdjson.h>
#include <nlohmann/json.hpp>

#include "extender/wire/extender_args.h"
#include "extender/wire/json_text.h"
#include "extender/wire/k8s_objects.h"
#include "json_fields.h"

namespace extender::wire {
namespace {

using detail::field;
using nlohmann::json;

namespace dom = simdjson::dom;

json to_json(dom::element e) { return json::parse(simdjson::to_string(e), nullptr, /*allow_exceptions=*/false); }

// Go's encoding/json fills a struct field from every key that matches its name case-insensitively,
// in document order, skipping nulls: the last such key wins. nlohmann's objects keep neither the
// order nor duplicates, so each struct-typed object is reduced first, from simdjson's DOM (which
// keeps both), to one key per field; `inner` turns a field's value into what the decoders read.
template <class Inner>
json reduce_struct(dom::object obj, std::initializer_list<std::string_view> fields, Inner&& inner) {
  json out = json::object();
  for (auto [key, value] : obj) {
    for (std::string_view f : fields) {
      if (!key_matches(key, f)) continue;
      if (!value.is_null()) out[std::string(f)] = inner(f, value);
      break;
    }
  }
  return out;
}

json as_is(std::string_view, dom::element e) { return to_json(e); }

// A map of node name -> victims (Go: a duplicate key's last value wins; null means none).
json reduce_victim_map(dom::element m, bool full_pods) {
  dom::object obj;
  if (m.get_object().get(obj)) return to_json(m);
  json out = json::object();
  for (auto [node, victims] : obj) {
    dom::object vobj;
    if (victims.is_null()) {
      out.erase(std::string(node));
      continue;
    }
    if (victims.get_object().get(vobj)) {
      out[std::string(node)] = to_json(victims);
      continue;
    }
    out[std::string(node)] = reduce_struct(vobj, {"Pods", "NumPDBViolations"}, [&](std::string_view f, dom::element v) {
      dom::array pods;
      if (f != "Pods" || full_pods || v.get_array().get(pods)) return to_json(v);
      json list = json::array();
      for (dom::element p : pods) {
        dom::object pobj;
        list.push_back(p.get_object().get(pobj) ? to_json(p) : reduce_struct(pobj, {"UID"}, as_is));
      }
      return list;
    });
  }
  return out;
}

template <class Inner>
Result<json> parse_struct(std::string_view body, std::initializer_list<std::string_view> fields, Inner&& inner) {
  if (!nesting_within(body, kMaxNesting)) {
    return Error{"body nests deeper than " + std::to_string(kMaxNesting) + " levels"};
  }
  dom::parser parser;
  dom::element doc;
  if (parser.parse(body.data(), body.size()).get(doc)) return Error{"body is not JSON"};
  dom::object top;
  if (doc.get_object().get(top)) return Error{"body is not a JSON object"};
  return reduce_struct(top, fields, std::forward<Inner>(inner));
}

Status decode_victims(const json& v, bool full_pods, Victims& out, const std::string& path) {
  EXTENDER_TRY(detail::expect_object(&v, path));
  EXTENDER_TRY(detail::read_int(field(v, "NumPDBViolations"), out.num_pdb_violations, path + ".NumPDBViolations"));
  const json* pods = field(v, "Pods");
  EXTENDER_TRY(detail::expect_array(pods, path + ".Pods"));
  if (!pods) return {};
  for (const auto& p : *pods) {
    if (p.is_null()) continue;
    if (full_pods) {
      auto pod = decode_pod(p);
      if (!pod) return Error{path + ".Pods[]: " + pod.message()};
      out.uids.push_back(pod->uid);
      out.pods.push_back(std::move(*pod));
    } else {
      std::string uid;
      EXTENDER_TRY(detail::expect_object(&p, path + ".Pods[]"));
      EXTENDER_TRY(detail::read_string(field(p, "UID"), uid, path + ".Pods[].UID"));
      out.uids.push_back(std::move(uid));
    }
  }
  return {};
}

Status decode_victim_map(const json* m, bool full_pods, std::map<std::string, Victims>& out, const char* name) {
  EXTENDER_TRY(detail::expect_object(m, name));
  if (!m) return {};
  out.clear();
  for (auto it = m->begin(); it != m->end(); ++it) {
    if (it.value().is_null()) continue;
    Victims victims;
    EXTENDER_TRY(decode_victims(it.value(), full_pods, victims, std::string(name) + "." + it.key()));
    out[it.key()] = std::move(victims);
  }
  return {};
}

}  // namespace

Result<BindingArgs> decode_binding_args(std::string_view body) {
  auto doc = parse_struct(body, {"PodName", "PodNamespace", "PodUID", "Node"}, as_is);
  if (!doc) return doc.error();
  BindingArgs out;
  EXTENDER_TRY(detail::read_string(field(*doc, "PodName"), out.pod_name, "PodName"));
  EXTENDER_TRY(detail::read_string(field(*doc, "PodNamespace"), out.pod_namespace, "PodNamespace"));
  EXTENDER_TRY(detail::read_string(field(*doc, "PodUID"), out.pod_uid, "PodUID"));
  EXTENDER_TRY(detail::read_string(field(*doc, "Node"), out.node, "Node"));
  if (out.pod_uid.empty()) return Error{"body has no PodUID"};
  if (out.node.empty()) return Error{"body has no Node"};
  return out;
}

Result<PreemptionArgs> decode_preemption_args(std::string_view body) {
  auto doc =
      parse_struct(body, {"Pod", "NodeNameToVictims", "NodeNameToMetaVictims"}, [](std::string_view f, dom::element v) {
        return f == "Pod" ? to_json(v) : reduce_victim_map(v, f == "NodeNameToVictims");
      });
  if (!doc) return doc.error();
  PreemptionArgs out;
  const json* pod = field(*doc, "Pod");
  if (!pod) return Error{"body has no Pod"};
  auto decoded = decode_pod(*pod);
  if (!decoded) return decoded.error();
  out.pod = std::move(*decoded);
  const json* full = field(*doc, "NodeNameToVictims");
  const json* meta = field(*doc, "NodeNameToMetaVictims");
  if (full && meta) return Error{"body sets both NodeNameToVictims and NodeNameToMetaVictims"};
  EXTENDER_TRY(decode_victim_map(full, true, out.victims_by_node, "NodeNameToVictims"));
  EXTENDER_TRY(decode_victim_map(meta, false, out.victims_by_node, "NodeNameToMetaVictims"));
  return out;
}

}  // namespace extender::wire
