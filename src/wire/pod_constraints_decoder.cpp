#include "pod_constraints_decoder.h"

#include "json_fields.h"

namespace extender::wire::detail {
namespace {

// Calls read(item, item's path) for each item of an array of objects (absent: none).
template <class Read>
Status for_each_object(const json* v, std::string_view path, const Read& read) {
  EXTENDER_TRY(expect_array(v, path));
  if (!v) return {};
  for (std::size_t i = 0; i < v->size(); ++i) {
    const std::string p = at(path, i);
    EXTENDER_TRY(expect_object(&(*v)[i], p));
    EXTENDER_TRY(read((*v)[i], p));
  }
  return {};
}

Status read_required_affinity(const json& spec, model::PodConstraints& out) {
  const json* affinity = field(spec, "affinity");
  EXTENDER_TRY(expect_object(affinity, "Pod.spec.affinity"));
  const json* node_affinity = affinity ? field(*affinity, "nodeAffinity") : nullptr;
  EXTENDER_TRY(expect_object(node_affinity, "Pod.spec.affinity.nodeAffinity"));
  constexpr std::string_view kRequired =
      "Pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
  const json* required =
      node_affinity ? field(*node_affinity, "requiredDuringSchedulingIgnoredDuringExecution") : nullptr;
  return read_node_selector(required, out.required_node_affinity, kRequired);
}

Status read_tolerations(const json* v, std::vector<model::Toleration>& out) {
  return for_each_object(v, "Pod.spec.tolerations", [&](const json& item, const std::string& p) -> Status {
    model::Toleration t;
    EXTENDER_TRY(read_string(field(item, "key"), t.key, p + ".key"));
    EXTENDER_TRY(read_string(field(item, "operator"), t.op, p + ".operator"));
    EXTENDER_TRY(read_string(field(item, "value"), t.value, p + ".value"));
    EXTENDER_TRY(read_string(field(item, "effect"), t.effect, p + ".effect"));
    out.push_back(std::move(t));
    return {};
  });
}

}  // namespace

Status read_node_selector(const json* selector, std::optional<std::vector<model::NodeSelectorTerm>>& out,
                          std::string_view path) {
  EXTENDER_TRY(expect_object(selector, path));
  if (!selector) return {};
  auto& terms = out.emplace();
  return for_each_object(
      field(*selector, "nodeSelectorTerms"), std::string(path) + ".nodeSelectorTerms",
      [&](const json& item, const std::string& p) -> Status {
        model::NodeSelectorTerm term;
        EXTENDER_TRY(
            read_requirements(field(item, "matchExpressions"), term.match_expressions, p + ".matchExpressions"));
        EXTENDER_TRY(read_requirements(field(item, "matchFields"), term.match_fields, p + ".matchFields"));
        terms.push_back(std::move(term));
        return {};
      });
}

Status read_requirements(const json* v, std::vector<model::NodeSelectorRequirement>& out, std::string_view path) {
  return for_each_object(v, path, [&](const json& item, const std::string& p) -> Status {
    model::NodeSelectorRequirement r;
    EXTENDER_TRY(read_string(field(item, "key"), r.key, p + ".key"));
    EXTENDER_TRY(read_string(field(item, "operator"), r.op, p + ".operator"));
    EXTENDER_TRY(read_strings(field(item, "values"), r.values, p + ".values"));
    out.push_back(std::move(r));
    return {};
  });
}

Status decode_pod_constraints(const json& spec, model::PodConstraints& out) {
  EXTENDER_TRY(read_string_map(field(spec, "nodeSelector"), out.node_selector, "Pod.spec.nodeSelector"));
  EXTENDER_TRY(read_required_affinity(spec, out));
  return read_tolerations(field(spec, "tolerations"), out.tolerations);
}

}  // namespace extender::wire::detail
