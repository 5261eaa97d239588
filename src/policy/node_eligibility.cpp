#include "extender/policy/node_eligibility.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>

#include "extender/policy/fit.h"

namespace extender::policy {
namespace {

using model::NodeSelectorRequirement;

constexpr std::string_view kUnschedulableTaint = "node.kubernetes.io/unschedulable";
constexpr std::string_view kNameField = "metadata.name";

// Go's strconv.ParseInt(s, 10, 64): an optional sign, decimal digits, nothing else, no overflow.
std::optional<std::int64_t> parse_int(std::string_view s) {
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s.front() == '-') return std::nullopt;
  }
  if (s.empty()) return std::nullopt;
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

bool has_value(const NodeSelectorRequirement& r, std::string_view value) {
  return std::find(r.values.begin(), r.values.end(), value) != r.values.end();
}

// A field requirement: In or NotIn with one value, on metadata.name (other fields read as empty).
bool field_requirement_holds(const NodeSelectorRequirement& r, const model::NodeSupply& node) {
  if ((r.op != "In" && r.op != "NotIn") || r.values.size() != 1) return false;
  const std::string_view value = r.key == kNameField ? std::string_view(node.name) : std::string_view();
  const bool equal = value == r.values[0];
  return r.op == "In" ? equal : !equal;
}

std::string taint_text(const model::Taint& t) {
  return t.key + (t.value.empty() ? "" : "=" + t.value) + ":" + t.effect;
}

std::string cpu_text(std::int64_t milli) {
  return milli % 1000 == 0 ? std::to_string(milli / 1000) : std::to_string(milli) + "m";
}

std::int64_t free_of(std::int64_t allocatable, std::int64_t used) {
  return used >= allocatable ? 0 : allocatable - std::max<std::int64_t>(used, 0);
}

}  // namespace

// A label requirement as labels.Requirement reads it. An invalid one (kube-scheduler drops its
// whole term) holds for no node.
bool label_requirement_holds(const model::NodeSelectorRequirement& r, const model::StringMap& labels) {
  auto label = labels.find(r.key);
  const bool present = label != labels.end();
  if (r.op == "In" || r.op == "NotIn") {
    if (r.values.empty()) return false;
    const bool in = present && has_value(r, label->second);
    return r.op == "In" ? in : !in;
  }
  if (r.op == "Exists" || r.op == "DoesNotExist") {
    if (!r.values.empty()) return false;
    return r.op == "Exists" ? present : !present;
  }
  if (r.op != "Gt" && r.op != "Lt") return false;
  auto bound = r.values.size() == 1 ? parse_int(r.values[0]) : std::nullopt;
  auto value = present ? parse_int(label->second) : std::nullopt;
  if (!bound || !value) return false;
  return r.op == "Gt" ? *value > *bound : *value < *bound;
}

bool tolerates(const model::Toleration& toleration, const model::Taint& taint) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  if (toleration.op.empty() || toleration.op == "Equal") return toleration.value == taint.value;
  return toleration.op == "Exists";
}

bool term_matches(const model::NodeSelectorTerm& term, const model::NodeSupply& node) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  return std::all_of(term.match_expressions.begin(), term.match_expressions.end(),
                     [&](const auto& r) { return label_requirement_holds(r, node.labels); }) &&
         std::all_of(term.match_fields.begin(), term.match_fields.end(),
                     [&](const auto& r) { return field_requirement_holds(r, node); });
}

std::string node_affinity_mismatch(const model::PodConstraints& pod, const model::NodeSupply& node) {
  for (const auto& [key, want] : pod.node_selector) {
    auto label = node.labels.find(key);
    if (label == node.labels.end()) return "nodeSelector " + key + "=" + want + ": node has no label " + key;
    if (label->second != want) return "nodeSelector " + key + "=" + want + ": node has " + key + "=" + label->second;
  }
  if (!pod.required_node_affinity) return {};
  const auto& terms = *pod.required_node_affinity;
  if (std::any_of(terms.begin(), terms.end(), [&](const auto& t) { return term_matches(t, node); })) return {};
  if (terms.empty()) return "required node affinity has no terms, which no node meets";
  return "node meets no term of the pod's required node affinity";
}

std::string untolerated_taint(const std::vector<model::Toleration>& tolerations, const model::NodeSupply& node) {
  for (const auto& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (std::any_of(tolerations.begin(), tolerations.end(), [&](const auto& t) { return tolerates(t, taint); })) {
      continue;
    }
    return "node has taint " + taint_text(taint) + ", which the pod does not tolerate";
  }
  return {};
}

std::string insufficient_resources(const model::PodDemand& pod, const model::NodeSupply& node,
                                   const model::NodeUsage& usage) {
  if (node.pods > 0 && usage.pods >= node.pods) {
    return "pods: node runs " + std::to_string(usage.pods) + " of " + std::to_string(node.pods) + " allocatable";
  }
  if (const std::int64_t free = free_of(node.cpu_milli, usage.cpu_milli); node.cpu_milli > 0 && pod.cpu_milli > free) {
    return "cpu: pod requests " + cpu_text(pod.cpu_milli) + ", node has " + cpu_text(free) + " free of " +
           cpu_text(node.cpu_milli);
  }
  if (const std::int64_t free = free_of(node.memory_bytes, usage.memory_bytes);
      node.memory_bytes > 0 && pod.memory_bytes > free) {
    return "memory: pod requests " + format_bytes(pod.memory_bytes) + ", node has " + format_bytes(free) + " free of " +
           format_bytes(node.memory_bytes);
  }
  return {};
}

Eligibility node_eligibility(const model::PodDemand& pod, const model::NodeSupply& node,
                             const model::NodeUsage& usage) {
  if (node.taints_known) {
    const auto& tolerations = pod.constraints.tolerations;
    const model::Taint cordon{std::string(kUnschedulableTaint), "", "NoSchedule"};
    if (node.unschedulable &&
        std::none_of(tolerations.begin(), tolerations.end(), [&](const auto& t) { return tolerates(t, cordon); })) {
      return {Ineligible::kUnschedulable, "node is unschedulable (cordoned), and the pod does not tolerate " +
                                              std::string(kUnschedulableTaint) + ":NoSchedule"};
    }
    if (auto why = untolerated_taint(tolerations, node); !why.empty()) return {Ineligible::kTaint, std::move(why)};
  }
  if (node.labels_known) {
    if (auto why = node_affinity_mismatch(pod.constraints, node); !why.empty()) {
      return {Ineligible::kNodeAffinity, std::move(why)};
    }
  }
  if (auto why = insufficient_resources(pod, node, usage); !why.empty()) {
    return {Ineligible::kResources, std::move(why)};
  }
  return {};
}

}  // namespace extender::policy
