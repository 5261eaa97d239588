#include "extender/wire/verb_args.h"

#include <gtest/gtest.h>

#include "support/files.h"

namespace extender::wire {
namespace {

using testing::fixture;

TEST(BindingArgs, DecodesTheProtocolExample) {
  auto args = decode_binding_args(fixture("protocol-examples/bind-request.json"));
  ASSERT_TRUE(args) << args.message();
  EXPECT_EQ(args->pod_name, "trainer-0");
  EXPECT_EQ(args->pod_namespace, "ml");
  EXPECT_EQ(args->pod_uid, "6f9d4c1e-2b7a-4e3d-9a51-8c0b2f4d7e13");
  EXPECT_EQ(args->node, "gpu-node-a");
}

TEST(BindingArgs, CaseInsensitiveAndStrictAboutWhatMatters) {
  auto lower = decode_binding_args(R"({"podname":"p","podnamespace":"ns","poduid":"u","node":"n","extra":1})");
  ASSERT_TRUE(lower) << lower.message();
  EXPECT_EQ(lower->pod_uid, "u");
  EXPECT_EQ(lower->node, "n");
  EXPECT_FALSE(decode_binding_args(R"({"PodName":"p","Node":"n"})")) << "no PodUID";
  EXPECT_FALSE(decode_binding_args(R"({"PodUID":"u"})")) << "no Node";
  EXPECT_FALSE(decode_binding_args(R"({"PodUID":5,"Node":"n"})"));
  EXPECT_FALSE(decode_binding_args("[]"));
  EXPECT_FALSE(decode_binding_args(""));
  EXPECT_FALSE(decode_binding_args(std::string(100000, '[')));
}

TEST(BindingArgs, OfKeysNamingTheSameFieldTheLastWinsAsInGo) {
  auto args = decode_binding_args(R"({"PodUID":"a","poduid":"b","Node":"n1","NODE":"n2","node":null})");
  ASSERT_TRUE(args) << args.message();
  EXPECT_EQ(args->pod_uid, "b");
  EXPECT_EQ(args->node, "n2") << "a null leaves the field as it was";
  args = decode_binding_args(R"({"poduid":"b","PodUID":"a","Node":"n","Node":"m"})");
  ASSERT_TRUE(args) << args.message();
  EXPECT_EQ(args->pod_uid, "a");
  EXPECT_EQ(args->node, "m");
  EXPECT_FALSE(decode_binding_args(R"({"PodUID":"a","poduid":5,"Node":"n"})"))
      << "the last one is read, and it is no string";
}

TEST(PreemptionArgs, OfKeysNamingTheSameFieldTheLastWinsAsInGo) {
  const std::string pod = R"({"metadata":{"name":"p","namespace":"ns","uid":"u"}})";
  auto args = decode_preemption_args(R"({"Pod":)" + pod +
                                     R"(,"NodeNameToMetaVictims":{"a":{"Pods":[{"UID":"x"}]}},)"
                                     R"("nodenametometavictims":{"b":{"Pods":[{"UID":"y","uid":"z"}],"pods":null,)"
                                     R"("NumPDBViolations":1,"numpdbviolations":2},"c":{"Pods":[]},"c":null}})");
  ASSERT_TRUE(args) << args.message();
  ASSERT_EQ(args->victims_by_node.size(), 1u) << "the second map replaces the first; c's last value is null";
  const Victims& b = args->victims_by_node.at("b");
  EXPECT_EQ(b.uids, (std::vector<std::string>{"z"}));
  EXPECT_EQ(b.num_pdb_violations, 2);
  EXPECT_EQ(args->pod.name, "p");
}

TEST(PreemptionArgs, DecodesBothForms) {
  auto full = decode_preemption_args(fixture("protocol-examples/preempt-request-nodes.json"));
  ASSERT_TRUE(full) << full.message();
  EXPECT_EQ(full->pod.name, "trainer-0");
  ASSERT_EQ(full->victims_by_node.size(), 1u);
  const Victims& v = full->victims_by_node.at("gpu-node-b");
  EXPECT_EQ(v.uids, (std::vector<std::string>{"c41e8b2d-7f3a-4a9c-b6e5-2d8f0a1c3e77"}));
  ASSERT_EQ(v.pods.size(), 1u);
  EXPECT_EQ(v.pods[0].node_name, "gpu-node-b");
  EXPECT_EQ(v.pods[0].containers[0].requests.at("nvidia.com/gpu"), "3");

  auto meta = decode_preemption_args(fixture("protocol-examples/preempt-request-names.json"));
  ASSERT_TRUE(meta) << meta.message();
  EXPECT_EQ(meta->victims_by_node.at("gpu-node-b").uids, v.uids);
  EXPECT_TRUE(meta->victims_by_node.at("gpu-node-b").pods.empty());
}

TEST(PreemptionArgs, ReadsThePreemptorsPriorityAndNominatedNode) {
  auto args = decode_preemption_args(
      R"({"Pod":{"metadata":{"name":"p","uid":"u"},"spec":{"priority":1000},"status":{"nominatedNodeName":"n-1"}},)"
      R"("NodeNameToMetaVictims":{}})");
  ASSERT_TRUE(args) << args.message();
  EXPECT_EQ(args->pod.priority, 1000);
  EXPECT_EQ(args->pod.nominated_node, "n-1");
  EXPECT_FALSE(decode_preemption_args(R"({"Pod":{"status":{"nominatedNodeName":5}},"NodeNameToMetaVictims":{}})"))
      << "a nominated node that is no string";
}

TEST(PreemptionArgs, RejectsMalformedBodies) {
  EXPECT_FALSE(decode_preemption_args(R"({"NodeNameToMetaVictims":{}})")) << "no Pod";
  EXPECT_FALSE(decode_preemption_args(R"({"Pod":{},"NodeNameToMetaVictims":[]})"));
  EXPECT_FALSE(decode_preemption_args(R"({"Pod":{},"NodeNameToMetaVictims":{"n":{"Pods":{}}}})"));
  EXPECT_FALSE(decode_preemption_args(R"({"Pod":{},"NodeNameToVictims":{},"NodeNameToMetaVictims":{}})"));
  auto ok = decode_preemption_args(
      R"({"pod":{},"nodenametometavictims":{"n":{"pods":[{"uid":"a"},null,{"UID":"b"}],"numpdbviolations":2}}})");
  ASSERT_TRUE(ok) << ok.message();
  EXPECT_EQ(ok->victims_by_node.at("n").uids, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ok->victims_by_node.at("n").num_pdb_violations, 2);
}

}  // namespace
}  // namespace extender::wire
