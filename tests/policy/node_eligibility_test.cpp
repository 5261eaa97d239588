// Cases modelled on kube-scheduler's own plugin tests (nodeaffinity, tainttoleration,
// nodeunschedulable, noderesources/fit): the bind must agree with the scheduler on each.
#include "extender/policy/node_eligibility.h"

#include <gtest/gtest.h>

namespace extender::policy {
namespace {

using model::NodeSelectorRequirement;
using model::NodeSelectorTerm;
using model::Taint;
using model::Toleration;

model::NodeSupply node(model::StringMap labels = {}, std::vector<Taint> taints = {}, std::string name = "node-1") {
  model::NodeSupply n;
  n.name = std::move(name);
  n.labels = std::move(labels);
  n.taints = std::move(taints);
  n.taints_known = true;
  n.labels_known = true;
  return n;
}

NodeSelectorRequirement req(std::string key, std::string op, std::vector<std::string> values = {}) {
  return {std::move(key), std::move(op), std::move(values)};
}

NodeSelectorTerm labels_term(std::vector<NodeSelectorRequirement> expressions) { return {std::move(expressions), {}}; }

model::PodDemand pod_with(model::PodConstraints constraints) {
  model::PodDemand p;
  p.constraints = std::move(constraints);
  return p;
}

TEST(NodeAffinity, SelectorAndRequiredTermsAsKubeSchedulerReadsThem) {
  using Terms = std::vector<NodeSelectorTerm>;
  struct Case {
    const char* what;
    model::StringMap selector;
    std::optional<Terms> terms;
    model::StringMap labels;
    bool matches;
    std::string reason = {};
  };
  const std::vector<Case> cases = {
      {"no selector, no affinity", {}, std::nullopt, {}, true},
      {"missing labels", {{"foo", "bar"}}, std::nullopt, {}, false, "nodeSelector foo=bar: node has no label foo"},
      {"same labels", {{"foo", "bar"}}, std::nullopt, {{"foo", "bar"}}, true},
      {"node labels are a superset", {{"foo", "bar"}}, std::nullopt, {{"foo", "bar"}, {"baz", "blah"}}, true},
      {"node labels are a subset",
       {{"foo", "bar"}, {"baz", "blah"}},
       std::nullopt,
       {{"foo", "bar"}},
       false,
       "nodeSelector baz=blah: node has no label baz"},
      {"selector value differs",
       {{"team", "a"}},
       std::nullopt,
       {{"team", "b"}},
       false,
       "nodeSelector team=a: node has team=b"},
      {"In that matches", {}, Terms{labels_term({req("foo", "In", {"value1", "value2"})})}, {{"foo", "value2"}}, true},
      {"In that does not match",
       {},
       Terms{labels_term({req("foo", "In", {"value1", "value2"})})},
       {{"foo", "bar"}},
       false,
       "node meets no term of the pod's required node affinity"},
      {"In on a missing label", {}, Terms{labels_term({req("foo", "In", {"bar"})})}, {}, false},
      {"Gt that matches (leading zeros are decimal)",
       {},
       Terms{labels_term({req("kernel-version", "Gt", {"0204"})})},
       {{"kernel-version", "0206"}},
       true},
      {"Gt that does not match",
       {},
       Terms{labels_term({req("kernel-version", "Gt", {"0204"})})},
       {{"kernel-version", "0204"}},
       false},
      {"Lt that matches, signed", {}, Terms{labels_term({req("n", "Lt", {"+3"})})}, {{"n", "-7"}}, true},
      {"Gt on a label that is not an integer", {}, Terms{labels_term({req("n", "Gt", {"1"})})}, {{"n", "2x"}}, false},
      {"Gt with two values is invalid", {}, Terms{labels_term({req("n", "Gt", {"1", "2"})})}, {{"n", "5"}}, false},
      {"Gt with a value that is not an integer is invalid",
       {},
       Terms{labels_term({req("n", "Gt", {"one"})})},
       {{"n", "5"}},
       false},
      {"Lt beyond int64 is invalid",
       {},
       Terms{labels_term({req("n", "Lt", {"9223372036854775808"})})},
       {{"n", "5"}},
       false},
      {"NotIn that matches",
       {},
       Terms{labels_term({req("mem-type", "NotIn", {"DDR", "DDR2"})})},
       {{"mem-type", "DDR3"}},
       true},
      {"NotIn on a missing label matches", {}, Terms{labels_term({req("mem-type", "NotIn", {"DDR"})})}, {}, true},
      {"NotIn that does not match",
       {},
       Terms{labels_term({req("mem-type", "NotIn", {"DDR", "DDR2"})})},
       {{"mem-type", "DDR"}},
       false},
      {"Exists", {}, Terms{labels_term({req("GPU", "Exists")})}, {{"GPU", "NVIDIA-GRID-K1"}}, true},
      {"Exists on a missing label", {}, Terms{labels_term({req("GPU", "Exists")})}, {{"gpu", "x"}}, false},
      {"DoesNotExist", {}, Terms{labels_term({req("GPU", "DoesNotExist")})}, {{"foo", "bar"}}, true},
      {"DoesNotExist on a present label", {}, Terms{labels_term({req("GPU", "DoesNotExist")})}, {{"GPU", ""}}, false},
      {"Exists with values is invalid", {}, Terms{labels_term({req("GPU", "Exists", {"x"})})}, {{"GPU", "x"}}, false},
      {"In with no values is invalid", {}, Terms{labels_term({req("foo", "In")})}, {{"foo", ""}}, false},
      {"NotIn with no values is invalid", {}, Terms{labels_term({req("foo", "NotIn")})}, {}, false},
      {"an unknown operator matches nothing",
       {},
       Terms{labels_term({req("foo", "Equals", {"bar"})})},
       {{"foo", "bar"}},
       false},
      {"expressions of a term are ANDed",
       {},
       Terms{labels_term({req("foo", "In", {"bar"}), req("zone", "In", {"z1"})})},
       {{"foo", "bar"}, {"zone", "z2"}},
       false},
      {"terms are ORed",
       {},
       Terms{labels_term({req("foo", "In", {"nope"})}), labels_term({req("zone", "In", {"z1"})})},
       {{"foo", "bar"}, {"zone", "z1"}},
       true},
      {"an invalid term fails alone, the others still count",
       {},
       Terms{labels_term({req("n", "Gt", {"1", "2"})}), labels_term({req("n", "Exists")})},
       {{"n", "5"}},
       true},
      {"a term with no requirements matches nothing", {}, Terms{NodeSelectorTerm{}}, {{"foo", "bar"}}, false},
      {"no terms at all matches nothing",
       {},
       Terms{},
       {{"foo", "bar"}},
       false,
       "required node affinity has no terms, which no node meets"},
      {"selector and affinity must both hold",
       {{"foo", "bar"}},
       Terms{labels_term({req("zone", "Exists")})},
       {{"zone", "z1"}},
       false},
      {"metadata.name In the node's name",
       {},
       Terms{NodeSelectorTerm{{}, {req("metadata.name", "In", {"node-1"})}}},
       {},
       true},
      {"metadata.name In another name",
       {},
       Terms{NodeSelectorTerm{{}, {req("metadata.name", "In", {"node-2"})}}},
       {},
       false},
      {"metadata.name NotIn another name",
       {},
       Terms{NodeSelectorTerm{{}, {req("metadata.name", "NotIn", {"node-2"})}}},
       {},
       true},
      {"metadata.name In two names is invalid",
       {},
       Terms{NodeSelectorTerm{{}, {req("metadata.name", "In", {"node-1", "node-2"})}}},
       {},
       false},
      {"metadata.name Exists is not a field operator",
       {},
       Terms{NodeSelectorTerm{{}, {req("metadata.name", "Exists")}}},
       {},
       false},
      {"fields and labels of one term are ANDed",
       {},
       Terms{NodeSelectorTerm{{req("foo", "In", {"bar"})}, {req("metadata.name", "In", {"node-1"})}}},
       {{"foo", "baz"}},
       false},
  };
  for (const auto& c : cases) {
    model::PodConstraints pod;
    pod.node_selector = c.selector;
    pod.required_node_affinity = c.terms;
    const std::string why = node_affinity_mismatch(pod, node(c.labels));
    EXPECT_EQ(why.empty(), c.matches) << c.what << ": " << why;
    if (!c.reason.empty()) {
      EXPECT_EQ(why, c.reason) << c.what;
    }
    const Eligibility e = node_eligibility(pod_with(pod), node(c.labels), {});
    EXPECT_EQ(e.check, c.matches ? Ineligible::kNone : Ineligible::kNodeAffinity) << c.what;
  }
}

TEST(TaintToleration, NoScheduleAndNoExecuteTaintsMustBeTolerated) {
  struct Case {
    const char* what;
    std::vector<Toleration> tolerations;
    std::vector<Taint> taints;
    bool tolerated;
  };
  const std::vector<Case> cases = {
      {"no tolerations, no taints", {}, {}, true},
      {"no tolerations, a NoSchedule taint", {}, {{"dedicated", "user1", "NoSchedule"}}, false},
      {"no tolerations, a NoExecute taint", {}, {{"dedicated", "user1", "NoExecute"}}, false},
      {"no tolerations, a PreferNoSchedule taint", {}, {{"dedicated", "user1", "PreferNoSchedule"}}, true},
      {"Equal with the taint's value",
       {{"dedicated", "Equal", "user1", "NoSchedule"}},
       {{"dedicated", "user1", "NoSchedule"}},
       true},
      {"an empty operator is Equal",
       {{"dedicated", "", "user1", "NoSchedule"}},
       {{"dedicated", "user1", "NoSchedule"}},
       true},
      {"Equal with another value",
       {{"dedicated", "Equal", "user2", "NoSchedule"}},
       {{"dedicated", "user1", "NoSchedule"}},
       false},
      {"Exists on the key", {{"foo", "Exists", "", "NoSchedule"}}, {{"foo", "bar", "NoSchedule"}}, true},
      {"every taint tolerated",
       {{"dedicated", "Equal", "user2", "NoSchedule"}, {"foo", "Exists", "", "NoSchedule"}},
       {{"dedicated", "user2", "NoSchedule"}, {"foo", "bar", "NoSchedule"}},
       true},
      {"one of two taints untolerated",
       {{"foo", "Exists", "", "NoSchedule"}},
       {{"foo", "bar", "NoSchedule"}, {"team", "b", "NoSchedule"}},
       false},
      {"key and value match, another effect",
       {{"foo", "Equal", "bar", "PreferNoSchedule"}},
       {{"foo", "bar", "NoSchedule"}},
       false},
      {"key and value match, an empty effect matches every effect",
       {{"foo", "Equal", "bar", ""}},
       {{"foo", "bar", "NoExecute"}},
       true},
      {"an empty key with Exists tolerates every taint",
       {{"", "Exists", "", ""}},
       {{"a", "1", "NoSchedule"}, {"b", "", "NoExecute"}},
       true},
      {"an empty key with Exists, one effect", {{"", "Exists", "", "NoSchedule"}}, {{"b", "", "NoExecute"}}, false},
      {"an unknown operator tolerates nothing", {{"foo", "Gte", "bar", ""}}, {{"foo", "bar", "NoSchedule"}}, false},
  };
  for (const auto& c : cases) {
    const std::string why = untolerated_taint(c.tolerations, node({}, c.taints));
    EXPECT_EQ(why.empty(), c.tolerated) << c.what << ": " << why;
    model::PodConstraints pod;
    pod.tolerations = c.tolerations;
    EXPECT_EQ(node_eligibility(pod_with(pod), node({}, c.taints), {}).check,
              c.tolerated ? Ineligible::kNone : Ineligible::kTaint)
        << c.what;
  }
  EXPECT_EQ(untolerated_taint({}, node({}, {{"team", "b", "NoSchedule"}})),
            "node has taint team=b:NoSchedule, which the pod does not tolerate");
  EXPECT_EQ(untolerated_taint({}, node({}, {{"gpu", "", "NoExecute"}})),
            "node has taint gpu:NoExecute, which the pod does not tolerate");
}

TEST(NodeUnschedulable, ACordonedNodeTakesOnlyPodsThatTolerateIt) {
  struct Case {
    const char* what;
    bool unschedulable;
    std::vector<Toleration> tolerations;
    bool eligible;
  };
  const std::vector<Case> cases = {
      {"schedulable", false, {}, true},
      {"unschedulable, no tolerations", true, {}, false},
      {"unschedulable, tolerated by key and effect",
       true,
       {{"node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"}},
       true},
      {"unschedulable, tolerated by key for every effect",
       true,
       {{"node.kubernetes.io/unschedulable", "Exists", "", ""}},
       true},
      {"unschedulable, tolerated by an empty key with Exists", true, {{"", "Exists", "", ""}}, true},
      {"unschedulable, a toleration for NoExecute only",
       true,
       {{"node.kubernetes.io/unschedulable", "Exists", "", "NoExecute"}},
       false},
  };
  for (const auto& c : cases) {
    model::NodeSupply n = node();
    n.unschedulable = c.unschedulable;
    model::PodConstraints pod;
    pod.tolerations = c.tolerations;
    const Eligibility e = node_eligibility(pod_with(pod), n, {});
    EXPECT_EQ(e.check, c.eligible ? Ineligible::kNone : Ineligible::kUnschedulable) << c.what << ": " << e.reason;
  }
}

TEST(NodeResourcesFit, CpuMemoryAndPodsAsTheWatchCountsThem) {
  constexpr std::int64_t kGi = std::int64_t{1} << 30;
  struct Case {
    const char* what;
    std::int64_t pod_cpu, pod_memory;
    std::int64_t node_cpu, node_memory, node_pods;
    std::int64_t used_cpu, used_memory, used_pods;
    std::string reason;  // "" when it fits
  };
  const std::vector<Case> cases = {
      {"no resources requested always fits", 0, 0, 10000, 20 * kGi, 32, 10000, 20 * kGi, 5, ""},
      {"fits exactly", 5000, 5 * kGi, 10000, 20 * kGi, 32, 5000, 15 * kGi, 5, ""},
      {"too much cpu", 16000, 0, 1000, 20 * kGi, 32, 0, 0, 0, "cpu: pod requests 16, node has 1 free of 1"},
      {"too much cpu given what is used", 1500, 0, 4000, 20 * kGi, 32, 3000, 0, 1,
       "cpu: pod requests 1500m, node has 1 free of 4"},
      {"too much memory", 0, 8 * kGi, 10000, 20 * kGi, 32, 0, 13 * kGi, 1,
       "memory: pod requests 8 GiB, node has 7 GiB free of 20 GiB"},
      {"overcommitted: nothing free", 100, 0, 1000, 0, 0, 2000, 0, 0, "cpu: pod requests 100m, node has 0 free of 1"},
      {"no room for another pod, even asking nothing", 0, 0, 10000, 20 * kGi, 1, 0, 0, 1,
       "pods: node runs 1 of 1 allocatable"},
      {"the last pod slot", 0, 0, 10000, 20 * kGi, 110, 0, 0, 109, ""},
      {"a node that gives no cpu, memory or pods is not judged on them", 64000, 512 * kGi, 0, 0, 0, 99000, 0, 500, ""},
  };
  for (const auto& c : cases) {
    model::PodDemand pod;
    pod.cpu_milli = c.pod_cpu;
    pod.memory_bytes = c.pod_memory;
    model::NodeSupply n = node();
    n.cpu_milli = c.node_cpu;
    n.memory_bytes = c.node_memory;
    n.pods = c.node_pods;
    model::NodeUsage used;
    used.cpu_milli = c.used_cpu;
    used.memory_bytes = c.used_memory;
    used.pods = c.used_pods;
    EXPECT_EQ(insufficient_resources(pod, n, used), c.reason) << c.what;
    EXPECT_EQ(node_eligibility(pod, n, used).check, c.reason.empty() ? Ineligible::kNone : Ineligible::kResources)
        << c.what;
  }
}

TEST(NodeEligibility, OnlyWhatIsKnownOfTheNodeIsJudged) {
  model::NodeSupply n = node({}, {{"team", "b", "NoSchedule"}});
  n.unschedulable = true;
  n.taints_known = false;
  n.labels_known = false;
  n.cpu_milli = 1000;
  model::PodConstraints constraints;
  constraints.node_selector = {{"team", "a"}};
  model::PodDemand pod = pod_with(constraints);
  EXPECT_TRUE(node_eligibility(pod, n, {}).eligible()) << "an inventory node: labels and taints not known";
  n.taints_known = true;
  EXPECT_EQ(node_eligibility(pod, n, {}).check, Ineligible::kUnschedulable) << "a request's node, labels filtered";
  n.unschedulable = false;
  EXPECT_EQ(node_eligibility(pod, n, {}).check, Ineligible::kTaint);
  n.taints.clear();
  EXPECT_TRUE(node_eligibility(pod, n, {}).eligible()) << "its partial labels are not judged";
  pod.cpu_milli = 2000;
  EXPECT_EQ(node_eligibility(pod, n, {}).check, Ineligible::kResources);
}

TEST(NodeEligibility, ChecksInKubeSchedulersPluginOrder) {
  model::NodeSupply n = node({{"team", "b"}}, {{"team", "b", "NoSchedule"}});
  n.cpu_milli = 1000;
  model::PodConstraints constraints;
  constraints.node_selector = {{"team", "a"}};
  model::PodDemand pod = pod_with(constraints);
  pod.cpu_milli = 16000;
  n.unschedulable = true;
  EXPECT_EQ(node_eligibility(pod, n, {}).check, Ineligible::kUnschedulable);
  n.unschedulable = false;
  EXPECT_EQ(node_eligibility(pod, n, {}).check, Ineligible::kTaint);
  pod.constraints.tolerations = {{"team", "Exists", "", ""}};
  EXPECT_EQ(node_eligibility(pod, n, {}).check, Ineligible::kNodeAffinity);
  pod.constraints.node_selector = {{"team", "b"}};
  EXPECT_EQ(node_eligibility(pod, n, {}).check, Ineligible::kResources);
  pod.cpu_milli = 1000;
  EXPECT_TRUE(node_eligibility(pod, n, {}).eligible());
}

}  // namespace
}  // namespace extender::policy
