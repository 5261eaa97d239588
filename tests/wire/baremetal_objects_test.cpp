#include "extender/wire/baremetal_objects.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>

namespace extender::wire {
namespace {

using nlohmann::json;

TEST(BaremetalObjects, AnAvailableCapacityReadsAsItsCrdWritesIt) {
  const json ac = json::parse(R"({
    "apiVersion": "csi-baremetal.dell.com/v1", "kind": "AvailableCapacity",
    "metadata": {"name": "ac-0f3a", "labels": {"drive.csi-baremetal.dell.com/storage-group": "fast"}},
    "spec": {"Location": "drive-uuid-1", "NodeId": "node-uid-1", "storageClass": "SSDLVG", "Size": 107374182400}})");
  auto out = decode_available_capacity(ac);
  ASSERT_TRUE(out) << out.message();
  EXPECT_EQ(out->name, "ac-0f3a");
  EXPECT_EQ(out->location, "drive-uuid-1");
  EXPECT_EQ(out->node_id, "node-uid-1");
  EXPECT_EQ(out->storage_class, "SSDLVG");
  EXPECT_EQ(out->bytes, 107374182400);
  EXPECT_EQ(out->labels.at("drive.csi-baremetal.dell.com/storage-group"), "fast");

  auto drained = decode_available_capacity(json{{"metadata", {{"name", "ac"}}}, {"spec", {{"Size", -5}}}});
  ASSERT_TRUE(drained) << drained.message();
  EXPECT_EQ(drained->bytes, 0) << "a negative size is no room";
}

TEST(BaremetalObjects, WrongTypesAreErrorsNamingTheirPath) {
  struct Row {
    json object;
    const char* path;
  };
  const std::vector<Row> ac_rows = {
      {json{{"metadata", {{"name", "ac"}}}, {"spec", {{"Size", "10Gi"}}}}, "spec.Size"},
      {json{{"metadata", {{"name", "ac"}}}, {"spec", {{"NodeId", 7}}}}, "spec.NodeId"},
      {json{{"metadata", {{"name", "ac"}}}, {"spec", "x"}}, "spec"},
      {json::array(), "AvailableCapacity"},
  };
  for (const Row& row : ac_rows) {
    auto out = decode_available_capacity(row.object);
    ASSERT_FALSE(out) << row.object.dump();
    EXPECT_NE(out.message().find(row.path), std::string::npos) << out.message();
  }
  const std::vector<Row> acr_rows = {
      {json{{"metadata", {{"name", "r"}}},
            {"spec", {{"ReservationRequests", {{{"CapacityRequest", {{"Size", "1"}}}}}}}}},
       "spec.ReservationRequests[0].CapacityRequest.Size"},
      {json{{"metadata", {{"name", "r"}}}, {"spec", {{"ReservationRequests", {{{"Reservations", {1}}}}}}}},
       "spec.ReservationRequests[0].Reservations[0]"},
      {json{{"metadata", {{"name", "r"}}}, {"spec", {{"NodeRequests", {{"Requested", "n"}}}}}},
       "spec.NodeRequests.Requested"},
  };
  for (const Row& row : acr_rows) {
    auto out = decode_capacity_reservation(row.object);
    ASSERT_FALSE(out) << row.object.dump();
    EXPECT_NE(out.message().find(row.path), std::string::npos) << out.message();
  }
}

TEST(BaremetalObjects, AReservationWrittenReadsBackTheSame) {
  CapacityReservation acr;
  acr.name = "team-trainer-0";
  acr.resource_version = "42";
  acr.pod_namespace = "team";
  acr.status = kReservationReserved;
  acr.requested_nodes = {"uid-1", "uid-2"};
  acr.reserved_nodes = {"uid-1", "uid-2"};
  acr.requests = {{"data", "HDD", 1 << 30, "", {"ac-1", "ac-7"}},
                  {"scratch", "SSDLVG", 4 << 20, "fast", {"ac-2", "ac-9"}}};
  const json written = encode_capacity_reservation(acr);
  EXPECT_EQ(written["spec"]["ReservationRequests"][1]["CapacityRequest"]["StorageGroup"], "fast");
  EXPECT_FALSE(written["spec"]["ReservationRequests"][0]["CapacityRequest"].contains("StorageGroup"));
  EXPECT_EQ(written["metadata"]["resourceVersion"], "42");
  auto read = decode_capacity_reservation(written);
  ASSERT_TRUE(read) << read.message();
  EXPECT_EQ(*read, acr);
  acr.resource_version.clear();
  EXPECT_FALSE(encode_capacity_reservation(acr)["metadata"].contains("resourceVersion")) << "a create names no version";
}

TEST(BaremetalObjects, TheSameContentIgnoresOnlyTheResourceVersion) {
  CapacityReservation a;
  a.name = "team-trainer-0";
  a.resource_version = "41";
  a.pod_namespace = "team";
  a.reserved_nodes = {"uid-1"};
  a.requests = {{"data", "HDD", 1 << 30, "", {"ac-1"}}};
  CapacityReservation b = a;
  b.resource_version = "42";
  EXPECT_TRUE(a.same_content(b));
  EXPECT_FALSE(a == b);
  b.requests[0].reservations = {"ac-2"};
  EXPECT_FALSE(a.same_content(b));
  b = a;
  b.reserved_nodes = {"uid-2"};
  EXPECT_FALSE(a.same_content(b));
}

TEST(BaremetalObjects, AVolumeReadsItsNodeAndStatus) {
  auto out = decode_baremetal_volume(json::parse(R"({"metadata": {"name": "pvc-1"},
    "spec": {"Id": "pvc-1", "NodeId": "uid-3", "Location": "drive-2", "StorageClass": "HDD", "Size": 1073741824,
             "CSIStatus": "CREATED"}})"));
  ASSERT_TRUE(out) << out.message();
  EXPECT_EQ(out->node_id, "uid-3");
  EXPECT_EQ(out->location, "drive-2");
  EXPECT_EQ(out->bytes, 1073741824);
  EXPECT_EQ(out->csi_status, "CREATED");
}

// csi-baremetal's CRDs have structural schemas (csi-baremetal-operator@421fd092,
// charts/csi-baremetal-operator/crds/): a field the schema does not name is pruned, or refused
// under strict validation. The reservation written names only fields of its schema, and an ANY
// request keeps its storage type as csi-baremetal's extender writes it.
TEST(BaremetalObjects, AReservationWrittenHasOnlyTheFieldsOfItsCrdSchema) {
  CapacityReservation acr;
  acr.name = "team-a-trainer";
  acr.pod_namespace = "team-a";
  acr.status = kReservationReserved;
  acr.requested_nodes = acr.reserved_nodes = {"3a1f6f0e-uuid"};
  acr.requests = {{"scratch", "ANY", 60 << 20, "", {"0f6b9d2e-ac"}},
                  {"data", "SSDLVG", 4 << 20, "fast", {"4d0f1b62-ac"}}};
  const json written = encode_capacity_reservation(acr);
  const std::set<std::string> spec_keys{"Namespace", "Status", "NodeRequests", "ReservationRequests"};
  const std::set<std::string> node_keys{"Requested", "Reserved"};
  const std::set<std::string> item_keys{"CapacityRequest", "Reservations"};
  const std::set<std::string> request_keys{"Name", "Size", "StorageClass", "StorageGroup"};
  for (const auto& [k, v] : written["spec"].items()) EXPECT_TRUE(spec_keys.count(k)) << "spec." << k;
  for (const auto& [k, v] : written["spec"]["NodeRequests"].items()) EXPECT_TRUE(node_keys.count(k)) << k;
  for (const json& item : written["spec"]["ReservationRequests"]) {
    for (const auto& [k, v] : item.items()) EXPECT_TRUE(item_keys.count(k)) << k;
    for (const auto& [k, v] : item["CapacityRequest"].items()) EXPECT_TRUE(request_keys.count(k)) << k;
    EXPECT_TRUE(item["CapacityRequest"]["Size"].is_number_integer()) << "int64 in the schema";
  }
  EXPECT_EQ(written["spec"]["ReservationRequests"][0]["CapacityRequest"]["StorageClass"], "ANY");
  EXPECT_EQ(written["metadata"].size(), 1u) << "cluster-scoped: a name, no namespace";
}

// Objects as csi-baremetal writes them: an AC whose drive was taken has no Size (proto3 omits a
// zero), a Volume lives in its claim's namespace, a reservation its controller confirmed.
TEST(BaremetalObjects, ObjectsReadAsCsiBaremetalWritesThem) {
  auto taken = decode_available_capacity(json::parse(R"({"apiVersion": "csi-baremetal.dell.com/v1",
    "kind": "AvailableCapacity", "metadata": {"name": "2b8d9f40", "labels": {"app": "csi-baremetal"}},
    "spec": {"Location": "7d5e3c1a", "NodeId": "3a1f6f0e-uuid", "storageClass": "HDD"}})"));
  ASSERT_TRUE(taken) << taken.message();
  EXPECT_EQ(taken->bytes, 0);
  EXPECT_EQ(taken->node_id, "3a1f6f0e-uuid");

  auto volume = decode_baremetal_volume(json::parse(R"({"apiVersion": "csi-baremetal.dell.com/v1", "kind": "Volume",
    "metadata": {"name": "pvc-7f2a9c41", "namespace": "team-a"},
    "spec": {"Id": "pvc-7f2a9c41", "Location": "7d5e3c1a", "LocationType": "DRIVE", "StorageClass": "HDD",
             "NodeId": "3a1f6f0e-uuid", "Size": 107374182400, "Mode": "FS", "Type": "xfs", "Health": "GOOD",
             "OperationalStatus": "OPERATIVE", "CSIStatus": "PUBLISHED", "Usage": "IN_USE"}})"));
  ASSERT_TRUE(volume) << volume.message();
  EXPECT_EQ(volume->name, "pvc-7f2a9c41");
  EXPECT_EQ(volume->node_id, "3a1f6f0e-uuid");
  EXPECT_EQ(volume->storage_class, "HDD");

  auto confirmed = decode_capacity_reservation(json::parse(R"({"apiVersion": "csi-baremetal.dell.com/v1",
    "kind": "AvailableCapacityReservation", "metadata": {"name": "default-mypod"},
    "spec": {"Namespace": "default", "Status": "RESERVED",
             "NodeRequests": {"Requested": ["n1", "n2"], "Reserved": ["n1", "n2"]},
             "ReservationRequests": [{"CapacityRequest": {"Name": "mypod-a", "StorageClass": "ANY", "Size": 42949672960},
                                      "Reservations": ["ac-1", "ac-2"]}]}})"));
  ASSERT_TRUE(confirmed) << confirmed.message();
  ASSERT_EQ(confirmed->requests.size(), 1u);
  EXPECT_EQ(confirmed->requests[0].storage_class, "ANY");
  EXPECT_EQ(confirmed->requests[0].reservations, (std::vector<std::string>{"ac-1", "ac-2"}));
}

}  // namespace
}  // namespace extender::wire
