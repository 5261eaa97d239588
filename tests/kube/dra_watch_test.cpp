// The fake API server serves the DRA kinds of resource.k8s.io/v1: a reflector lists and watches
// ResourceSlices, ResourceClaims and DeviceClasses whose objects the DRA decoders read back into
// an inventory; as an old server it answers 404 for the whole group.
#include <gtest/gtest.h>

#include <mutex>

#include "extender/kube/api_client.h"
#include "extender/kube/reflector.h"
#include "extender/model/dra_inventory.h"
#include "extender/wire/dra_objects.h"
#include "support/fake_cluster.h"
#include "support/fake_dra.h"

namespace extender::kube {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::FakeApiServer;
using testing::FakeCluster;
using testing::json;
using testing::Kind;

// Keeps the latest object of each name, as an informer's store does.
class StoreSink : public ReflectorSink {
 public:
  void begin_list() override {
    std::lock_guard lock(mu_);
    staging_.clear();
  }
  void list_item(const json& o) override {
    std::lock_guard lock(mu_);
    staging_[o["metadata"]["name"].get<std::string>()] = o;
  }
  void end_list() override {
    std::lock_guard lock(mu_);
    objects_ = std::move(staging_);
    staging_.clear();
  }
  void event(std::string_view type, const json& o) override {
    std::lock_guard lock(mu_);
    if (type == "DELETED") {
      objects_.erase(o["metadata"]["name"].get<std::string>());
    } else {
      objects_[o["metadata"]["name"].get<std::string>()] = o;
    }
  }
  std::vector<json> objects() const {
    std::lock_guard lock(mu_);
    std::vector<json> out;
    for (const auto& [name, o] : objects_) out.push_back(o);
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, json> staging_, objects_;
};

class DraHarness {
 public:
  DraHarness() : fake(server) {
    ClusterAccess access;
    access.server = server.url();
    auto c = ApiClient::create(access, {});
    if (!c) throw std::runtime_error(c.message());
    client = std::move(*c);
  }
  ~DraHarness() {
    for (auto& r : reflectors) r->stop();
    for (auto& t : threads) t.join();
    reflectors.clear();
    client.reset();
    server.stop();
  }
  Reflector& watch(Kind k, StoreSink& sink) {
    ReflectorOptions o;
    o.resource = testing::kind_path(k);
    o.path = testing::kind_path(k);
    o.watch_timeout = 1s;
    o.backoff_initial = 10ms;
    o.backoff_max = 50ms;
    reflectors.push_back(std::make_unique<Reflector>(*client, o, sink));
    Reflector* r = reflectors.back().get();
    threads.emplace_back([r] { r->run(); });
    return *r;
  }

  FakeApiServer server;
  FakeCluster fake;
  std::unique_ptr<ApiClient> client;
  std::vector<std::unique_ptr<Reflector>> reflectors;
  std::vector<std::thread> threads;
};

model::DraInventory inventory_of(const StoreSink& slices, const StoreSink& claims) {
  std::vector<model::ResourceSlice> s;
  for (const auto& o : slices.objects()) {
    auto slice = wire::decode_resource_slice(o);
    EXPECT_TRUE(slice) << slice.message();
    if (slice) s.push_back(std::move(*slice));
  }
  std::vector<model::ResourceClaim> c;
  for (const auto& o : claims.objects()) {
    auto claim = wire::decode_resource_claim(o);
    EXPECT_TRUE(claim) << claim.message();
    if (claim) c.push_back(std::move(*claim));
  }
  return model::build_dra_inventory(s, c);
}

TEST(DraWatch, ListsAndWatchesTheThreeKinds) {
  DraHarness h;
  h.fake.put(Kind::kResourceSlices, testing::resource_slice_object("dra-1", 4));
  h.fake.put(Kind::kDeviceClasses, testing::device_class_object());
  h.fake.put(Kind::kResourceClaims, testing::resource_claim_object("ml", "a", "c-a", 1, "dra-1", {"gpu-0"}));
  StoreSink slices, claims, classes;
  Reflector& rs = h.watch(Kind::kResourceSlices, slices);
  Reflector& rc = h.watch(Kind::kResourceClaims, claims);
  Reflector& rd = h.watch(Kind::kDeviceClasses, classes);
  ASSERT_TRUE(eventually([&] { return rs.status().synced && rc.status().synced && rd.status().synced; }));

  model::DraInventory inv = inventory_of(slices, claims);
  ASSERT_NE(inv.node("dra-1"), nullptr);
  EXPECT_EQ(inv.node("dra-1")->gpus.size(), 4u);
  EXPECT_EQ(inv.node("dra-1")->allocated_gpus(), 1);
  auto cls = wire::decode_device_class(classes.objects().at(0));
  ASSERT_TRUE(cls) << cls.message();
  EXPECT_EQ(cls->extended_resource_name, "nvidia.com/gpu");

  // Watch events: a second node's slice, a claim allocated two devices, a claim deleted.
  h.fake.put(Kind::kResourceSlices, testing::resource_slice_object("dra-2", 2, "40Gi"));
  h.fake.put(Kind::kResourceClaims, testing::resource_claim_object("ml", "b", "c-b", 2, "dra-1", {"gpu-1", "gpu-2"}));
  h.fake.remove(Kind::kResourceClaims, "ml/a");
  ASSERT_TRUE(eventually([&] {
    model::DraInventory now = inventory_of(slices, claims);
    return now.node("dra-2") && now.node("dra-1")->allocated_gpus() == 2 && !now.node("dra-1")->gpus[0].allocated;
  }));
  EXPECT_EQ(inventory_of(slices, claims).node("dra-2")->gpus[0].memory_bytes, std::int64_t{40} << 30);
}

TEST(DraWatch, AnOldServerAnswers404ForTheGroup) {
  DraHarness h;
  h.fake.serve_dra(false);
  h.fake.put(Kind::kResourceSlices, testing::resource_slice_object("dra-1", 4));
  StoreSink slices;
  Reflector& r = h.watch(Kind::kResourceSlices, slices);
  ASSERT_TRUE(eventually([&] { return !r.status().last_error.empty(); }));
  EXPECT_FALSE(r.status().synced);
  EXPECT_NE(r.status().last_error.find("404"), std::string::npos) << r.status().last_error;
  for (const sources::WatchedKind& row : sources::kinds_of(sources::KindGroup::kDra)) {
    const Kind k = row.kind;
    auto reply = h.client->get(testing::kind_path(k), 5s);
    ASSERT_TRUE(reply) << reply.message();
    EXPECT_EQ(reply->status, 404) << testing::kind_path(k);
  }
  auto discovery = h.client->get(testing::kDraGroupPath, 5s);
  ASSERT_TRUE(discovery) << discovery.message();
  EXPECT_EQ(discovery->status, 404);

  h.fake.serve_dra(true);
  ASSERT_TRUE(eventually([&] { return r.status().synced; })) << "the group appears after an upgrade";
  discovery = h.client->get(testing::kDraGroupPath, 5s);
  ASSERT_TRUE(discovery) << discovery.message();
  EXPECT_EQ(discovery->status, 200);
  EXPECT_NE(discovery->body.find("resourceslices"), std::string::npos);
}

}  // namespace
}  // namespace extender::kube
