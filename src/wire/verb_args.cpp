#include "extender/wire/verb_args.h"

#include <nlohmann/json.hpp>

#include "extender/wire/extender_args.h"
#include "extender/wire/json_text.h"
#include "extender/wire/k8s_objects.h"
#include "json_fields.h"

namespace extender::wire {
namespace {

using detail::field;
using nlohmann::json;

Result<json> parse_object(std::string_view body) {
  if (!nesting_within(body, kMaxNesting)) {
    return Error{"body nests deeper than " + std::to_string(kMaxNesting) + " levels"};
  }
  json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Error{"body is not JSON"};
  if (!doc.is_object()) return Error{"body is not a JSON object"};
  return doc;
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
  auto doc = parse_object(body);
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
  auto doc = parse_object(body);
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
