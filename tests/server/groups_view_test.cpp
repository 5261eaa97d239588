#include "extender/server/groups_view.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace extender::server {
namespace {

using namespace std::chrono_literals;

TEST(GroupsView, ListsEachGroupsMembersWhereTheyAreHeldAndWhatTheyHold) {
  const TimePoint now = TimePoint{} + 1h;
  state::InFlightHolds::HoldView a;
  a.uid = "u1";
  a.owner = "ml/w-0";
  a.group = "ml/train";
  a.node = "gpu-1";
  a.phase = state::InFlightHolds::Phase::kPreBind;
  a.allocation.gpus["nvidia.com/gpu"] = 1;
  model::VolumePlacement v;
  v.pool = "local";
  v.bytes = std::int64_t{40} << 30;
  v.claim = "ml/data-w-0";
  a.allocation.volumes.push_back(v);
  a.expires = now + 90s;
  state::InFlightHolds::HoldView b = a;
  b.uid = "u2";
  b.owner = "ml/w-1";
  b.node = "gpu-2";
  b.phase = state::InFlightHolds::Phase::kFiltered;
  const auto j = nlohmann::json::parse(render_groups({a, b}, now));
  EXPECT_EQ(j["holds"], 2);
  ASSERT_EQ(j["groups"].size(), 1u);
  const auto& g = j["groups"][0];
  EXPECT_EQ(g["group"], "ml/train");
  EXPECT_EQ(g["members"], 2);
  EXPECT_EQ(g["held"][0]["node"], "gpu-1");
  EXPECT_EQ(g["held"][0]["phase"], "prebind");
  EXPECT_EQ(g["held"][0]["holds"]["volumes"][0]["claim"], "ml/data-w-0");
  EXPECT_EQ(g["held"][0]["holds"]["gpus"]["nvidia.com/gpu"], 1);
  EXPECT_DOUBLE_EQ(g["held"][0]["expires_in_seconds"].get<double>(), 90.0);
  EXPECT_EQ(g["held"][1]["phase"], "filtered");
  EXPECT_EQ(nlohmann::json::parse(render_groups({}, now))["groups"].size(), 0u);
}

}  // namespace
}  // namespace extender::server
