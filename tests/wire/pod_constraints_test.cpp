// A pod's placement constraints (nodeSelector, required node affinity, tolerations), decoded the
// same way from watch objects and from request bodies; and whether a request's node kept all its
// labels (the bind judges selectors only against complete labels).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "extender/wire/extender_args.h"
#include "extender/wire/k8s_objects.h"

namespace extender::wire {
namespace {

using nlohmann::json;

TEST(PodConstraints, DecodesSelectorAffinityAndTolerations) {
  const json pod = json::parse(R"({"metadata":{"name":"p","namespace":"ml","uid":"u"},"spec":{
    "nodeSelector":{"team":"a","kubernetes.io/os":"linux"},
    "affinity":{"nodeAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
        {"matchExpressions":[{"key":"zone","operator":"In","values":["z1","z2"]},{"key":"gpu","operator":"Exists"}]},
        {"matchFields":[{"key":"metadata.name","operator":"In","values":["node-7"]}]}]},
      "preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"preference":{}}]},
      "podAntiAffinity":{}},
    "tolerations":[{"key":"team","operator":"Equal","value":"a","effect":"NoSchedule"},
                   {"operator":"Exists"},
                   {"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]}})");
  auto decoded = decode_pod(pod);
  ASSERT_TRUE(decoded) << decoded.message();
  const model::PodConstraints& c = decoded->constraints;
  EXPECT_EQ(c.node_selector, (model::StringMap{{"team", "a"}, {"kubernetes.io/os", "linux"}}));
  ASSERT_TRUE(c.required_node_affinity);
  ASSERT_EQ(c.required_node_affinity->size(), 2u);
  const auto& first = (*c.required_node_affinity)[0];
  ASSERT_EQ(first.match_expressions.size(), 2u);
  EXPECT_EQ(first.match_expressions[0], (model::NodeSelectorRequirement{"zone", "In", {"z1", "z2"}}));
  EXPECT_EQ(first.match_expressions[1], (model::NodeSelectorRequirement{"gpu", "Exists", {}}));
  EXPECT_TRUE(first.match_fields.empty());
  EXPECT_EQ((*c.required_node_affinity)[1].match_fields,
            (std::vector<model::NodeSelectorRequirement>{{"metadata.name", "In", {"node-7"}}}));
  EXPECT_EQ(c.tolerations,
            (std::vector<model::Toleration>{{"team", "Equal", "a", "NoSchedule"},
                                            {"", "Exists", "", ""},
                                            {"node.kubernetes.io/not-ready", "Exists", "", "NoExecute"}}));
}

TEST(PodConstraints, AbsentAndNullMeanNone) {
  struct Case {
    const char* what;
    const char* spec;
    bool required;  // the pod requires node affinity
    std::size_t terms;
  };
  const Case cases[] = {
      {"no fields", R"({})", false, 0},
      {"all null", R"({"nodeSelector":null,"affinity":null,"tolerations":null})", false, 0},
      {"affinity without nodeAffinity", R"({"affinity":{"podAffinity":{}}})", false, 0},
      {"nodeAffinity without required terms",
       R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":null}}})", false, 0},
      {"required without terms: present, and met by no node",
       R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{}}}})", true, 0},
      {"a term of nulls",
       R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":null,"matchFields":null}]}}}})",
       true, 1},
  };
  for (const auto& c : cases) {
    json pod = {{"metadata", {{"uid", "u"}}}, {"spec", json::parse(c.spec)}};
    auto decoded = decode_pod(pod);
    ASSERT_TRUE(decoded) << c.what << ": " << decoded.message();
    EXPECT_TRUE(decoded->constraints.node_selector.empty()) << c.what;
    EXPECT_TRUE(decoded->constraints.tolerations.empty()) << c.what;
    EXPECT_EQ(decoded->constraints.required_node_affinity.has_value(), c.required) << c.what;
    if (c.required) {
      EXPECT_EQ(decoded->constraints.required_node_affinity->size(), c.terms) << c.what;
    }
  }
}

TEST(PodConstraints, MalformedFieldsAreErrorsNamingTheirPath) {
  struct Case {
    const char* spec;
    const char* mentions;
  };
  const Case cases[] = {
      {R"({"nodeSelector":["team=a"]})", "Pod.spec.nodeSelector"},
      {R"({"nodeSelector":{"team":1}})", "Pod.spec.nodeSelector.team"},
      {R"({"affinity":[]})", "Pod.spec.affinity"},
      {R"({"affinity":{"nodeAffinity":"x"}})", "Pod.spec.affinity.nodeAffinity"},
      {R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[]}}})",
       "requiredDuringSchedulingIgnoredDuringExecution"},
      {R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":{}}}}})",
       "nodeSelectorTerms"},
      {R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[5]}}}})",
       "nodeSelectorTerms[0]"},
      {R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"In","values":"b"}]}]}}}})",
       "nodeSelectorTerms[0].matchExpressions[0].values"},
      {R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":[1]}]}]}}}})",
       "nodeSelectorTerms[0].matchFields[0].values[0]"},
      {R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":7}]}]}}}})",
       "matchExpressions[0].key"},
      {R"({"tolerations":{}})", "Pod.spec.tolerations"},
      {R"({"tolerations":["x"]})", "Pod.spec.tolerations[0]"},
      {R"({"tolerations":[{"key":"a"},{"effect":true}]})", "Pod.spec.tolerations[1].effect"},
  };
  for (const auto& c : cases) {
    json pod = {{"metadata", {{"uid", "u"}}}, {"spec", json::parse(c.spec)}};
    auto decoded = decode_pod(pod);
    ASSERT_FALSE(decoded) << c.spec;
    EXPECT_NE(decoded.message().find(c.mentions), std::string::npos) << c.spec << ": " << decoded.message();
  }
}

TEST(PodConstraints, RequestBodiesCarryThem) {
  wire::PaddedBody body(std::string(R"({"Pod":{"metadata":{"name":"p","namespace":"ml","uid":"u"},"spec":{
    "containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":"1"}}}],
    "nodeSelector":{"team":"a"},
    "tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]}},"NodeNames":["n"]})"));
  auto args = decode_extender_args(body);
  ASSERT_TRUE(args) << args.message();
  EXPECT_EQ(args->pod.constraints.node_selector, (model::StringMap{{"team", "a"}}));
  EXPECT_EQ(args->pod.constraints.tolerations,
            (std::vector<model::Toleration>{{"nvidia.com/gpu", "Exists", "", "NoSchedule"}}));
  EXPECT_FALSE(args->pod.constraints.required_node_affinity);
}

TEST(PodConstraints, ANodeDecodedWithSomeLabelsDroppedSaysSo) {
  const std::string text =
      R"({"Pod":{},"Nodes":{"items":[{"metadata":{"name":"a","labels":{"nvidia.com/gpu.memory":"40960","team":"a"}}},)"
      R"({"metadata":{"name":"b","labels":{"nvidia.com/gpu.memory":"40960"}}},{"metadata":{"name":"c"}}]}})";
  NodeFieldFilter gpu_labels_only;
  gpu_labels_only.keep_all = false;
  gpu_labels_only.labels = {"nvidia.com/gpu.memory"};
  wire::PaddedBody body(text);
  auto filtered = decode_extender_args(body, gpu_labels_only);
  ASSERT_TRUE(filtered) << filtered.message();
  EXPECT_FALSE((*filtered->nodes)[0].node.labels_complete) << "team was dropped";
  EXPECT_TRUE((*filtered->nodes)[1].node.labels_complete) << "nothing was dropped";
  EXPECT_TRUE((*filtered->nodes)[2].node.labels_complete);
  auto all = decode_extender_args(body);
  ASSERT_TRUE(all) << all.message();
  EXPECT_TRUE((*all->nodes)[0].node.labels_complete);
  EXPECT_EQ((*all->nodes)[0].node.labels.at("team"), "a");
}

}  // namespace
}  // namespace extender::wire
