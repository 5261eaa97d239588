#include "extender/wire/pod_memo.h"

#include <gtest/gtest.h>

#include <string>

#include "extender/wire/extender_args.h"

namespace extender::wire {
namespace {

model::Pod pod_named(const std::string& name) {
  model::Pod p;
  p.name = name;
  p.namespace_name = "default";
  return p;
}

TEST(PodMemo, FindsAPodByTheSameBytesOnly) {
  struct Row {
    const char* what;
    std::string kept;
    std::string asked;
    bool found;
  };
  const std::string json = R"({"metadata":{"name":"a","uid":"u1"}})";
  const Row rows[] = {
      {"the same bytes", json, json, true},
      {"one byte else", json, R"({"metadata":{"name":"a","uid":"u2"}})", false},
      {"the same pod spaced otherwise", json, R"({"metadata": {"name":"a","uid":"u1"}})", false},
      {"a prefix", json, json.substr(0, json.size() - 1), false},
      {"nothing", "", "", false},
  };
  for (const auto& row : rows) {
    PodMemo memo;
    memo.keep(row.kept, pod_named("kept"));
    const auto got = memo.find(row.asked);
    EXPECT_EQ(got.has_value(), row.found) << row.what;
    if (got) {
      EXPECT_EQ(got->name, "kept") << row.what;
    }
  }
}

TEST(PodMemo, KeepsTheNewestFewAndNoLargePods) {
  PodMemo memo;
  for (std::size_t i = 0; i <= PodMemo::kCapacity; ++i) {
    memo.keep("pod-" + std::to_string(i), pod_named(std::to_string(i)));
  }
  EXPECT_FALSE(memo.find("pod-0")) << "the oldest made room";
  for (std::size_t i = 1; i <= PodMemo::kCapacity; ++i) {
    const auto got = memo.find("pod-" + std::to_string(i));
    ASSERT_TRUE(got) << i;
    EXPECT_EQ(got->name, std::to_string(i));
  }
  const std::string large(PodMemo::kMaxBytes + 1, ' ');
  memo.keep(large, pod_named("large"));
  EXPECT_FALSE(memo.find(large));
  EXPECT_TRUE(memo.find("pod-1")) << "a pod too large to keep replaces none";
}

TEST(PodMemo, DecodingTakesAPodOfTheSameJsonFromTheMemoAndKeepsWhatItDecodes) {
  const std::string pod = R"({"metadata":{"name":"trainer","namespace":"ml","uid":"u1"},)"
                          R"("spec":{"containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":"1"}}}]}})";
  const std::string body = R"({"Pod":)" + pod + R"(,"NodeNames":["n1","n2"]})";
  PodMemo memo;
  const PaddedBody first_body(body);
  auto first = decode_extender_args(first_body, {}, {}, nullptr, &memo);
  ASSERT_TRUE(first) << first.message();
  const auto kept = memo.find(pod);
  ASSERT_TRUE(kept) << "a decoded pod is kept under its JSON";
  EXPECT_EQ(kept->display_name(), "ml/trainer");
  ASSERT_EQ(kept->containers.size(), 1u);
  EXPECT_EQ(kept->containers[0].requests.at("nvidia.com/gpu"), "1");

  memo.keep(pod, pod_named("from-the-memo"));
  const PaddedBody again_body(body);
  auto again = decode_extender_args(again_body, {}, {}, nullptr, &memo);
  ASSERT_TRUE(again) << again.message();
  EXPECT_EQ(again->pod.name, "from-the-memo") << "the same JSON is not decoded again";
  ASSERT_TRUE(again->node_names);
  EXPECT_EQ(again->node_names->size(), 2u) << "the rest of the body is decoded as ever";

  const std::string other = R"({"Pod":{"metadata":{"name":"other","uid":"u2"}},"NodeNames":["n1"]})";
  const PaddedBody other_body(other);
  auto decoded = decode_extender_args(other_body, {}, {}, nullptr, &memo);
  ASSERT_TRUE(decoded) << decoded.message();
  EXPECT_EQ(decoded->pod.name, "other");
}

}  // namespace
}  // namespace extender::wire
