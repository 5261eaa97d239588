// csi-baremetal's drives in kubernetes mode against the fake API server: each AvailableCapacity a
// drive of its node's pool for its media, /filter reserving the best-fit drive of every passing
// node in the reservation csi-baremetal's CreateVolume reads, no drive held for two pods, a claim's
// hold kept on its selected node only, Volume objects counted by volume balance, and the
// reservations of pods no longer pending deleted.
#include <gtest/gtest.h>

#include <fstream>

#include "extender/kube/token_bucket.h"

#include "support/cluster_harness.h"
#include "support/engine_fixture.h"

namespace extender::engine {
namespace {

using namespace std::chrono_literals;
using kube::testing::claim_object;
using kube::testing::csi_class_object;
using kube::testing::eventually;
using kube::testing::json;
using kube::testing::Kind;
using kube::testing::node_object;
using kube::testing::pod_object;
using kube::testing::test_bytes;

constexpr const char* kSsd = "bm-ssd";
constexpr const char* kLvg = "bm-ssdlvg";
constexpr const char* kSsdPool = "csi-baremetal:SSD";

json ac(const std::string& name, const std::string& node, const std::string& type, const std::string& size,
        std::map<std::string, std::string> labels = {}) {
  json o{{"apiVersion", "csi-baremetal.dell.com/v1"},
         {"kind", "AvailableCapacity"},
         {"metadata", {{"name", name}}},
         {"spec",
          {{"Location", name + "-drive"},
           {"NodeId", "node-" + node},
           {"storageClass", type},
           {"Size", test_bytes(size)}}}};
  if (!labels.empty()) o["metadata"]["labels"] = labels;
  return o;
}

json volume(const std::string& name, const std::string& node) {
  return {{"apiVersion", "csi-baremetal.dell.com/v1"},
          {"kind", "Volume"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"Id", name}, {"NodeId", "node-" + node}, {"Location", "x"}, {"StorageClass", "SSD"}, {"Size", 1 << 30}}}};
}

json bm_class(const std::string& name, const std::string& type) {
  json sc = csi_class_object(name, "csi-baremetal");
  sc["parameters"] = {{"storageType", type}};
  return sc;
}

json pod_with(const std::string& name, const std::vector<std::pair<std::string, std::string>>& claims) {
  json pod = pod_object("ml", name, "uid-" + name, 0);
  json volumes = json::array();
  for (const auto& [claim, cls] : claims)
    volumes.push_back({{"name", claim}, {"persistentVolumeClaim", {{"claimName", claim}}}});
  pod["spec"]["volumes"] = volumes;
  return pod;
}

std::size_t reservation_writes(const kube::testing::FakeApiServer& server) {
  const std::string path = "/apis/csi-baremetal.dell.com/v1/availablecapacityreservations";
  std::size_t n = 0;
  for (const auto& r : server.requests()) {
    if (r.method != "GET" && r.path.rfind(path, 0) == 0) ++n;
  }
  return n;
}

class Baremetal : public kube::testing::EngineFixture {
 protected:
  // write_wait 5s: the reservation is on the server when /filter answers.
  explicit Baremetal(std::chrono::milliseconds idle = 60s, std::chrono::milliseconds write_wait = 5s,
                     std::chrono::milliseconds rewrite_interval = 1s)
      : EngineFixture([idle, write_wait, rewrite_interval](config::Config& c) {
          c.storage.baremetal.reservation_grace = 300ms;
          c.storage.baremetal.reservation_idle = idle;
          c.storage.baremetal.reservation_write_wait = write_wait;
          c.storage.baremetal.reservation_rewrite_interval = rewrite_interval;
        }) {}

  void SetUp() override {
    h_.fake.put(Kind::kClasses, bm_class(kSsd, "SSD"));
    h_.fake.put(Kind::kClasses, bm_class(kLvg, "SSDLVG"));
    for (const char* n : {"n1", "n2", "n3"}) h_.fake.put(Kind::kNodes, node_object(n, 0));
    h_.fake.put(Kind::kAvailableCapacities, ac("n1-ssd100", "n1", "SSD", "100Gi"));
    h_.fake.put(Kind::kAvailableCapacities, ac("n1-ssd60", "n1", "SSD", "60Gi"));
    h_.fake.put(Kind::kAvailableCapacities, ac("n1-lvg", "n1", "SSDLVG", "200Gi"));
    h_.fake.put(Kind::kAvailableCapacities, ac("n2-ssd100", "n2", "SSD", "100Gi"));
    h_.fake.put(Kind::kAvailableCapacities, ac("n2-lvg", "n2", "SSDLVG", "100Gi"));
    h_.fake.put(Kind::kAvailableCapacities, ac("n3-ssd40", "n3", "SSD", "40Gi"));
    h_.fake.put(Kind::kAvailableCapacities, ac("n3-lvg", "n3", "SSDLVG", "100Gi"));
  }

  // A pending pod with a 50Gi SSD claim and, when `scratch`, a 30Gi SSDLVG claim, seen by the watch.
  void add_pod(const std::string& name, bool scratch = true) {
    std::vector<std::pair<std::string, std::string>> claims{{name + "-data", kSsd}};
    h_.fake.put(Kind::kClaims, claim_object("ml", name + "-data", "c-" + name + "-data", kSsd, "50Gi"));
    if (scratch) {
      claims.emplace_back(name + "-scratch", kLvg);
      h_.fake.put(Kind::kClaims, claim_object("ml", name + "-scratch", "c-" + name + "-scratch", kLvg, "30Gi"));
    }
    h_.fake.put(Kind::kPods, pod_with(name, claims));
    ASSERT_TRUE(eventually([&] {
      return h_.cluster->pending_pod("uid-" + name).has_value() &&
             std::all_of(claims.begin(), claims.end(),
                         [&](const auto& c) { return h_.cluster->claim("ml", c.first).has_value(); });
    }));
  }

  std::vector<std::string> passed(const FilterAnswer& a) {
    EXPECT_TRUE(a.result.error.empty()) << a.result.error;
    std::vector<std::string> out;
    for (auto name : a.result.node_names.value_or(std::vector<std::string_view>{})) out.emplace_back(name);
    return out;
  }

  std::optional<json> reservation(const std::string& name) { return h_.fake.object(Kind::kCapacityReservations, name); }

  // The ACs a reservation lists for one claim, in node order.
  static std::vector<std::string> drives_for(const json& acr, const std::string& claim) {
    for (const auto& r : acr["spec"]["ReservationRequests"]) {
      if (r["CapacityRequest"]["Name"] == claim) return r["Reservations"].get<std::vector<std::string>>();
    }
    return {};
  }
};

TEST_F(Baremetal, EachAvailableCapacityIsADriveOfItsNodesPoolForItsMedia) {
  h_.fake.put(Kind::kAvailableCapacities, ac("n1-hdd", "n1", "HDD", "1Ti"));
  h_.fake.put(Kind::kAvailableCapacities,
              ac("n1-tainted", "n1", "SSD", "100Gi", {{"drive.csi-baremetal.dell.com/taint", "NoSchedule"}}));
  h_.fake.put(Kind::kAvailableCapacities,
              ac("n1-grouped", "n1", "SSD", "100Gi", {{"drive.csi-baremetal.dell.com/storage-group", "fast"}}));
  h_.fake.put(Kind::kAvailableCapacities, ac("elsewhere", "gone", "SSD", "100Gi"));
  start();
  ASSERT_TRUE(eventually([&] { return pool_of("n1", "csi-baremetal:HDD") != nullptr; }));
  const model::Pool* ssd = pool_of("n1", kSsdPool);
  ASSERT_NE(ssd, nullptr);
  EXPECT_TRUE(ssd->drives);
  EXPECT_EQ(kube::testing::pool_text(*ssd), "n1-lvg=" + std::to_string(test_bytes("200Gi")) +
                                                ",n1-ssd100=" + std::to_string(test_bytes("100Gi")) +
                                                ",n1-ssd60=" + std::to_string(test_bytes("60Gi")));
  EXPECT_EQ(ssd->capacity_bytes, test_bytes("360Gi"));
  EXPECT_EQ(ssd->devices[0].drive_class, "SSDLVG");
  const model::Pool* group = pool_of("n1", "csi-baremetal:SSD/fast");
  ASSERT_NE(group, nullptr) << "a storage group's drives are a pool of their own";
  EXPECT_EQ(group->devices.size(), 1u);
  EXPECT_EQ(pool_of("n2", kSsdPool)->devices.size(), 2u);
}

TEST_F(Baremetal, TheFilterReservesTheBestFitDriveOfEveryPassingNodeInOneCycle) {
  start();
  add_pod("p1");
  const auto a = filter("p1", {"n1", "n2", "n3"});
  EXPECT_EQ(passed(a), (std::vector<std::string>{"n1", "n2"})) << "n3's only SSD is 40Gi";
  const auto acr = reservation("ml-p1");
  ASSERT_TRUE(acr) << "written before the filter answered";
  EXPECT_EQ((*acr)["spec"]["Status"], "RESERVED");
  EXPECT_EQ((*acr)["spec"]["Namespace"], "ml");
  EXPECT_EQ((*acr)["spec"]["NodeRequests"]["Reserved"], json({"node-n1", "node-n2"}));
  EXPECT_EQ(drives_for(*acr, "p1-data"), (std::vector<std::string>{"n1-ssd60", "n2-ssd100"}))
      << "the smallest that holds it";
  EXPECT_EQ(drives_for(*acr, "p1-scratch"), (std::vector<std::string>{"n1-lvg", "n2-lvg"}));

  const std::string version = (*acr)["metadata"]["resourceVersion"];
  EXPECT_EQ(passed(filter("p1", {"n1", "n2", "n3"})).size(), 2u) << "its own holds do not count against it";
  EXPECT_EQ((*reservation("ml-p1"))["metadata"]["resourceVersion"], version) << "unchanged: not written again";

  EXPECT_TRUE(passed(filter("p1", {"n3"})).empty());
  EXPECT_EQ((*reservation("ml-p1"))["spec"]["NodeRequests"]["Reserved"], json({"node-n1", "node-n2"}))
      << "passing nowhere deletes nothing: the sweep does, so no caller can drop a pod's reservation";
}

class BaremetalQuickRewrites : public Baremetal {
 protected:
  BaremetalQuickRewrites() : Baremetal(60s, 5s, 300ms) {}
};

TEST_F(BaremetalQuickRewrites, WithinTheRewriteIntervalTheReservationStandsAndOnlyTheNodesItHoldsPass) {
  start();
  add_pod("p1");
  ASSERT_EQ(passed(filter("p1", {"n1", "n2"})).size(), 2u);
  const std::string version = (*reservation("ml-p1"))["metadata"]["resourceVersion"];
  const std::size_t writes = reservation_writes(h_.server);

  const auto a = filter("p1", {"n2", "n3"});
  EXPECT_EQ(passed(a), std::vector<std::string>{"n2"}) << "n2's drives are held as this filter chose them";
  EXPECT_EQ((*reservation("ml-p1"))["metadata"]["resourceVersion"], version) << "not rewritten within the interval";

  h_.fake.put(Kind::kAvailableCapacities, ac("n3-ssd100", "n3", "SSD", "100Gi"));
  ASSERT_TRUE(eventually([&] { return pool_of("n3", kSsdPool)->devices.size() == 3u; }));
  const auto b = filter("p1", {"n3"});
  EXPECT_TRUE(passed(b).empty()) << "n3 fits now, but the standing reservation holds none of its drives";
  ASSERT_NE(b.result.failed.find("n3"), nullptr);
  EXPECT_NE(b.result.failed.find("n3")->find("rewritten"), std::string::npos) << *b.result.failed.find("n3");
  EXPECT_EQ(reservation_writes(h_.server), writes);

  std::this_thread::sleep_for(350ms);
  EXPECT_EQ(passed(filter("p1", {"n3"})), std::vector<std::string>{"n3"}) << "the interval has passed";
  EXPECT_EQ((*reservation("ml-p1"))["spec"]["NodeRequests"]["Reserved"], json({"node-n3"}))
      << "the reservation follows the candidates";
  EXPECT_EQ(drives_for(*reservation("ml-p1"), "p1-data"), std::vector<std::string>{"n3-ssd100"});
}

TEST_F(Baremetal, NoReservationIsWrittenForAPodTheApiServerDoesNotHavePending) {
  start();
  add_pod("p1", false);
  wire::ExtenderArgs args;
  args.pod = *h_.cluster->pending_pod("uid-p1");
  args.pod.uid = "uid-forged";
  args.set_node_names({"n1"});
  const auto a = ext_->filter(args);
  EXPECT_NE(a.result.error.find("not judging the pod's volumes"), std::string::npos) << a.result.error;
  EXPECT_TRUE(h_.fake.objects(Kind::kCapacityReservations).empty());
}

TEST_F(Baremetal, ADriveOfAStorageGroupHoldsOnlyTheClaimsOfThatGroup) {
  h_.fake.put(Kind::kAvailableCapacities,
              ac("n3-fast", "n3", "SSD", "100Gi", {{"drive.csi-baremetal.dell.com/storage-group", "fast"}}));
  start();
  add_pod("p1", false);
  EXPECT_TRUE(passed(filter("p1", {"n3"})).empty()) << "n3's free 100Gi drive is the group's";
  json pvc = claim_object("ml", "pg-data", "c-pg-data", kSsd, "50Gi");
  pvc["metadata"]["labels"] = {{"drive.csi-baremetal.dell.com/storage-group", "fast"}};
  h_.fake.put(Kind::kClaims, pvc);
  h_.fake.put(Kind::kPods, pod_with("pg", {{"pg-data", kSsd}}));
  ASSERT_TRUE(eventually([&] {
    return h_.cluster->pending_pod("uid-pg") && h_.cluster->claim("ml", "pg-data") &&
           h_.cluster->claim("ml", "pg-data")->storage_group == "fast";
  }));
  EXPECT_EQ(passed(filter("pg", {"n1", "n3"})), std::vector<std::string>{"n3"}) << "only the group's drives";
  const auto acr = reservation("ml-pg");
  ASSERT_TRUE(acr);
  EXPECT_EQ(drives_for(*acr, "pg-data"), std::vector<std::string>{"n3-fast"});
  EXPECT_EQ((*acr)["spec"]["ReservationRequests"][0]["CapacityRequest"]["StorageGroup"], "fast");
}

// csi-baremetal's chart makes csi-baremetal-sc (storageType ANY) the cluster's default class.
TEST_F(Baremetal, TheDefaultAnyClassTakesAWholeDriveHddFirstAndItsReservationSaysAny) {
  h_.fake.put(Kind::kClasses, bm_class("csi-baremetal-sc", "ANY"));
  h_.fake.put(Kind::kAvailableCapacities, ac("n1-hdd", "n1", "HDD", "100Gi"));
  h_.fake.put(Kind::kAvailableCapacities,
              ac("n1-hdd-tainted", "n1", "HDD", "50Gi", {{"drive.csi-baremetal.dell.com/taint", "NoSchedule"}}));
  h_.fake.put(Kind::kAvailableCapacities,
              ac("n2-hdd-other-taint", "n2", "HDD", "60Gi", {{"drive.csi-baremetal.dell.com/taint", "Maintenance"}}));
  h_.fake.put(Kind::kAvailableCapacities, ac("n2-nvme", "n2", "NVME", "50Gi"));
  start();
  auto add_any_pod = [&](const std::string& name) {
    h_.fake.put(Kind::kClaims, claim_object("ml", name + "-data", "c-" + name, "csi-baremetal-sc", "40Gi"));
    h_.fake.put(Kind::kPods, pod_with(name, {{name + "-data", "csi-baremetal-sc"}}));
    ASSERT_TRUE(
        eventually([&] { return h_.cluster->pending_pod("uid-" + name) && h_.cluster->claim("ml", name + "-data"); }));
  };
  add_any_pod("pa");
  EXPECT_EQ(passed(filter("pa", {"n1", "n2", "n3"})), (std::vector<std::string>{"n1", "n2", "n3"}));
  auto acr = reservation("ml-pa");
  ASSERT_TRUE(acr);
  EXPECT_EQ((*acr)["spec"]["ReservationRequests"][0]["CapacityRequest"]["StorageClass"], "ANY")
      << "as csi-baremetal writes it";
  EXPECT_EQ(drives_for(*acr, "pa-data"), (std::vector<std::string>{"n1-hdd", "n2-hdd-other-taint", "n3-ssd40"}))
      << "an HDD before the smaller SSDs; a NoSchedule taint skips a drive, another value does not";

  add_any_pod("pb");
  EXPECT_EQ(passed(filter("pb", {"n1", "n2", "n3"})), (std::vector<std::string>{"n1", "n2"}))
      << "n3's one drive is pa's";
  acr = reservation("ml-pb");
  ASSERT_TRUE(acr);
  EXPECT_EQ(drives_for(*acr, "pb-data"), (std::vector<std::string>{"n1-ssd60", "n2-ssd100"}))
      << "no drive twice: with the HDDs held, an SSD before n2's smaller NVMe drive; never the volume groups";
}

TEST_F(Baremetal, StorageTypesAreReadCaseInsensitively) {
  h_.fake.put(Kind::kClasses, bm_class("bm-lower", "ssd"));
  start();
  h_.fake.put(Kind::kClaims, claim_object("ml", "pl-data", "c-pl", "bm-lower", "50Gi"));
  h_.fake.put(Kind::kPods, pod_with("pl", {{"pl-data", "bm-lower"}}));
  ASSERT_TRUE(eventually([&] { return h_.cluster->pending_pod("uid-pl") && h_.cluster->claim("ml", "pl-data"); }));
  EXPECT_EQ(passed(filter("pl", {"n1", "n3"})), std::vector<std::string>{"n1"}) << "n3's SSD is 40Gi";
  const auto acr = reservation("ml-pl");
  ASSERT_TRUE(acr);
  EXPECT_EQ((*acr)["spec"]["ReservationRequests"][0]["CapacityRequest"]["StorageClass"], "SSD");
  EXPECT_EQ(drives_for(*acr, "pl-data"), std::vector<std::string>{"n1-ssd60"});
}

TEST_F(Baremetal, NoDriveIsHandedToTwoPods) {
  start();
  add_pod("p1", false);
  add_pod("p2", false);
  add_pod("p3", false);
  ASSERT_EQ(passed(filter("p1", {"n1"})).size(), 1u);
  ASSERT_EQ(passed(filter("p2", {"n1"})).size(), 1u);
  EXPECT_EQ(drives_for(*reservation("ml-p1"), "p1-data"), std::vector<std::string>{"n1-ssd60"});
  EXPECT_EQ(drives_for(*reservation("ml-p2"), "p2-data"), std::vector<std::string>{"n1-ssd100"});
  const auto third = filter("p3", {"n1"});
  EXPECT_TRUE(third.result.node_names->empty()) << "both SSDs of n1 are held";
  EXPECT_NE(third.result.failed_unresolvable.count("n1") + third.result.failed.count("n1"), 0u);
}

TEST_F(Baremetal, AfterARestartTheReservationsOnTheApiServerHoldTheirDrives) {
  h_.fake.put(
      Kind::kCapacityReservations,
      {{"apiVersion", "csi-baremetal.dell.com/v1"},
       {"kind", "AvailableCapacityReservation"},
       {"metadata", {{"name", "ml-earlier"}}},
       {"spec",
        {{"Namespace", "ml"},
         {"Status", "RESERVED"},
         {"NodeRequests", {{"Requested", {"node-n1"}}, {"Reserved", {"node-n1"}}}},
         {"ReservationRequests",
          {{{"CapacityRequest", {{"Name", "earlier-data"}, {"StorageClass", "SSD"}, {"Size", test_bytes("50Gi")}}},
            {"Reservations", {"n1-ssd60"}}}}}}}});
  h_.fake.put(Kind::kPods, pod_object("ml", "earlier", "uid-earlier", 0));
  start();
  add_pod("p1", false);
  ASSERT_EQ(passed(filter("p1", {"n1"})).size(), 1u);
  EXPECT_EQ(drives_for(*reservation("ml-p1"), "p1-data"), std::vector<std::string>{"n1-ssd100"})
      << "n1-ssd60 is the earlier pod's";
}

TEST_F(Baremetal, AClaimWithASelectedNodeIsHeldThereOnly) {
  start();
  add_pod("p1", false);
  add_pod("p2", false);
  ASSERT_EQ(passed(filter("p1", {"n1", "n2"})).size(), 2u);
  EXPECT_TRUE(passed(filter("p2", {"n2"})).empty()) << "n2's only SSD is held for p1";
  h_.fake.put(Kind::kClaims, claim_object("ml", "p1-data", "c-p1-data", kSsd, "50Gi", "n1"));
  EXPECT_TRUE(eventually([&] { return !passed(filter("p2", {"n2"})).empty(); }))
      << "once p1's claim is placed on n1, its drive on n2 is free";
}

TEST_F(Baremetal, AProvisionedClaimAsksNothingAndAShrunkDriveOffersWhatIsLeft) {
  start();
  add_pod("p1", false);
  json pvc = claim_object("ml", "p1-data", "c-p1-data", kSsd, "50Gi", "n1");
  pvc["spec"]["volumeName"] = "pvc-p1";
  pvc["status"]["phase"] = "Bound";
  h_.fake.put(Kind::kClaims, pvc);
  h_.fake.put(Kind::kAvailableCapacities, ac("n1-ssd60", "n1", "SSD", "0Gi"));
  ASSERT_TRUE(eventually([&] { return h_.cluster->claim("ml", "p1-data")->volume == "pvc-p1"; }));
  ASSERT_TRUE(eventually([&] {
    const model::Pool* ssd = pool_of("n1", kSsdPool);
    return ssd && ssd->capacity_bytes == test_bytes("300Gi");
  })) << "the shrunk drive arrives on its own watch";
  EXPECT_EQ(passed(filter("p1", {"n1"})), std::vector<std::string>{"n1"});
  EXPECT_FALSE(reservation("ml-p1")) << "nothing left to reserve";
  add_pod("p2", false);
  ASSERT_EQ(passed(filter("p2", {"n1"})).size(), 1u);
  EXPECT_EQ(drives_for(*reservation("ml-p2"), "p2-data"), std::vector<std::string>{"n1-ssd100"});
}

TEST_F(Baremetal, VolumeBalanceCountsVolumeObjects) {
  h_.fake.put(Kind::kBaremetalVolumes, volume("pvc-a", "n1"));
  h_.fake.put(Kind::kBaremetalVolumes, volume("pvc-b", "n1"));
  start();
  add_pod("p1");
  wire::ExtenderArgs args;
  args.pod = *h_.cluster->pending_pod("uid-p1");
  args.set_node_names({"n1", "n2"});
  ASSERT_TRUE(eventually([&] {
    const auto ranked = ext_->prioritize(args);
    std::map<std::string, std::int64_t> scores;
    for (const auto& s : ranked.scores) scores[std::string(s.host)] = s.score;
    return scores["n2"] > scores["n1"];
  })) << "n1 holds two volumes, n2 none";
}

TEST_F(Baremetal, TheReservationOfAPodNoLongerPendingIsDeleted) {
  start();
  add_pod("p1", false);
  add_pod("p2", false);
  ASSERT_EQ(passed(filter("p1", {"n1"})).size(), 1u);
  ASSERT_EQ(passed(filter("p2", {"n2"})).size(), 1u);
  h_.fake.put(Kind::kPods, pod_object("ml", "p1", "uid-p1", 0, "n1"));
  EXPECT_TRUE(eventually([&] { return !reservation("ml-p1").has_value(); })) << "bound: csi-baremetal has provisioned";
  std::this_thread::sleep_for(1500ms);
  EXPECT_TRUE(reservation("ml-p2").has_value()) << "still pending: kept";
}

class BaremetalIdle : public Baremetal {
 protected:
  BaremetalIdle() : Baremetal(1500ms) {}
};

TEST_F(BaremetalIdle, AReservationNoFilterConfirmedIsDeletedUnlessItsClaimIsBeingPlaced) {
  start();
  add_pod("p1", false);
  add_pod("p2", false);
  add_pod("p3", false);
  ASSERT_EQ(passed(filter("p1", {"n1"})).size(), 1u);
  ASSERT_EQ(passed(filter("p2", {"n1"})).size(), 1u);
  ASSERT_EQ(passed(filter("p3", {"n2"})).size(), 1u);
  h_.fake.put(Kind::kClaims, claim_object("ml", "p2-data", "c-p2-data", kSsd, "50Gi", "n1"));
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(500ms);
    ASSERT_EQ(passed(filter("p3", {"n2"})).size(), 1u) << "filtered again: confirmed";
  }
  EXPECT_TRUE(eventually([&] { return !reservation("ml-p1").has_value(); })) << "waiting in the queue: released";
  EXPECT_TRUE(reservation("ml-p2").has_value()) << "its claim has a node: CreateVolume may still read it";
  EXPECT_TRUE(reservation("ml-p3").has_value()) << "confirmed by each filter";
  add_pod("p4", false);
  EXPECT_EQ(passed(filter("p4", {"n1"})).size(), 1u) << "p1's drive is free again";
}

class BaremetalSlowApi : public Baremetal {
 protected:
  BaremetalSlowApi() : Baremetal(60s, 50ms) {}
};

TEST_F(BaremetalSlowApi, AFilterDoesNotWaitForASlowWriteButItsDrivesCountAtOnce) {
  start();
  add_pod("p1", false);
  add_pod("p2", false);
  h_.fake.delay_writes(1500ms);
  ASSERT_EQ(passed(filter("p1", {"n1"})).size(), 1u);
  EXPECT_FALSE(reservation("ml-p1").has_value()) << "answered before the write landed";
  ASSERT_EQ(passed(filter("p2", {"n1"})).size(), 1u);
  EXPECT_TRUE(eventually([&] { return reservation("ml-p1") && reservation("ml-p2"); }));
  EXPECT_EQ(drives_for(*reservation("ml-p1"), "p1-data"), std::vector<std::string>{"n1-ssd60"});
  EXPECT_EQ(drives_for(*reservation("ml-p2"), "p2-data"), std::vector<std::string>{"n1-ssd100"})
      << "p1's drive was held while its write was in flight";
}

class BaremetalSlowApiQuickRewrites : public Baremetal {
 protected:
  BaremetalSlowApiQuickRewrites() : Baremetal(60s, 50ms, 100ms) {}
};

TEST_F(BaremetalSlowApiQuickRewrites, AnEarlierWritesEchoDoesNotReleaseTheDrivesOfARewriteStillToBeSent) {
  start();
  add_pod("p1", false);
  add_pod("p2", false);
  h_.fake.delay_writes(600ms);
  ASSERT_EQ(passed(filter("p1", {"n1"})).size(), 1u);
  std::this_thread::sleep_for(150ms);
  ASSERT_FALSE(reservation("ml-p1").has_value());
  ASSERT_EQ(passed(filter("p1", {"n1", "n2"})).size(), 2u) << "a rewrite while the first write is in flight";
  ASSERT_TRUE(eventually([&] { return reservation("ml-p1").has_value(); })) << "the first write landed";
  std::this_thread::sleep_for(200ms);  // its watch event arrives meanwhile
  EXPECT_EQ(passed(filter("p2", {"n2"})), std::vector<std::string>{})
      << "n2's one SSD is still held for p1's rewrite, whatever the first write's echo said";
  EXPECT_TRUE(eventually([&] {
    const auto acr = reservation("ml-p1");
    return acr && drives_for(*acr, "p1-data") == std::vector<std::string>{"n1-ssd60", "n2-ssd100"};
  }));
}

// Trust: what a caller of /filter may change. The fixture's engine decides through the cluster's
// gate; the reservations' writes follow this one, as the daemon's election would have them.
class TermGate final : public engine::Gate {
 public:
  std::optional<std::string> not_ready() const override { return std::nullopt; }
  std::optional<std::string> not_leading() const override {
    return leading ? std::nullopt : std::optional<std::string>("another replica leads");
  }
  std::optional<TimePoint> write_fence() const override {
    std::lock_guard lock(mu);
    return fence;
  }
  std::atomic<bool> leading{true};
  mutable std::mutex mu;
  std::optional<TimePoint> fence;
};

// Stops the cluster (its writers and sweep) before the gate or limiter it was given goes away.
struct StopFirst {
  kube::testing::ClusterHarness& h;
  ~StopFirst() { h.cluster.reset(); }
};

TEST_F(Baremetal, AReservationHoldsWhatThePodTheApiServerHasNotWhatTheRequestSays) {
  start();
  add_pod("p1");
  h_.fake.put(Kind::kPods, pod_object("ml", "bare", "uid-bare", 0));
  ASSERT_TRUE(eventually([&] { return h_.cluster->pending_pod("uid-bare").has_value(); }));
  wire::ExtenderArgs forged;
  forged.pod = *h_.cluster->pending_pod("uid-p1");  // p1's volumes, under the volume-less pod's identity
  forged.pod.uid = "uid-bare";
  forged.pod.name = "bare";
  forged.set_node_names({"n1", "n2", "n3"});
  for (int i = 0; i < 3; ++i) (void)ext_->filter(forged);
  EXPECT_TRUE(h_.fake.objects(Kind::kCapacityReservations).empty()) << "the real pod has no volume: nothing reserved";
  EXPECT_EQ(passed(filter("p1", {"n1", "n2", "n3"})), (std::vector<std::string>{"n1", "n2"}))
      << "no drive held for the forged request";
}

TEST_F(Baremetal, MadeUpPodsCostBoundedPodReadsAtTheApiServer) {
  start();
  add_pod("p1");
  const auto reads = [&] {
    std::size_t n = 0;
    for (const auto& r : h_.server.requests("GET")) n += r.path.rfind("/api/v1/namespaces/ml/pods/", 0) == 0;
    return n;
  };
  const std::size_t before = reads();
  for (int i = 0; i < 40; ++i) {
    wire::ExtenderArgs made_up;
    made_up.pod = *h_.cluster->pending_pod("uid-p1");
    made_up.pod.uid = "uid-made-up-" + std::to_string(i);
    made_up.pod.name = "made-up-" + std::to_string(i);
    made_up.set_node_names({"n1"});
    EXPECT_FALSE(ext_->filter(made_up).result.error.empty());
  }
  EXPECT_LE(reads() - before, std::size_t{sources::KubeCluster::kFetchesPerSecond} + 5)
      << "40 made-up pods in well under a second: reads held to the limit";
  EXPECT_TRUE(h_.fake.objects(Kind::kCapacityReservations).empty());
}

TEST_F(Baremetal, NoCallerRewritesOrDeletesAReservationWhoseClaimHasASelectedNode) {
  start();
  add_pod("p1");
  ASSERT_EQ(passed(filter("p1", {"n1", "n2"})).size(), 2u);
  const json before = *reservation("ml-p1");
  h_.fake.put(Kind::kClaims, claim_object("ml", "p1-data", "c-p1-data", kSsd, "50Gi", "n1"));
  ASSERT_TRUE(eventually([&] { return h_.cluster->claim("ml", "p1-data")->node == "n1"; }));
  (void)filter("p1", {"n2"});
  (void)filter("p1", {"n3"});
  const auto after = reservation("ml-p1");
  ASSERT_TRUE(after) << "kube-scheduler chose n1: CreateVolume may be reading it";
  EXPECT_EQ((*after)["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"]) << "not rewritten";
  EXPECT_EQ(drives_for(*after, "p1-scratch"), (std::vector<std::string>{"n1-lvg", "n2-lvg"}));
}

TEST_F(Baremetal, TwoPodsWhoseReservationNamesCollideDoNotOverwriteEachOther) {
  start();
  auto add = [&](const std::string& ns, const std::string& name) {
    h_.fake.put(Kind::kClaims, claim_object(ns, name + "-data", "c-" + ns + name, kSsd, "50Gi"));
    json pod = pod_object(ns, name, "uid-" + ns + "." + name, 0);
    pod["spec"]["volumes"] =
        json::array({{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", name + "-data"}}}}});
    h_.fake.put(Kind::kPods, pod);
    ASSERT_TRUE(eventually(
        [&] { return h_.cluster->pending_pod("uid-" + ns + "." + name) && h_.cluster->claim(ns, name + "-data"); }));
  };
  add("a-b", "c");
  add("a", "b-c");
  wire::ExtenderArgs first;
  first.pod = *h_.cluster->pending_pod("uid-a-b.c");
  first.set_node_names({"n1"});
  ASSERT_TRUE(ext_->filter(first).result.error.empty());
  wire::ExtenderArgs second;
  second.pod = *h_.cluster->pending_pod("uid-a.b-c");
  second.set_node_names({"n2"});
  const auto refused = ext_->filter(second);
  EXPECT_NE(refused.result.error.find("not overwritten"), std::string::npos) << refused.result.error;
  const auto acr = reservation("a-b-c");
  ASSERT_TRUE(acr);
  EXPECT_EQ((*acr)["spec"]["Namespace"], "a-b") << "the first pod's reservation stands";
  EXPECT_EQ((*acr)["spec"]["NodeRequests"]["Reserved"], json({"node-n1"}));
}

TEST_F(Baremetal, NoReservationIsSentPastTheLeadershipTermsWriteFence) {
  TermGate gate;
  h_.cluster->set_write_terms(nullptr, &gate);
  StopFirst stop_first{h_};
  start();
  add_pod("p1", false);
  add_pod("p2", false);
  {
    std::lock_guard lock(gate.mu);
    gate.fence = SteadyClock::now() - 1ms;  // the term's writes had to be answered by now
  }
  const auto late = filter("p1", {"n1"});
  EXPECT_NE(late.result.error.find("write fence"), std::string::npos) << late.result.error;
  EXPECT_EQ(reservation_writes(h_.server), 0u) << "nothing sent to the API server";
  {
    std::lock_guard lock(gate.mu);
    gate.fence.reset();
  }
  EXPECT_EQ(passed(filter("p2", {"n1"})).size(), 1u);
  EXPECT_EQ(drives_for(*reservation("ml-p2"), "p2-data"), std::vector<std::string>{"n1-ssd60"})
      << "the hold never written was dropped: p2 gets the best fit";
  gate.leading = false;
  h_.fake.put(Kind::kPods, pod_object("ml", "p2", "uid-p2", 0, "n1"));
  std::this_thread::sleep_for(1500ms);
  EXPECT_TRUE(reservation("ml-p2").has_value()) << "a standby deletes nothing";
  gate.leading = true;
  EXPECT_TRUE(eventually([&] { return !reservation("ml-p2").has_value(); })) << "the leader does";
}

TEST_F(BaremetalIdle, ANewLeaderCountsTheIdleTimeFromTheStartOfItsTerm) {
  TermGate gate;
  h_.cluster->set_write_terms(nullptr, &gate);
  StopFirst stop_first{h_};
  start();
  add_pod("p1", false);
  ASSERT_EQ(passed(filter("p1", {"n1"})).size(), 1u);
  gate.leading = false;
  std::this_thread::sleep_for(2000ms);  // past the idle time: the old leader confirmed it in its memory
  EXPECT_TRUE(reservation("ml-p1").has_value()) << "a standby deletes nothing";
  gate.leading = true;
  std::this_thread::sleep_for(700ms);
  EXPECT_TRUE(reservation("ml-p1").has_value()) << "the new leader's idle time starts with its term";
  EXPECT_TRUE(eventually([&] { return !reservation("ml-p1").has_value(); })) << "and ends";
}

int thread_count() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

class BaremetalEveryRewrite : public Baremetal {
 protected:
  BaremetalEveryRewrite() : Baremetal(60s, 50ms, 0ms) {}
};

TEST_F(BaremetalEveryRewrite, ReservationWritesShareTheApiRateLimitAndAFixedPoolOfWriters) {
  kube::RateLimiter writes(5, 5);
  h_.cluster->set_write_terms(&writes, nullptr);
  StopFirst stop_first{h_};
  start();
  add_pod("p1", false);
  const std::size_t before = reservation_writes(h_.server);
  const auto start = SteadyClock::now();
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&, c] {
      for (int i = 0; i < 20; ++i) (void)filter("p1", {(i + c) % 2 ? "n1" : "n2"});  // alternating: a write each
    });
  }
  for (auto& t : callers) t.join();
  const auto seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  const std::size_t written = reservation_writes(h_.server) - before;
  EXPECT_LE(static_cast<double>(written), 5 + 5 * seconds + 4) << "80 filters in " << seconds << " s";

  h_.fake.delay_writes(1500ms);
  const int threads = thread_count();
  for (int i = 0; i < 40; ++i) (void)filter("p1", {i % 2 ? "n1" : "n2"});
  EXPECT_LE(thread_count(), threads) << "no thread per write: the writers are a fixed pool";
}

class BaremetalSlowRewrites : public Baremetal {
 protected:
  BaremetalSlowRewrites() : Baremetal(60s, 5s, 60s) {}
};

TEST_F(BaremetalSlowRewrites, OnePodsRewritesWithinTheIntervalChangeNothingAndTakeNoDrive) {
  StopFirst stop_first{h_};
  start();
  add_pod("p1", false);
  add_pod("p2", false);
  ASSERT_EQ(passed(filter("p1", {"n1"})).size(), 1u);
  ASSERT_TRUE(reservation("ml-p1"));
  const std::size_t before = reservation_writes(h_.server);
  for (int i = 0; i < 30; ++i) {
    EXPECT_EQ(passed(filter("p1", {i % 2 ? "n1" : "n2"})).size(), i % 2 ? 1u : 0u)
        << "n1 stands as written; n2 is not held";
  }
  EXPECT_EQ(reservation_writes(h_.server), before) << "30 rewrites within the interval: none written";
  EXPECT_EQ(drives_for(*reservation("ml-p1"), "p1-data"), std::vector<std::string>{"n1-ssd60"});

  ASSERT_EQ(passed(filter("p2", {"n2"})), std::vector<std::string>{"n2"})
      << "n2's one SSD is free: p1's rewrites never held it";
  ASSERT_TRUE(reservation("ml-p2")) << "another pod's write is not held back by p1's";
  EXPECT_EQ(drives_for(*reservation("ml-p2"), "p2-data"), std::vector<std::string>{"n2-ssd100"});
}

TEST(BaremetalConfig, TurnedOffNeitherWatchesNorReserves) {
  kube::testing::ClusterHarness h([](config::Config& c) { c.storage.baremetal.enabled = false; });
  h.start();
  ASSERT_TRUE(h.wait_ready());
  EXPECT_EQ(h.cluster->drive_reserver(), nullptr);
  EXPECT_TRUE(h.server.requests("GET", kube::testing::kind_path(Kind::kAvailableCapacities)).empty());
}

TEST(BaremetalConfig, OnCsiBaremetalsChartDefaultsNodesAreNamedByTheAnnotationItsNodeControllerWrites) {
  kube::testing::ClusterHarness h([](config::Config&) {});  // the daemon's defaults
  h.fake.put(Kind::kNodes, node_object("a", 0, {{"nodes.csi-baremetal.dell.com/uuid", "0b5e2a4c-uuid-a"}}));
  h.fake.put(Kind::kNodes, node_object("b", 0));  // not annotated (yet): its UID
  json on_a = ac("ac-a", "a", "SSD", "10Gi");
  on_a["spec"]["NodeId"] = "0b5e2a4c-uuid-a";
  h.fake.put(Kind::kAvailableCapacities, on_a);
  h.fake.put(Kind::kAvailableCapacities, ac("ac-a-by-uid", "a", "SSD", "20Gi"));  // names a's UID: not a's
  h.fake.put(Kind::kAvailableCapacities, ac("ac-b", "b", "SSD", "30Gi"));
  h.start();
  ASSERT_TRUE(h.wait_ready());
  auto pool = [&](const char* node) {
    const auto snap = h.state.snapshot();
    return snap.find(node) ? snap.find(node)->supply.find_pool(kSsdPool) : nullptr;
  };
  ASSERT_TRUE(eventually([&] { return pool("a") && pool("b"); }));
  ASSERT_EQ(pool("a")->devices.size(), 1u);
  EXPECT_EQ(pool("a")->devices[0].name, "ac-a");
  ASSERT_EQ(pool("b")->devices.size(), 1u);
  EXPECT_EQ(pool("b")->devices[0].name, "ac-b");
}

TEST(BaremetalConfig, ANodeIdMayComeFromAnAnnotationAndANodeSelectorLimitsTheNodes) {
  kube::testing::ClusterHarness h([](config::Config& c) {
    c.storage.baremetal.node_id_annotation = "csi-baremetal.dell.com/uuid";
    c.storage.baremetal.node_selector = {{"storage", "local"}};
  });
  h.fake.put(Kind::kNodes, node_object("a", 0, {{"csi-baremetal.dell.com/uuid", "uuid-a"}}, {{"storage", "local"}}));
  h.fake.put(Kind::kNodes, node_object("b", 0, {{"csi-baremetal.dell.com/uuid", "uuid-b"}}));
  for (const char* n : {"a", "b"}) {
    json o = ac(std::string("ac-") + n, n, "SSD", "10Gi");
    o["spec"]["NodeId"] = std::string("uuid-") + n;
    h.fake.put(Kind::kAvailableCapacities, o);
  }
  h.start();
  ASSERT_TRUE(h.wait_ready());
  ASSERT_TRUE(eventually([&] {
    const auto snap = h.state.snapshot();
    return snap.find("a") && snap.find("a")->supply.find_pool(kSsdPool);
  }));
  const auto snap = h.state.snapshot();
  EXPECT_EQ(snap.find("b")->supply.find_pool(kSsdPool), nullptr) << "outside the node selector";
}

}  // namespace
}  // namespace extender::engine
