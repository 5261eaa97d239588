#pragma once
// Builders of resource.k8s.io/v1 objects for the fake API server, shaped as NVIDIA's DRA driver
// and kube-scheduler write them: a node's slice of whole GPUs (type, index, uuid, productName,
// driverVersion; a memory capacity), the driver's DeviceClass, and claims with their allocation.
#include <string>
#include <vector>

#include "support/fake_api_server.h"

namespace extender::kube::testing {

// `gpus` whole GPUs of `memory` each, named gpu-0.., in the node's pool.
inline json resource_slice_object(const std::string& node, int gpus, const std::string& memory = "81559Mi",
                                  std::int64_t generation = 1, std::int64_t slice_count = 1,
                                  const std::string& name_suffix = "slice") {
  json devices = json::array();
  for (int i = 0; i < gpus; ++i) {
    devices.push_back({{"name", "gpu-" + std::to_string(i)},
                       {"attributes",
                        {{"type", {{"string", "gpu"}}},
                         {"index", {{"int", i}}},
                         {"uuid", {{"string", "GPU-" + node + "-" + std::to_string(i)}}},
                         {"productName", {{"string", "NVIDIA H100 80GB HBM3"}}},
                         {"driverVersion", {{"version", "570.86.15"}}}}},
                       {"capacity", {{"memory", {{"value", memory}}}}}});
  }
  return json{
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceSlice"},
      {"metadata", {{"name", node + "-gpu.nvidia.com-" + name_suffix}, {"uid", "rs-" + node + "-" + name_suffix}}},
      {"spec",
       {{"driver", "gpu.nvidia.com"},
        {"nodeName", node},
        {"pool", {{"name", node}, {"generation", generation}, {"resourceSliceCount", slice_count}}},
        {"devices", devices}}}};
}

inline json device_class_object(const std::string& name = "gpu.nvidia.com", const std::string& type = "gpu",
                                const std::string& extended_resource = "nvidia.com/gpu") {
  json cls{{"apiVersion", "resource.k8s.io/v1"},
           {"kind", "DeviceClass"},
           {"metadata", {{"name", name}, {"uid", "dc-" + name}}},
           {"spec",
            {{"selectors",
              {{{"cel",
                 {{"expression", "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == '" +
                                     type + "'"}}}}}}}}};
  if (!extended_resource.empty()) cls["spec"]["extendedResourceName"] = extended_resource;
  return cls;
}

// A claim for `count` devices of `device_class`; allocated to `devices` of `node`'s pool when given.
inline json resource_claim_object(const std::string& ns, const std::string& name, const std::string& uid, int count,
                                  const std::string& node = {}, const std::vector<std::string>& devices = {},
                                  const std::string& device_class = "gpu.nvidia.com") {
  json claim{{"apiVersion", "resource.k8s.io/v1"},
             {"kind", "ResourceClaim"},
             {"metadata", {{"name", name}, {"namespace", ns}, {"uid", uid}}},
             {"spec",
              {{"devices",
                {{"requests",
                  {{{"name", "gpus"},
                    {"exactly",
                     {{"deviceClassName", device_class}, {"allocationMode", "ExactCount"}, {"count", count}}}}}}}}}}};
  if (!node.empty()) {
    json results = json::array();
    for (const auto& d : devices) {
      results.push_back({{"request", "gpus"}, {"driver", "gpu.nvidia.com"}, {"pool", node}, {"device", d}});
    }
    claim["status"]["allocation"]["devices"]["results"] = results;
    claim["status"]["allocation"]["nodeSelector"] = {
        {"nodeSelectorTerms",
         {{{"matchFields", {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {node}}}}}}}}};
  }
  return claim;
}

}  // namespace extender::kube::testing
