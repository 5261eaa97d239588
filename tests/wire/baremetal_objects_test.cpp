#include "extender/wire/baremetal_objects.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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
      {json{{"metadata", {{"name", "r"}}}, {"spec", {{"ReservationRequests", {{{"CapacityRequest", {{"Size", "1"}}}}}}}}},
       "spec.ReservationRequests[0].CapacityRequest.Size"},
      {json{{"metadata", {{"name", "r"}}}, {"spec", {{"ReservationRequests", {{{"Reservations", {1}}}}}}}},
       "spec.ReservationRequests[0].Reservations[0]"},
      {json{{"metadata", {{"name", "r"}}}, {"spec", {{"NodeRequests", {{"Requested", "n"}}}}}}, "spec.NodeRequests.Requested"},
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
  acr.requests = {{"data", "HDD", 1 << 30, "", {"ac-1", "ac-7"}}, {"scratch", "SSDLVG", 4 << 20, "fast", {"ac-2", "ac-9"}}};
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

}  // namespace
}  // namespace extender::wire
