#include "extender/state/in_flight_holds.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace extender::state {
namespace {

using namespace std::chrono_literals;

// One event of a pod group's cycle as the daemon sees it, and what the ledger and the holds show
// after it (every pod of the row, "uid=where[:phase]").
enum class Ev {
  kFiltered,     // /filter narrowed the pod to `node` and held it there
  kNominated,    // the watch shows status.nominatedNodeName = node
  kPreBind,      // the watch shows VolumeBinding's selected-node = node on its claim
  kBindReserve,  // /bind reserved it on node (then the sweeper runs)
  kBound,        // the watch shows spec.nodeName = node
  kDeleted,      // the watch shows it deleted
  kGroupFailed,  // the group's PodGroup condition turned False (or its members were rejected)
  kAdvance,      // time passes, then the sweeper runs
};
struct Step {
  Ev ev;
  std::string pod;
  std::string node;
  std::string want;
  Duration advance{};
  bool superseded = false;  // a later filter of the same pod replaces it: skipping it shows nowhere
};
struct Row {
  const char* name;
  std::vector<Step> steps;
};

constexpr const char* kGroup = "ml/gang-a";

model::NodeSupply node(const std::string& name) {
  model::NodeSupply s;
  s.name = name;
  s.gpus["nvidia.com/gpu"] = 4;
  return s;
}

Claim claim_on(const std::string& pod, const std::string& node_name, const std::string& source) {
  Claim c;
  c.owner = "ml/" + pod;
  c.source = source;
  c.node = node_name;
  c.allocation.gpus["nvidia.com/gpu"] = 1;
  return c;
}

std::string describe(const ClusterState& state, const InFlightHolds& holds, const std::set<std::string>& pods) {
  std::ostringstream out;
  const auto views = holds.holds();
  for (const auto& pod : pods) {
    if (out.tellp() > 0) out << ' ';
    out << pod << '=';
    auto c = state.claim_of(pod);
    if (!c) {
      out << "none";
    } else if (c->kind == Claim::Kind::kPlaced) {
      out << "placed@" << c->node;
    } else {
      out << (c->source == kInFlightSource ? "hold@" : "bind@") << c->node;
    }
    for (const auto& v : views) {
      if (v.uid == pod) out << ':' << InFlightHolds::phase_name(v.phase);
    }
  }
  return out.str();
}

// Runs `row` without its step `skip` (none: -1); the first step whose result differs, or "".
std::string run(const Row& row, int skip) {
  ClusterState state;
  state.upsert_nodes({node("a"), node("b")});
  InFlightHolds holds(state, {1min, 5min, 16});
  std::set<std::string> pods;
  for (const auto& s : row.steps) {
    if (!s.pod.empty()) pods.insert(s.pod);
  }
  TimePoint now = TimePoint{} + 1h;
  for (int i = 0; i < static_cast<int>(row.steps.size()); ++i) {
    if (i == skip) continue;
    const Step& s = row.steps[i];
    switch (s.ev) {
      case Ev::kFiltered:
        holds.cycle(s.pod, kGroup, now);
        holds.hold(s.pod, kGroup, claim_on(s.pod, s.node, "pod"), now);
        break;
      case Ev::kNominated: holds.nominated(s.pod, s.node, now); break;
      case Ev::kPreBind: holds.pre_bound(s.pod, s.node, now); break;
      case Ev::kBindReserve:
        state.reserve(s.pod, claim_on(s.pod, s.node, "pod"), 30s, now);
        holds.sweep(now);
        break;
      case Ev::kBound:
        state.place(s.pod, claim_on(s.pod, s.node, "pod"));
        holds.bound(s.pod);
        break;
      case Ev::kDeleted:
        state.drop(s.pod);
        holds.released(s.pod);
        break;
      case Ev::kGroupFailed: holds.group_failed(kGroup, now); break;
      case Ev::kAdvance:
        now += s.advance;
        state.sweep_expired(now);
        holds.sweep(now);
        break;
    }
    const std::string got = describe(state, holds, pods);
    if (got != s.want) return "step " + std::to_string(i) + ": got \"" + got + "\", want \"" + s.want + "\"";
  }
  const std::string end = describe(state, holds, pods);
  if (end != row.steps.back().want) return "end: got \"" + end + "\", want \"" + row.steps.back().want + "\"";
  return "";
}

Step at(Ev ev, std::string pod, std::string node, std::string want) {
  return {ev, std::move(pod), std::move(node), std::move(want)};
}
Step after(Duration d, std::string want) { return {Ev::kAdvance, "", "", std::move(want), d}; }

const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      {"member filtered, nominated, PreBind, /bind, bound",
       {at(Ev::kFiltered, "m1", "a", "m1=hold@a:filtered"),
        after(50s, "m1=hold@a:filtered"),
        at(Ev::kNominated, "m1", "a", "m1=hold@a:nominated"),
        after(4min, "m1=hold@a:nominated"),  // the nomination gave it the Permit timeout
        at(Ev::kPreBind, "m1", "a", "m1=hold@a:prebind"),
        after(4min, "m1=hold@a:prebind"),                      // so did PreBind's selected node, from then
        {Ev::kBindReserve, "m1", "a", "m1=bind@a", {}, true},  // the placement replaces /bind's reservation
        at(Ev::kBound, "m1", "a", "m1=placed@a")}},
      {"members assumed elsewhere: the hold on the narrowed node goes",
       {at(Ev::kFiltered, "m1", "a", "m1=hold@a:filtered m2=none"),
        at(Ev::kFiltered, "m2", "a", "m1=hold@a:filtered m2=hold@a:filtered"),
        at(Ev::kNominated, "m1", "b", "m1=none m2=hold@a:filtered"), at(Ev::kPreBind, "m2", "b", "m1=none m2=none"),
        at(Ev::kBound, "m1", "b", "m1=placed@b m2=none")}},
      {"filtered again: a new cycle replaces the hold",
       {{Ev::kFiltered, "m1", "a", "m1=hold@a:filtered", {}, true},
        at(Ev::kFiltered, "m1", "b", "m1=hold@b:filtered"),
        after(50s, "m1=hold@b:filtered"),
        at(Ev::kNominated, "m1", "b", "m1=hold@b:nominated"),
        after(4min, "m1=hold@b:nominated"),
        at(Ev::kBound, "m1", "b", "m1=placed@b")}},
      {"group failed: every member's hold goes, and a later cycle holds again",
       {at(Ev::kFiltered, "m1", "a", "m1=hold@a:filtered m2=none"),
        at(Ev::kFiltered, "m2", "b", "m1=hold@a:filtered m2=hold@b:filtered"),
        after(10s, "m1=hold@a:filtered m2=hold@b:filtered"), at(Ev::kGroupFailed, "", "", "m1=none m2=none"),
        after(1s, "m1=none m2=none"), at(Ev::kFiltered, "m2", "a", "m1=none m2=hold@a:filtered")}},
      {"a member filtered again begins a new cycle: the last cycle's unpublished holds go first",
       {at(Ev::kFiltered, "m1", "a", "m1=hold@a:filtered m2=none"),
        at(Ev::kFiltered, "m2", "b", "m1=hold@a:filtered m2=hold@b:filtered"),
        after(5s, "m1=hold@a:filtered m2=hold@b:filtered"), at(Ev::kFiltered, "m2", "a", "m1=none m2=hold@a:filtered"),
        at(Ev::kFiltered, "m1", "b", "m1=hold@b:filtered m2=hold@a:filtered")}},
      {"a cycle in progress keeps its earlier members: each member filtered extends the group's holds",
       {at(Ev::kFiltered, "m1", "a", "m1=hold@a:filtered m2=none"), after(40s, "m1=hold@a:filtered m2=none"),
        at(Ev::kFiltered, "m2", "b", "m1=hold@a:filtered m2=hold@b:filtered"),
        after(40s, "m1=hold@a:filtered m2=hold@b:filtered"), after(30s, "m1=none m2=none")}},
      {"a published member outlives the next cycle of its group",
       {at(Ev::kFiltered, "m1", "a", "m1=hold@a:filtered m2=none m3=none"),
        at(Ev::kFiltered, "m2", "b", "m1=hold@a:filtered m2=hold@b:filtered m3=none"),
        at(Ev::kFiltered, "m3", "b", "m1=hold@a:filtered m2=hold@b:filtered m3=hold@b:filtered"),
        at(Ev::kNominated, "m1", "a", "m1=hold@a:nominated m2=hold@b:filtered m3=hold@b:filtered"),
        at(Ev::kFiltered, "m2", "a", "m1=hold@a:nominated m2=hold@a:filtered m3=none")}},
      {"deleted while held",
       {at(Ev::kFiltered, "m1", "a", "m1=hold@a:filtered"), after(10s, "m1=hold@a:filtered"),
        at(Ev::kDeleted, "m1", "", "m1=none")}},
      {"nobody reports the group's end: the hold settles unpublished and goes",
       {at(Ev::kFiltered, "m1", "a", "m1=hold@a:filtered"), after(50s, "m1=hold@a:filtered"), after(20s, "m1=none")}},
      {"a nominated member waits at Permit: the Permit timeout ends it",
       {at(Ev::kFiltered, "m1", "a", "m1=hold@a:filtered"), at(Ev::kNominated, "m1", "a", "m1=hold@a:nominated"),
        after(4min, "m1=hold@a:nominated"), after(2min, "m1=none")}},
      {"bound before any nomination or PreBind was seen",
       {at(Ev::kFiltered, "m1", "a", "m1=hold@a:filtered"), after(10s, "m1=hold@a:filtered"),
        at(Ev::kBound, "m1", "a", "m1=placed@a"), after(6min, "m1=placed@a")}},
  };
  return table;
}

TEST(InFlightHolds, EachEventOrderEndsWhereTheLedgerShouldBe) {
  for (const Row& row : rows()) EXPECT_EQ(run(row, -1), "") << row.name;
}

TEST(InFlightHolds, SkippingAnyStepOfARowIsNoticed) {
  for (const Row& row : rows()) {
    for (int i = 0; i < static_cast<int>(row.steps.size()); ++i) {
      if (row.steps[i].ev == Ev::kAdvance || row.steps[i].superseded) continue;
      EXPECT_NE(run(row, i), "") << row.name << ": step " << i << " can be skipped unnoticed";
    }
  }
}

TEST(InFlightHolds, AHoldCountsForOthersAndNeverForThePodItself) {
  ClusterState state;
  state.upsert_nodes({node("a")});
  InFlightHolds holds(state, {});
  const TimePoint now = TimePoint{} + 1h;
  holds.hold("m1", kGroup, claim_on("m1", "a", "pod"), now);
  const NodeState* a = state.snapshot().find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->usage_excluding("m2", now).gpus.at("nvidia.com/gpu"), 1);
  const auto own = a->usage_excluding("m1", now).gpus;
  EXPECT_TRUE(!own.count("nvidia.com/gpu") || own.at("nvidia.com/gpu") == 0);
}

TEST(InFlightHolds, ASelectedNodeOnAHeldClaimIsPreBind) {
  ClusterState state;
  state.upsert_nodes({node("a")});
  InFlightHolds holds(state, {1min, 5min, 16});
  const TimePoint t0 = TimePoint{} + 1h;
  Claim c = claim_on("m1", "a", "pod");
  model::VolumePlacement v;
  v.pool = "local";
  v.bytes = 1;
  v.claim = "ml/m1-data";
  c.allocation.volumes.push_back(v);
  holds.hold("m1", kGroup, c, t0);
  holds.claim_selected("ml/other", "a", t0);
  EXPECT_EQ(holds.holds().at(0).phase, InFlightHolds::Phase::kFiltered);
  holds.claim_selected("ml/m1-data", "a", t0);
  EXPECT_EQ(holds.holds().at(0).phase, InFlightHolds::Phase::kPreBind);
  EXPECT_EQ(holds.sweep(t0 + 2min), 0u) << "PreBind gave the hold the Permit timeout";
}

TEST(InFlightHolds, BoundedInCountOldestDroppedFirst) {
  ClusterState state;
  state.upsert_nodes({node("a")});
  InFlightHolds holds(state, {1min, 5min, 2});
  const TimePoint t0 = TimePoint{} + 1h;
  holds.hold("m1", kGroup, claim_on("m1", "a", "pod"), t0);
  holds.hold("m2", kGroup, claim_on("m2", "a", "pod"), t0 + 1s);
  holds.hold("m3", kGroup, claim_on("m3", "a", "pod"), t0 + 2s);
  EXPECT_EQ(holds.size(), 2u);
  EXPECT_FALSE(state.claim_of("m1").has_value()) << "the oldest hold leaves the ledger with it";
  EXPECT_TRUE(state.claim_of("m3").has_value());
}

TEST(InFlightHolds, AGroupFailureSparesHoldsOfALaterCycle) {
  ClusterState state;
  state.upsert_nodes({node("a")});
  InFlightHolds holds(state, {});
  const TimePoint t0 = TimePoint{} + 1h;
  holds.hold("m1", kGroup, claim_on("m1", "a", "pod"), t0);
  holds.hold("m2", kGroup, claim_on("m2", "a", "pod"), t0 + 2s);
  holds.hold("x1", "ml/other", claim_on("x1", "a", "pod"), t0);
  EXPECT_EQ(holds.group_failed(kGroup, t0 + 1s), 1u);
  EXPECT_FALSE(state.claim_of("m1").has_value());
  EXPECT_TRUE(state.claim_of("m2").has_value());
  EXPECT_TRUE(state.claim_of("x1").has_value());
}

// A cycle of kGroup: each member is filtered (cycle), then held on node "a" or refused every node.
struct RefusalRow {
  const char* name;
  std::int64_t min_count;  // 0: no PodGroup minimum known
  std::size_t pending;
  std::size_t bound;
  std::vector<std::string> members;  // "m1" held, "!m2" refused, in filter order
  std::size_t held_after;
};

TEST(InFlightHolds, ARefusedMemberEndsItsCycleOnlyWhenTheGangCanNoLongerReachItsMinimum) {
  const std::vector<RefusalRow> table = {
      {"every member needed, the last refused", 3, 3, 0, {"m1", "m2", "!m3"}, 0},
      {"one to spare: the first refusal keeps the cycle", 2, 3, 0, {"m1", "!m2"}, 1},
      {"one to spare: the second refusal ends it", 2, 3, 0, {"m1", "!m2", "!m3"}, 0},
      {"bound members count toward the minimum", 4, 2, 3, {"m1", "!m2"}, 1},
      {"no minimum known: a refusal ends nothing", 0, 3, 0, {"m1", "m2", "!m3"}, 2},
      {"a new cycle counts its refusals afresh", 2, 3, 0, {"m1", "!m2", "m1", "!m3"}, 1},
  };
  for (const auto& row : table) {
    ClusterState state;
    state.upsert_nodes({node("a")});
    InFlightHolds holds(state, {});
    holds.group_min_count(kGroup, row.min_count);
    TimePoint now = TimePoint{} + 1h;
    for (const auto& member : row.members) {
      now += 1s;
      const bool refused = member.front() == '!';
      const std::string uid = refused ? member.substr(1) : member;
      holds.cycle(uid, kGroup, now);
      if (refused) {
        holds.refused(uid, kGroup, row.pending, row.bound);
      } else {
        holds.hold(uid, kGroup, claim_on(uid, "a", "pod"), now);
      }
    }
    EXPECT_EQ(holds.size(), row.held_after) << row.name;
  }
}

TEST(InFlightHolds, AGroupWithoutAMinimumAnyMoreEndsNothingOnARefusal) {
  ClusterState state;
  state.upsert_nodes({node("a")});
  InFlightHolds holds(state, {});
  const TimePoint t0 = TimePoint{} + 1h;
  holds.group_min_count(kGroup, 2);
  holds.group_min_count(kGroup, 0);  // the PodGroup was deleted
  holds.cycle("m1", kGroup, t0);
  holds.hold("m1", kGroup, claim_on("m1", "a", "pod"), t0);
  holds.cycle("m2", kGroup, t0);
  EXPECT_EQ(holds.refused("m2", kGroup, 2, 0), 0u);
  EXPECT_EQ(holds.size(), 1u);
}

}  // namespace
}  // namespace extender::state
