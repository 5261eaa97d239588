#pragma once
// Decodes a pod spec's placement constraints (nodeSelector, affinity.nodeAffinity's required
// terms, tolerations) into model::PodConstraints, by the rules of k8s_objects.h: absent or null is
// empty, a value of the wrong type is an error naming its path. Private to wire; pure.
#include <nlohmann/json.hpp>

#include "extender/common/result.h"
#include "extender/model/pod_constraints.h"

namespace extender::wire::detail {

Status decode_pod_constraints(const nlohmann::json& spec, model::PodConstraints& out);
// A NodeSelector ({nodeSelectorTerms}) at `path`: nullopt when absent, else its terms.
Status read_node_selector(const nlohmann::json* selector, std::optional<std::vector<model::NodeSelectorTerm>>& out,
                          std::string_view path);
// A list of requirements ({key, operator, values}), appended to out.
Status read_requirements(const nlohmann::json* v, std::vector<model::NodeSelectorRequirement>& out,
                         std::string_view path);

}  // namespace extender::wire::detail
