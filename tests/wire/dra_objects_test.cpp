#include "extender/wire/dra_objects.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace extender::wire {
namespace {

using nlohmann::json;

// A slice as NVIDIA's DRA driver publishes it for a node with two H100s and one MIG device.
const char* kNvidiaSlice = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
  "metadata": {"name": "gpu-node-1-gpu.nvidia.com-x7k2p", "uid": "3b1c", "resourceVersion": "812"},
  "spec": {
    "driver": "gpu.nvidia.com", "nodeName": "gpu-node-1",
    "pool": {"name": "gpu-node-1", "generation": 3, "resourceSliceCount": 1},
    "devices": [
      {"name": "gpu-0",
       "attributes": {
         "type": {"string": "gpu"}, "index": {"int": 0}, "minor": {"int": 0},
         "uuid": {"string": "GPU-4f0e2b8a-11c3-4d1e-9a7b-0c5d3e2f1a90"},
         "productName": {"string": "NVIDIA H100 80GB HBM3"}, "brand": {"string": "Nvidia"},
         "architecture": {"string": "Hopper"},
         "cudaComputeCapability": {"version": "9.0.0"}, "driverVersion": {"version": "570.86.15"},
         "cudaDriverVersion": {"version": "12.8.0"}, "pcieBusID": {"string": "0000:1b:00.0"},
         "resource.kubernetes.io/pcieRoot": {"string": "pci0000:17"}},
       "capacity": {"memory": {"value": "81559Mi"}}},
      {"name": "gpu-1",
       "attributes": {"type": {"string": "gpu"}, "index": {"int": 1}, "productName": {"string": "NVIDIA H100 80GB HBM3"}},
       "capacity": {"memory": {"value": "81559Mi"}}},
      {"name": "gpu-1-mig-9-4-2",
       "attributes": {"type": {"string": "mig"}, "parentUUID": {"string": "GPU-x"}, "profile": {"string": "3g.40gb"}},
       "capacity": {"memory": {"value": "40Gi"}, "multiprocessors": {"value": "60"}}}
    ]
  }
})";

TEST(ResourceSlice, DecodesTheNvidiaDriversSlice) {
  auto slice = decode_resource_slice(json::parse(kNvidiaSlice));
  ASSERT_TRUE(slice) << slice.message();
  EXPECT_EQ(slice->name, "gpu-node-1-gpu.nvidia.com-x7k2p");
  EXPECT_EQ(slice->driver, "gpu.nvidia.com");
  EXPECT_EQ(slice->node_name, "gpu-node-1");
  EXPECT_EQ(slice->pool, "gpu-node-1");
  EXPECT_EQ(slice->pool_generation, 3);
  EXPECT_EQ(slice->pool_slice_count, 1);
  ASSERT_EQ(slice->devices.size(), 3u);
  const auto& gpu0 = slice->devices[0];
  EXPECT_EQ(gpu0.name, "gpu-0");
  ASSERT_TRUE(gpu0.attributes.count("gpu.nvidia.com/type")) << "unqualified names take the driver's domain";
  EXPECT_EQ(gpu0.attributes.at("gpu.nvidia.com/type").text, "gpu");
  EXPECT_EQ(gpu0.attributes.at("gpu.nvidia.com/index").kind, model::DraAttribute::Kind::kInt);
  EXPECT_EQ(gpu0.attributes.at("gpu.nvidia.com/index").int_value, 0);
  EXPECT_EQ(gpu0.attributes.at("gpu.nvidia.com/driverVersion").kind, model::DraAttribute::Kind::kVersion);
  EXPECT_EQ(gpu0.attributes.at("gpu.nvidia.com/driverVersion").text, "570.86.15");
  ASSERT_TRUE(gpu0.attributes.count("resource.kubernetes.io/pcieRoot")) << "qualified names stay as they are";
  EXPECT_EQ(gpu0.capacity.at("gpu.nvidia.com/memory"), *Quantity::parse("81559Mi"));
  EXPECT_EQ(slice->devices[2].attributes.at("gpu.nvidia.com/type").text, "mig");
}

TEST(ResourceSlice, DefaultsAndOptionalFields) {
  auto slice = decode_resource_slice(json::parse(
      R"({"metadata":{"name":"s"},"spec":{"driver":"d.example.com","allNodes":true,"pool":{"name":"p"}}})"));
  ASSERT_TRUE(slice) << slice.message();
  EXPECT_EQ(slice->node_name, "");
  EXPECT_EQ(slice->pool_slice_count, 1);
  EXPECT_EQ(slice->pool_generation, 0);
  EXPECT_TRUE(slice->devices.empty());
  slice = decode_resource_slice(json::parse(
      R"({"SPEC":{"Driver":"d","pool":{"name":"p"},"devices":[{"name":"a","attributes":{"x":null},"capacity":{"m":{"value":4}}}]}})"));
  ASSERT_TRUE(slice) << slice.message();
  EXPECT_TRUE(slice->devices[0].attributes.empty()) << "null is absent";
  EXPECT_EQ(slice->devices[0].capacity.at("d/m"), *Quantity::parse("4"));
}

struct Bad {
  const char* what;
  std::string body;
  const char* error_part;
};

std::string slice_with_device(const std::string& device) {
  return R"({"spec":{"driver":"d","pool":{"name":"p"},"devices":[)" + device + "]}}";
}

TEST(ResourceSlice, RefusesMalformedSlicesWithAPath) {
  const std::vector<Bad> table = {
      {"not an object", "[]", "ResourceSlice"},
      {"no spec", R"({"metadata":{"name":"s"}})", "spec: missing"},
      {"no driver", R"({"spec":{"pool":{"name":"p"}}})", "spec.driver"},
      {"driver of wrong type", R"({"spec":{"driver":7,"pool":{"name":"p"}}})", "spec.driver"},
      {"no pool", R"({"spec":{"driver":"d"}})", "spec.pool"},
      {"pool without name", R"({"spec":{"driver":"d","pool":{}}})", "spec.pool.name"},
      {"slice count 0", R"({"spec":{"driver":"d","pool":{"name":"p","resourceSliceCount":0}}})", "resourceSliceCount"},
      {"negative generation", R"({"spec":{"driver":"d","pool":{"name":"p","generation":-1}}})", "generation"},
      {"generation a string", R"({"spec":{"driver":"d","pool":{"name":"p","generation":"3"}}})", "generation"},
      {"devices an object", R"({"spec":{"driver":"d","pool":{"name":"p"},"devices":{}}})", "spec.devices"},
      {"device without name", slice_with_device(R"({"attributes":{}})"), "spec.devices[0].name"},
      {"device twice", slice_with_device(R"({"name":"a"},{"name":"a"})"), "listed twice"},
      {"attribute with two kinds", slice_with_device(R"({"name":"a","attributes":{"t":{"int":1,"string":"x"}}})"),
       "exactly one"},
      {"attribute with no kind", slice_with_device(R"({"name":"a","attributes":{"t":{}}})"), "exactly one"},
      {"int attribute a float", slice_with_device(R"({"name":"a","attributes":{"t":{"int":1.5}}})"), ".int"},
      {"int attribute too big", slice_with_device(R"({"name":"a","attributes":{"t":{"int":18446744073709551615}}})"),
       ".int"},
      {"bool attribute a string", slice_with_device(R"({"name":"a","attributes":{"t":{"bool":"true"}}})"), ".bool"},
      {"capacity not a quantity", slice_with_device(R"({"name":"a","capacity":{"memory":{"value":"80 GB"}}})"),
       "capacity.memory.value"},
      {"capacity without value", slice_with_device(R"({"name":"a","capacity":{"memory":{}}})"),
       "capacity.memory.value"},
      {"capacity a string", slice_with_device(R"({"name":"a","capacity":{"memory":"80Gi"}})"), "capacity.memory"},
      {"long value",
       slice_with_device(R"({"name":"a","attributes":{"t":{"string":")" + std::string(5000, 'x') + R"("}}})"),
       "longer than"},
  };
  for (const auto& bad : table) {
    auto slice = decode_resource_slice(json::parse(bad.body));
    ASSERT_FALSE(slice) << bad.what;
    EXPECT_NE(slice.message().find(bad.error_part), std::string::npos) << bad.what << ": " << slice.message();
  }
}

TEST(ResourceSlice, BoundsDevicesAndAttributes) {
  DraLimits limits;
  limits.devices_per_slice = 2;
  limits.attributes_per_device = 2;
  auto many =
      decode_resource_slice(json::parse(slice_with_device(R"({"name":"a"},{"name":"b"},{"name":"c"})")), limits);
  ASSERT_FALSE(many);
  EXPECT_NE(many.message().find("more than 2 items"), std::string::npos) << many.message();
  auto wide = decode_resource_slice(
      json::parse(slice_with_device(
          R"({"name":"a","attributes":{"x":{"int":1},"y":{"int":2}},"capacity":{"m":{"value":"1"}}})")),
      limits);
  ASSERT_FALSE(wide);
  EXPECT_NE(wide.message().find("attributes and capacities"), std::string::npos) << wide.message();
}

const char* kAllocatedClaim = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
  "metadata": {"name": "trainer-0-gpus-5xk9q", "namespace": "ml", "uid": "c-1"},
  "spec": {"devices": {"requests": [
    {"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 2,
      "selectors": [{"cel": {"expression": "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"}}]}},
    {"name": "any", "firstAvailable": [
      {"name": "big", "deviceClassName": "gpu.nvidia.com"},
      {"name": "small", "deviceClassName": "mig.nvidia.com", "count": 2}]},
    {"name": "monitor", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "All", "adminAccess": true}}
  ]}},
  "status": {
    "allocation": {"devices": {"results": [
      {"request": "gpus", "driver": "gpu.nvidia.com", "pool": "gpu-node-1", "device": "gpu-0"},
      {"request": "gpus", "driver": "gpu.nvidia.com", "pool": "gpu-node-1", "device": "gpu-1"},
      {"request": "monitor", "driver": "gpu.nvidia.com", "pool": "gpu-node-1", "device": "gpu-0", "adminAccess": true}]},
      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-node-1"]}]}]}},
    "reservedFor": [{"resource": "pods", "name": "trainer-0", "uid": "p-1"}]
  }
})";

TEST(ResourceClaim, DecodesRequestsResultsAndConsumers) {
  auto claim = decode_resource_claim(json::parse(kAllocatedClaim));
  ASSERT_TRUE(claim) << claim.message();
  EXPECT_EQ(claim->uid, "c-1");
  EXPECT_EQ(claim->namespace_name, "ml");
  EXPECT_EQ(claim->name, "trainer-0-gpus-5xk9q");
  ASSERT_EQ(claim->requests.size(), 3u);
  const auto& gpus = *claim->requests[0].exactly;
  EXPECT_EQ(gpus.name, "gpus");
  EXPECT_EQ(gpus.device_class, "gpu.nvidia.com");
  EXPECT_EQ(gpus.count, 2);
  EXPECT_FALSE(gpus.all);
  ASSERT_EQ(gpus.selectors.size(), 1u);
  EXPECT_NE(gpus.selectors[0].find("compareTo"), std::string::npos);
  EXPECT_FALSE(claim->requests[1].exactly);
  ASSERT_EQ(claim->requests[1].first_available.size(), 2u);
  EXPECT_EQ(claim->requests[1].first_available[1].device_class, "mig.nvidia.com");
  EXPECT_EQ(claim->requests[1].first_available[1].count, 2);
  EXPECT_EQ(claim->requests[1].first_available[0].count, 1) << "count defaults to 1";
  EXPECT_TRUE(claim->requests[2].exactly->all);
  EXPECT_TRUE(claim->requests[2].exactly->admin_access);
  EXPECT_TRUE(claim->allocated);
  ASSERT_EQ(claim->results.size(), 3u);
  EXPECT_EQ(claim->results[1], (model::DeviceResult{"gpus", "gpu.nvidia.com", "gpu-node-1", "gpu-1", false}));
  EXPECT_TRUE(claim->results[2].admin_access);
  ASSERT_EQ(claim->reserved_for.size(), 1u);
  EXPECT_EQ(claim->reserved_for[0], (model::ClaimConsumer{"pods", "trainer-0", "p-1"}));
}

TEST(ResourceClaim, PendingClaimHasNoAllocation) {
  auto claim = decode_resource_claim(json::parse(
      R"({"metadata":{"name":"c","namespace":"n","uid":"u","deletionTimestamp":"2026-01-01T00:00:00Z"},
          "spec":{"devices":{"requests":[{"name":"r","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}},"status":{}})"));
  ASSERT_TRUE(claim) << claim.message();
  EXPECT_FALSE(claim->allocated);
  EXPECT_TRUE(claim->terminating);
  EXPECT_TRUE(claim->results.empty());
  EXPECT_EQ(claim->requests[0].exactly->count, 1);
}

std::string claim_with_request(const std::string& request) {
  return R"({"metadata":{"name":"c","uid":"u"},"spec":{"devices":{"requests":[)" + request + "]}}}";
}

TEST(ResourceClaim, RefusesMalformedClaimsWithAPath) {
  const std::vector<Bad> table = {
      {"requests not an array", R"({"spec":{"devices":{"requests":{}}}})", "spec.devices.requests"},
      {"request without name", claim_with_request(R"({"exactly":{"deviceClassName":"g"}})"), "requests[0].name"},
      {"neither exactly nor firstAvailable", claim_with_request(R"({"name":"r"})"), "exactly one of"},
      {"both", claim_with_request(R"({"name":"r","exactly":{"deviceClassName":"g"},"firstAvailable":[]})"),
       "exactly one of"},
      {"empty firstAvailable", claim_with_request(R"({"name":"r","firstAvailable":[]})"), "empty"},
      {"no class", claim_with_request(R"({"name":"r","exactly":{}})"), "deviceClassName"},
      {"count 0", claim_with_request(R"({"name":"r","exactly":{"deviceClassName":"g","count":0}})"), "count"},
      {"count negative", claim_with_request(R"({"name":"r","exactly":{"deviceClassName":"g","count":-3}})"), "count"},
      {"count huge", claim_with_request(R"({"name":"r","exactly":{"deviceClassName":"g","count":99999999999}})"),
       "count"},
      {"count a string", claim_with_request(R"({"name":"r","exactly":{"deviceClassName":"g","count":"2"}})"), "count"},
      {"unknown mode", claim_with_request(R"({"name":"r","exactly":{"deviceClassName":"g","allocationMode":"Some"}})"),
       "allocationMode"},
      {"selector without cel", claim_with_request(R"({"name":"r","exactly":{"deviceClassName":"g","selectors":[{}]}})"),
       "other than cel"},
      {"result without device",
       R"({"status":{"allocation":{"devices":{"results":[{"request":"r","driver":"d","pool":"p"}]}}}})",
       "results[0].device"},
      {"results an object", R"({"status":{"allocation":{"devices":{"results":{}}}}})", "results"},
      {"reservedFor an object", R"({"status":{"reservedFor":{}}})", "status.reservedFor"},
      {"allocation a string", R"({"status":{"allocation":"yes"}})", "status.allocation"},
  };
  for (const auto& bad : table) {
    auto claim = decode_resource_claim(json::parse(bad.body));
    ASSERT_FALSE(claim) << bad.what;
    EXPECT_NE(claim.message().find(bad.error_part), std::string::npos) << bad.what << ": " << claim.message();
  }
}

TEST(ResourceClaim, BoundsResults) {
  DraLimits limits;
  limits.results = 1;
  auto claim = decode_resource_claim(json::parse(kAllocatedClaim), limits);
  ASSERT_FALSE(claim);
  EXPECT_NE(claim.message().find("results"), std::string::npos) << claim.message();
}

TEST(DeviceClass, DecodesTheNvidiaGpuClass) {
  auto cls = decode_device_class(json::parse(R"({
    "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"},
    "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}],
             "extendedResourceName": "nvidia.com/gpu"}})"));
  ASSERT_TRUE(cls) << cls.message();
  EXPECT_EQ(cls->name, "gpu.nvidia.com");
  ASSERT_EQ(cls->selectors.size(), 1u);
  EXPECT_EQ(cls->selectors[0],
            "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'");
  EXPECT_EQ(cls->extended_resource_name, "nvidia.com/gpu");
  auto bare = decode_device_class(json::parse(R"({"metadata":{"name":"any"}})"));
  ASSERT_TRUE(bare) << bare.message();
  EXPECT_TRUE(bare->selectors.empty());
  EXPECT_TRUE(bare->extended_resource_name.empty());
  EXPECT_FALSE(decode_device_class(json::parse(R"({"spec":{"selectors":[{"cel":{"expression":5}}]}})")));
  EXPECT_FALSE(decode_device_class(json::parse(R"({"spec":{"selectors":[{"cel":{}}]}})")));
  EXPECT_FALSE(decode_device_class(json::parse(R"({"spec":{"extendedResourceName":["x"]}})")));
  EXPECT_FALSE(decode_device_class(json::parse("\"gpu\"")));
  DraLimits limits;
  limits.expression_bytes = 10;
  EXPECT_FALSE(decode_device_class(
      json::parse(R"({"spec":{"selectors":[{"cel":{"expression":"device.driver == 'x'"}}]}})"), limits));
}

TEST(PodDra, DecodesClaimsAndTheExtendedResourceClaimStatus) {
  auto dra = decode_pod_dra(json::parse(R"({
    "metadata": {"name": "trainer-0", "namespace": "ml"},
    "spec": {"containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": "2"}}}],
             "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "two-gpus"},
                                {"name": "shared", "resourceClaimName": "shared-gpu"}]},
    "status": {"phase": "Pending",
               "resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": "trainer-0-gpus-5xk9q"}],
               "extendedResourceClaimStatus": {"resourceClaimName": "trainer-0-extended-resources-abcde",
                 "requestMappings": [{"containerName": "main", "resourceName": "nvidia.com/gpu", "requestName": "container-0-request-0"}]}}})"));
  ASSERT_TRUE(dra) << dra.message();
  ASSERT_EQ(dra->claims.size(), 2u);
  EXPECT_EQ(dra->claims[0], (model::PodClaimRef{"gpus", "", "two-gpus"}));
  EXPECT_EQ(dra->claims[1], (model::PodClaimRef{"shared", "shared-gpu", ""}));
  ASSERT_EQ(dra->claim_statuses.size(), 1u);
  EXPECT_EQ(dra->claim_statuses[0].claim_name, "trainer-0-gpus-5xk9q");
  EXPECT_EQ(dra->extended_claim, "trainer-0-extended-resources-abcde");
  ASSERT_EQ(dra->extended_mappings.size(), 1u);
  EXPECT_EQ(dra->extended_mappings[0],
            (model::ExtendedResourceMapping{"main", "nvidia.com/gpu", "container-0-request-0"}));

  auto plain = decode_pod_dra(
      json::parse(R"({"metadata":{"name":"p"},"spec":{},"status":{"extendedResourceClaimStatus":null}})"));
  ASSERT_TRUE(plain) << plain.message();
  EXPECT_EQ(*plain, model::PodDra{});
  EXPECT_FALSE(decode_pod_dra(json::parse(R"({"status":{"extendedResourceClaimStatus":[]}})")));
  EXPECT_FALSE(decode_pod_dra(json::parse(R"({"status":{"extendedResourceClaimStatus":{"requestMappings":{}}}})")));
  EXPECT_FALSE(decode_pod_dra(json::parse(R"({"status":{"extendedResourceClaimStatus":{"requestMappings":[5]}}})")));
  EXPECT_FALSE(decode_pod_dra(json::parse(R"({"spec":{"resourceClaims":[{"name":1}]}})")));
}

TEST(DraObjects, OddJsonIsAnErrorNeverACrash) {
  json deep = json::array();
  json* at = &deep;
  for (int i = 0; i < 200; ++i) {
    at->push_back(json::array());
    at = &(*at)[0];
  }
  for (const json& odd : {json(nullptr), json(5), json("s"), deep}) {
    EXPECT_FALSE(decode_resource_slice(odd));
    EXPECT_FALSE(decode_resource_claim(odd));
    EXPECT_FALSE(decode_device_class(odd));
    EXPECT_FALSE(decode_pod_dra(odd));
  }
  EXPECT_FALSE(decode_resource_slice(json::object({{"spec", deep}})));
  EXPECT_FALSE(
      decode_resource_slice(json::object({{"spec", {{"driver", "d"}, {"pool", {{"name", "p"}}}, {"devices", deep}}}})));
  EXPECT_FALSE(decode_resource_claim(json::object({{"spec", {{"devices", {{"requests", deep}}}}}})));
}

}  // namespace
}  // namespace extender::wire
