#include "extender/wire/extender_args.h"

#include <gtest/gtest.h>

#include "support/files.h"

namespace extender::wire {
namespace {

using testing::fixture;
using testing::object_starting_with;

Result<ExtenderArgs> decode(const wire::PaddedBody& body) { return decode_extender_args(body); }

TEST(ExtenderArgs, DecodesTheCapturedV120NodesBody) {
  const std::string text = fixture("kube-scheduler-v1.20/filter-request.json");
  wire::PaddedBody body(text);
  auto args = decode(body);
  ASSERT_TRUE(args) << args.message();
  EXPECT_EQ(args->pod.name, "gpu-pod-1");
  EXPECT_EQ(args->pod.namespace_name, "default");
  EXPECT_EQ(args->pod.uid, "64f4656a-eb97-4060-9e61-ab04fd583ec8");
  ASSERT_EQ(args->pod.containers.size(), 1u);
  EXPECT_EQ(args->pod.containers[0].requests.at("nvidia.com/gpu"), "1");
  EXPECT_EQ(args->pod.containers[0].limits.at("nvidia.com/gpu"), "1");
  EXPECT_EQ(args->pod.phase, "Pending");
  EXPECT_FALSE(args->node_names);
  ASSERT_TRUE(args->nodes);
  ASSERT_EQ(args->nodes->size(), 2u);
  const auto& a = (*args->nodes)[0];
  EXPECT_EQ(a.node.name, "node-a");
  EXPECT_EQ(a.node.allocatable.at("nvidia.com/gpu"), "4");
  EXPECT_EQ(a.node.capacity.at("memory"), "32Gi");
  EXPECT_EQ(a.node.labels.at("kubernetes.io/hostname"), "node-a");
  // The node's bytes, exactly as received, for the echo.
  EXPECT_EQ(a.raw, object_starting_with(text, "{\"metadata\":{\"name\":\"node-a\""));
  EXPECT_EQ((*args->nodes)[1].raw, object_starting_with(text, "{\"metadata\":{\"name\":\"node-b\""));
  EXPECT_EQ(args->candidate_names(), (std::vector<std::string_view>{"node-a", "node-b"}));
}

TEST(ExtenderArgs, DecodesNullTimestampsOfARetriedPod) {
  const std::string text = fixture("kube-scheduler-v1.20/filter-request-retried-pod.json");
  ASSERT_NE(text.find("\"lastProbeTime\":null"), std::string::npos);
  wire::PaddedBody body(text);
  auto args = decode(body);
  ASSERT_TRUE(args) << args.message();
  EXPECT_EQ(args->pod.name, "gpu-pod-5");
  EXPECT_EQ(args->nodes->size(), 2u);
}

TEST(ExtenderArgs, DecodesTheProtocolExamples) {
  wire::PaddedBody names(fixture("protocol-examples/filter-request-names.json"));
  auto n = decode(names);
  ASSERT_TRUE(n) << n.message();
  EXPECT_FALSE(n->nodes);
  EXPECT_EQ(*n->node_names, (std::vector<std::string_view>{"gpu-node-a", "gpu-node-b"}));
  EXPECT_EQ(n->pod.containers[0].requests.at("nvidia.com/gpu"), "2");

  const std::string text = fixture("protocol-examples/filter-request-nodes.json");
  wire::PaddedBody nodes(text);
  auto d = decode(nodes);
  ASSERT_TRUE(d) << d.message();
  ASSERT_EQ(d->nodes->size(), 2u);
  const auto& a = (*d->nodes)[0].node;
  EXPECT_EQ(a.name, "gpu-node-a");
  EXPECT_EQ(a.allocatable.at("nvidia.com/gpu"), "8");
  EXPECT_EQ(a.allocatable.at("memory"), "1175126712Ki");
  EXPECT_EQ(a.labels.at("nvidia.com/gpu.product"), "NVIDIA-A100-SXM4-40GB");
  EXPECT_EQ(a.annotations.at("node.alpha.kubernetes.io/ttl"), "0");
  ASSERT_EQ(a.taints.size(), 1u);
  EXPECT_EQ(a.taints[0], (model::Taint{"nvidia.com/gpu", "present", "NoSchedule"}));
  EXPECT_EQ((*d->nodes)[1].raw, object_starting_with(text, "{\"metadata\":{\"name\":\"gpu-node-b\""));
}

struct Accepted {
  const char* what;
  const char* body;
  std::vector<std::string_view> names;
};

TEST(ExtenderArgs, ReadsKeysAsGoDoes) {
  const Accepted cases[] = {
      {"lower-case keys", R"({"pod":{"metadata":{"name":"p"}},"nodenames":["a"]})", {"a"}},
      {"upper-case keys", R"({"POD":{"metadata":{"name":"p"}},"NODENAMES":["a","b"]})", {"a", "b"}},
      {"Go folds U+017F to s", "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeName\xc5\xbf\":[\"a\"]}", {"a"}},
      {"null and absent are the same", R"({"Pod":{"metadata":{"name":"p"}},"Nodes":null,"NodeNames":["a"]})", {"a"}},
      {"unknown fields are ignored",
       R"({"Extra":{"x":[1,2,{"y":null}]},"Pod":{"metadata":{"name":"p"},"zzz":1},"NodeNames":["a"]})",
       {"a"}},
      {"the last of duplicate keys wins",
       R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":["a"],"nodeNames":["b"]})",
       {"b"}},
      {"neither form: no candidates", R"({"Pod":{"metadata":{"name":"p"}},"Nodes":null,"NodeNames":null})", {}},
      {"items null", R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"metadata":{},"items":null}})", {}},
      {"whitespace everywhere",
       " {\n \"Pod\" : { \"metadata\" : { \"name\" : \"p\" } } ,\n \"NodeNames\" : [ \"a\" ] }\n ",
       {"a"}},
  };
  for (const auto& c : cases) {
    wire::PaddedBody body(std::string(c.body));
    auto args = decode(body);
    ASSERT_TRUE(args) << c.what << ": " << args.message();
    EXPECT_EQ(args->pod.name, "p") << c.what;
    EXPECT_EQ(args->candidate_names(), c.names) << c.what;
  }
}

TEST(ExtenderArgs, UnescapesStrings) {
  wire::PaddedBody body(std::string(
      R"({"Pod":{"metadata":{"name":"p","annotations":{"note":"a \u0026 b \u003c\u003e \u00e9 \ud83d\ude00"}}},)"
      R"("Nodes":{"items":[{"metadata":{"name":"n\u002d1","labels":{"k\u0026":"v\"q"}}}]}})"));
  auto args = decode(body);
  ASSERT_TRUE(args) << args.message();
  EXPECT_EQ(args->pod.annotations.at("note"), "a & b <> \xc3\xa9 \xf0\x9f\x98\x80");
  const auto& node = (*args->nodes)[0];
  EXPECT_EQ(node.node.name, "n-1");
  EXPECT_EQ(node.node.labels.at("k&"), "v\"q");
  EXPECT_EQ(node.raw, R"({"metadata":{"name":"n\u002d1","labels":{"k\u0026":"v\"q"}}})") << "raw bytes stay escaped";
}

TEST(ExtenderArgs, QuantitiesMayBeNumbers) {
  wire::PaddedBody body(std::string(
      R"({"Pod":{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":2}}}]}},)"
      R"("Nodes":{"items":[{"metadata":{"name":"n"},"status":{"allocatable":{"nvidia.com/gpu":8 ,"x":1.5e3}}}]}})"));
  auto args = decode(body);
  ASSERT_TRUE(args) << args.message();
  EXPECT_EQ(args->pod.containers[0].requests.at("nvidia.com/gpu"), "2");
  EXPECT_EQ((*args->nodes)[0].node.allocatable.at("nvidia.com/gpu"), "8");
  EXPECT_EQ((*args->nodes)[0].node.allocatable.at("x"), "1.5e3");
}

TEST(ExtenderArgs, DecodesPodVolumesAndInitContainers) {
  wire::PaddedBody body(std::string(R"({"Pod":{"metadata":{"name":"p","namespace":"ml","uid":"u"},"spec":{
    "initContainers":[{"name":"s","restartPolicy":"Always","resources":{"limits":{"nvidia.com/gpu":"1"}}},{"name":"i"}],
    "containers":[{"name":"c"}],
    "overhead":{"nvidia.com/gpu":"1"},
    "volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"data-0"}},
               {"name":"scratch","ephemeral":{"volumeClaimTemplate":{"spec":{"storageClassName":"local-nvme","resources":{"requests":{"storage":"100Gi"}}}}}},
               {"name":"tmp","emptyDir":{}}]}},"NodeNames":[]})"));
  auto args = decode(body);
  ASSERT_TRUE(args) << args.message();
  const model::Pod& pod = args->pod;
  ASSERT_EQ(pod.init_containers.size(), 2u);
  EXPECT_TRUE(pod.init_containers[0].restart_always);
  EXPECT_FALSE(pod.init_containers[1].restart_always);
  EXPECT_EQ(pod.init_containers[0].limits.at("nvidia.com/gpu"), "1");
  EXPECT_EQ(pod.overhead.at("nvidia.com/gpu"), "1");
  ASSERT_EQ(pod.volumes.size(), 3u);
  EXPECT_EQ(pod.volumes[0].kind, model::PodVolume::Kind::kClaim);
  EXPECT_EQ(pod.volumes[0].claim_name, "data-0");
  EXPECT_EQ(pod.volumes[1].kind, model::PodVolume::Kind::kEphemeral);
  EXPECT_EQ(pod.volumes[1].storage_class, "local-nvme");
  EXPECT_EQ(pod.volumes[1].storage_request, "100Gi");
  EXPECT_EQ(pod.volumes[2].kind, model::PodVolume::Kind::kOther);
  EXPECT_TRUE(args->node_names->empty());
}

struct Rejected {
  const char* what;
  std::string body;
  const char* mentions;
};

TEST(ExtenderArgs, RejectsMalformedBodies) {
  const Rejected cases[] = {
      {"empty", "", "not JSON"},
      {"not JSON", "hello", "not JSON"},
      {"a JSON array", "[1,2]", "not a JSON object"},
      {"a string", "\"x\"", "not a JSON object"},
      {"no Pod", R"({"NodeNames":["a"]})", "no Pod"},
      {"Pod null", R"({"Pod":null,"NodeNames":["a"]})", "no Pod"},
      {"Pod not an object", R"({"Pod":[],"NodeNames":["a"]})", "Pod"},
      {"Nodes of the wrong type", R"({"Pod":{},"Nodes":"a,b"})", "Nodes"},
      {"Nodes.items of the wrong type", R"({"Pod":{},"Nodes":{"items":{}}})", "Nodes.items"},
      {"a node that is not an object", R"({"Pod":{},"Nodes":{"items":[5]}})", "Nodes.items[]"},
      {"a node without a name", R"({"Pod":{},"Nodes":{"items":[{"metadata":{}}]}})", "no metadata.name"},
      {"labels of the wrong type", R"({"Pod":{},"Nodes":{"items":[{"metadata":{"name":"n","labels":[]}}]}})", "labels"},
      {"NodeNames of numbers", R"({"Pod":{},"NodeNames":[1]})", "NodeNames"},
      {"both forms", R"({"Pod":{},"Nodes":{"items":[]},"NodeNames":[]})", "both"},
      {"truncated", R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":["a")", ""},
      {"containers of the wrong type", R"({"Pod":{"spec":{"containers":{}}},"NodeNames":[]})", "containers"},
      {"a resource of the wrong type",
       R"({"Pod":{"spec":{"containers":[{"resources":{"requests":{"nvidia.com/gpu":true}}}]}},"NodeNames":[]})",
       "requests"},
      {"nesting in the Pod", "{\"Pod\":{\"x\":" + std::string(200, '[') + std::string(200, ']') + "},\"NodeNames\":[]}",
       "nests"},
      {"100,000 nested brackets", std::string(100000, '['), ""},
      {"100,000 nested objects",
       "{\"Pod\":{},\"x\":" +
           [] {
             std::string s;
             for (int i = 0; i < 100000; ++i) s += "{\"a\":";
             return s;
           }(),
       ""},
      {"invalid UTF-8", "{\"Pod\":{\"metadata\":{\"name\":\"\xff\"}},\"NodeNames\":[]}", ""},
      {"a 400-digit number in the Pod",
       "{\"Pod\":{\"spec\":{\"priority\":" + std::string(400, '9') + "}},\"NodeNames\":[]}", ""},
  };
  for (const auto& c : cases) {
    wire::PaddedBody body(c.body);
    auto args = decode(body);
    ASSERT_FALSE(args) << c.what;
    EXPECT_NE(args.message().find(c.mentions), std::string::npos) << c.what << ": " << args.message();
  }
}

}  // namespace
}  // namespace extender::wire

namespace extender::wire {
namespace {

std::string names_body(std::size_t count, const std::string& name) {
  std::string body = R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":[)";
  for (std::size_t i = 0; i < count; ++i) {
    if (i) body += ',';
    body += '"' + name + '"';
  }
  return body + "]}";
}

std::string nodes_body(std::size_t count) {
  std::string body = R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[)";
  for (std::size_t i = 0; i < count; ++i) {
    if (i) body += ',';
    body += R"({"metadata":{"name":"n)" + std::to_string(i) + R"("}})";
  }
  return body + "]}}";
}

struct CapCase {
  const char* what;
  std::string body;
  bool accepted;
};

TEST(ExtenderArgs, RefusesTheNodeAfterTheCapInEitherForm) {
  const DecodeLimits limits{3};
  const CapCase cases[] = {
      {"3 names", names_body(3, "a"), true},
      {"4 names", names_body(4, "a"), false},
      {"3 node objects", nodes_body(3), true},
      {"4 node objects", nodes_body(4), false},
      // The cap is checked as the list is read: the refusal comes before the malformed tail.
      {"4 names, then garbage", R"({"Pod":{},"NodeNames":["a","b","c","d",5]})", false},
  };
  for (const auto& c : cases) {
    wire::PaddedBody body(c.body);
    DecodeFailure failure = DecodeFailure::kMalformed;
    auto args = decode_extender_args(body, {}, limits, &failure);
    EXPECT_EQ(args.ok(), c.accepted) << c.what;
    if (args) {
      EXPECT_EQ(args->candidate_names().size(), 3u) << c.what;
    } else {
      EXPECT_EQ(failure, DecodeFailure::kTooLarge) << c.what;
      EXPECT_NE(args.message().find("more than 3 nodes (server.max_nodes_per_request)"), std::string::npos)
          << args.message();
    }
  }
}

TEST(ExtenderArgs, RefusesAPodLargerThanTheApiServerStores) {
  const std::string pad(std::size_t{4} << 20, 'x');
  wire::PaddedBody body(R"({"Pod":{"metadata":{"name":"p","annotations":{"a":")" + pad + R"("}}},"NodeNames":[]})");
  DecodeFailure failure = DecodeFailure::kMalformed;
  auto args = decode_extender_args(body, {}, {}, &failure);
  ASSERT_FALSE(args);
  EXPECT_EQ(failure, DecodeFailure::kTooLarge);
  EXPECT_NE(args.message().find("Pod is larger than 4 MiB"), std::string::npos) << args.message();
}

TEST(ExtenderArgs, MalformedBodiesAreNotCalledTooLarge) {
  wire::PaddedBody body(std::string(R"({"Pod":{},"NodeNames":[1]})"));
  DecodeFailure failure = DecodeFailure::kTooLarge;
  EXPECT_FALSE(decode_extender_args(body, {}, {}, &failure));
  EXPECT_EQ(failure, DecodeFailure::kMalformed);
}

TEST(ExtenderArgs, NodeNamesAreViewsIntoTheBodyUnlessEscaped) {
  wire::PaddedBody body(std::string(R"({"Pod":{},"NodeNames":["plain" , "esc\u0061ped","a\"q"]})"));
  auto args = decode_extender_args(body);
  ASSERT_TRUE(args) << args.message();
  ASSERT_EQ(args->node_names->size(), 3u);
  const auto names = *args->node_names;
  EXPECT_EQ(names, (std::vector<std::string_view>{"plain", "escaped", "a\"q"}));
  const char* begin = body.bytes().data();
  const char* end = body.bytes().data() + body.size();
  EXPECT_TRUE(names[0].data() >= begin && names[0].data() < end) << "a plain name is not copied";
  EXPECT_FALSE(names[1].data() >= begin && names[1].data() < end) << "an escaped name is kept unescaped";
  EXPECT_EQ(args->owned_names->size(), 2u);

  // A copy shares what it points into.
  ExtenderArgs copy = *args;
  args = Error{"gone"};
  EXPECT_EQ(copy.candidate_names(), (std::vector<std::string_view>{"plain", "escaped", "a\"q"}));
}

TEST(ExtenderArgs, RefusesALargeBodyTooDenseToIndexBeforeIndexingIt) {
  // Over 1 MiB of one-letter names: 8 index bytes for every 4 body bytes.
  std::string dense = names_body((std::size_t{1} << 20) / 4 + 10, "a");
  wire::PaddedBody body(dense);
  DecodeFailure failure = DecodeFailure::kMalformed;
  auto args = decode_extender_args(body, {}, DecodeLimits{std::size_t{1} << 30}, &failure);
  ASSERT_FALSE(args);
  EXPECT_EQ(failure, DecodeFailure::kTooLarge);
  EXPECT_NE(args.message().find("tokens"), std::string::npos) << args.message();

  // Names of 8 letters and node objects as kube-scheduler sends them are within it.
  wire::PaddedBody names(names_body((std::size_t{2} << 20) / 11, "node-abc"));
  EXPECT_TRUE(decode_extender_args(names, {}, DecodeLimits{std::size_t{1} << 30}));
  const std::string example = testing::fixture("protocol-examples/filter-request-nodes.json");
  const std::string node = testing::object_starting_with(example, "{\"metadata\":{\"name\":\"gpu-node-a\"");
  std::string many = R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[)" + node;
  while (many.size() < (std::size_t{2} << 20)) many += "," + node;
  many += "]}}";
  wire::PaddedBody nodes(many);
  auto decoded = decode_extender_args(nodes);
  ASSERT_TRUE(decoded) << decoded.message();
  EXPECT_GT(decoded->nodes->size(), 500u);
}

}  // namespace
}  // namespace extender::wire

namespace extender::wire {
namespace {

TEST(ExtenderArgs, ReadsThePodGroupAPodNames) {
  const std::string text = R"({"Pod":{"metadata":{"name":"w-0","namespace":"ml","uid":"u"},)"
                           R"("spec":{"schedulingGroup":{"podGroupName":"train"},"containers":[]}},"NodeNames":["a"]})";
  wire::PaddedBody body(text);
  auto args = decode_extender_args(body);
  ASSERT_TRUE(args) << args.message();
  EXPECT_EQ(args->pod.pod_group, "train");
  const std::string bad =
      R"({"Pod":{"metadata":{"uid":"u"},"spec":{"schedulingGroup":{"podGroupName":7}}},"NodeNames":[]})";
  wire::PaddedBody bad_body(bad);
  EXPECT_FALSE(decode_extender_args(bad_body)) << "a group name that is no string";
  const std::string not_object =
      R"({"Pod":{"metadata":{"uid":"u"},"spec":{"schedulingGroup":"train"}},"NodeNames":[]})";
  wire::PaddedBody not_object_body(not_object);
  EXPECT_FALSE(decode_extender_args(not_object_body)) << "a scheduling group that is no object";
}

}  // namespace
}  // namespace extender::wire
