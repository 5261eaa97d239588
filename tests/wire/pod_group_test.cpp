#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "extender/wire/k8s_objects.h"

namespace extender::wire {
namespace {

using nlohmann::json;

TEST(PodGroupObject, ReadsTheGangMinimumAndTheSchedulersVerdict) {
  const json group = json::parse(R"({
    "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
    "metadata": {"name": "train", "namespace": "ml"},
    "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}},
    "status": {"conditions": [
      {"type": "Other", "status": "True", "reason": "x", "message": "", "lastTransitionTime": "2026-12-05T23:00:00Z"},
      {"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable",
       "message": "0/2 nodes are available", "lastTransitionTime": "2026-12-05T23:01:00Z"}]}})");
  auto g = decode_pod_group(group);
  ASSERT_TRUE(g) << g.message();
  EXPECT_EQ(g->key(), "ml/train");
  EXPECT_EQ(g->min_count, 4);
  EXPECT_EQ(g->scheduled, "False");
  EXPECT_EQ(g->reason, "Unschedulable");
  EXPECT_EQ(g->since, "2026-12-05T23:01:00Z");

  auto basic = decode_pod_group(
      json::parse(R"({"metadata":{"name":"b","namespace":"ml"},"spec":{"schedulingPolicy":{"basic":{}}}})"));
  ASSERT_TRUE(basic) << basic.message();
  EXPECT_EQ(basic->min_count, 0);
  EXPECT_EQ(basic->scheduled, "");
}

TEST(PodGroupObject, RefusesMalformedObjects) {
  for (const char* text : {R"([])", R"({"spec": 3})", R"({"spec": {"schedulingPolicy": {"gang": {"minCount": "4"}}}})",
                           R"({"status": {"conditions": {}}})", R"({"status": {"conditions": [{"type": 1}]}})"}) {
    EXPECT_FALSE(decode_pod_group(json::parse(text))) << text;
  }
}

}  // namespace
}  // namespace extender::wire
