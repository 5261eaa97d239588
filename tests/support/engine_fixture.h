#pragma once
// EngineFixture: a test fixture with the engine over a ClusterHarness, as the storage tests drive
// it: start() waits until every watch has listed, filter() sends /filter for a pending pod, and
// pool() reads a node's pool from a fresh Snapshot (kept in snap_ for the caller's later reads).
#include <gtest/gtest.h>

#include "extender/engine/extender.h"
#include "extender/kube/api_binder.h"
#include "extender/state/demand_cache.h"
#include "support/cluster_harness.h"

namespace extender::kube::testing {

class EngineFixture : public ::testing::Test {
 protected:
  explicit EngineFixture(const std::function<void(config::Config&)>& tweak = {}) : h_(tweak) {}

  void start() {
    h_.start();
    ASSERT_TRUE(h_.wait_ready());
    ext_ = h_.extender(demands_, binder_);
  }
  engine::FilterAnswer filter(const std::string& pod, std::vector<std::string> nodes) {
    return filter_pending(*ext_, *h_.cluster, pod, std::move(nodes));
  }
  const model::Pool* pool_of(const std::string& node, std::string_view pool) {
    snap_ = h_.state.snapshot();
    const state::NodeState* n = snap_.find(node);
    return n ? n->supply.find_pool(pool) : nullptr;
  }

  ClusterHarness h_;
  state::Snapshot snap_;
  state::DemandCache demands_{1000, std::chrono::minutes(5)};
  ApiBinder binder_{*h_.client};
  std::unique_ptr<engine::Extender> ext_;
};

}  // namespace extender::kube::testing
