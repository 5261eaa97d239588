// The ledger of local volumes: every claim counts against its pool and one device whatever its
// source, devices not recorded are given by a deterministic rule, a claim counts once however many
// claims name it, and, as a property over random sequences of binds, watch events and restarts,
// no pool and no device ever holds more than it has.
#include <gtest/gtest.h>

#include <random>

#include "extender/policy/fit.h"
#include "extender/state/cluster_state.h"

namespace extender::state {
namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

model::NodeSupply device_node(const std::string& name, std::vector<std::int64_t> device_gib) {
  model::NodeSupply n;
  n.name = name;
  model::Pool pool{"local", 0, {}};
  for (std::size_t i = 0; i < device_gib.size(); ++i) {
    pool.devices.push_back({"d" + std::to_string(i), device_gib[i] * kGiB});
    pool.capacity_bytes += device_gib[i] * kGiB;
  }
  n.pools.push_back(pool);
  return n;
}

Claim volume_claim(const std::string& node, const std::string& claim, std::int64_t gib,
                   const std::string& device = "") {
  Claim c;
  c.owner = claim;
  c.source = "volume";
  c.node = node;
  c.allocation.volumes.push_back({claim, "local", device, gib * kGiB, claim, ""});
  return c;
}

TEST(VolumeLedger, ClaimsWithoutARecordedDeviceAreGivenOneByTheRule) {
  ClusterState s;
  s.upsert_nodes({device_node("n", {1024, 1024, 100})});
  s.place("pvc/a", volume_claim("n", "ns/a", 900));
  s.place("pvc/b", volume_claim("n", "ns/b", 900));
  const NodeState* n = s.snapshot().find("n");
  const model::NodeUsage u = n->usage_excluding("", SteadyClock::now());
  EXPECT_EQ(u.pool_used("local"), 1800 * kGiB);
  EXPECT_EQ(u.device_used("local", "d0") + u.device_used("local", "d1"), 1800 * kGiB)
      << "every claim is on a device, never on one too small for it";
  const std::string a = n->claims.at("pvc/a").allocation.volumes[0].device;
  const std::string b = n->claims.at("pvc/b").allocation.volumes[0].device;

  // The same claims learned in another order (another replica, a restart), and with other claims
  // coming and going, keep their devices.
  ClusterState other;
  other.place("pvc/c", volume_claim("n", "ns/c", 50));
  other.place("pvc/b", volume_claim("n", "ns/b", 900));
  other.place("pvc/a", volume_claim("n", "ns/a", 900));
  other.drop("pvc/c");
  other.upsert_nodes({device_node("n", {1024, 1024, 100})});
  EXPECT_EQ(other.snapshot().find("n")->claims.at("pvc/a").allocation.volumes[0].device, a);
  EXPECT_EQ(other.snapshot().find("n")->claims.at("pvc/b").allocation.volumes[0].device, b);
}

TEST(VolumeLedger, RecordedDevicesWinAndUnknownOnesAreResolved) {
  ClusterState s;
  s.upsert_nodes({device_node("n", {1024, 1024})});
  s.place("pvc/a", volume_claim("n", "ns/a", 900, "d1"));
  s.place("pvc/b", volume_claim("n", "ns/b", 100, "nvme9"));
  const NodeState* n = s.snapshot().find("n");
  EXPECT_EQ(n->claims.at("pvc/a").allocation.volumes[0].device, "d1");
  const std::string b = n->claims.at("pvc/b").allocation.volumes[0].device;
  EXPECT_TRUE(b == "d0" || b == "d1") << b << ": a device the node does not have is not kept";
}

TEST(VolumeLedger, AReservationNamingAHeldClaimCountsItOnce) {
  ClusterState s;
  s.upsert_nodes({device_node("n", {1024})});
  Claim pod;
  pod.owner = "ns/p";
  pod.node = "n";
  pod.allocation.volumes.push_back({"scratch", "local", "d0", 600 * kGiB, "ns/p-scratch", "uid-p"});
  const auto now = SteadyClock::now();
  s.reserve("uid-p", pod, std::chrono::minutes(5), now);
  EXPECT_EQ(s.snapshot().find("n")->usage_excluding("", now).pool_used("local"), 600 * kGiB);
  s.place("pvc/x", volume_claim("n", "ns/p-scratch", 600, "d0"));
  EXPECT_EQ(s.snapshot().find("n")->usage_excluding("", now).pool_used("local"), 600 * kGiB)
      << "the claim watch placed the volume the bind reserved: once, not twice";
}

// A fake API server's claims and the daemon's view of them, driven by random operations: a bind
// (fit under the ledger, reservation, the claim recorded with its device), the watch delivering a
// claim or a deletion, and a restart that rebuilds the state from the API server's claims alone.
struct LedgerSimulation {
  struct ApiClaim {
    std::string node;
    std::string name;
    std::int64_t gib = 0;
    std::string device;  // the annotation; empty for claims that predate it
  };
  std::map<std::string, ApiClaim> api;   // uid -> claim
  std::vector<std::string> undelivered;  // uids the watch has not delivered yet
  std::unique_ptr<ClusterState> state = std::make_unique<ClusterState>();
  std::vector<model::NodeSupply> nodes = {device_node("a", {1024, 512}), device_node("b", {300, 300, 300})};
  int next = 0;

  void start() { state->upsert_nodes(nodes); }

  void bind(std::mt19937& rng) {
    const auto& node = nodes[rng() % nodes.size()];
    const std::int64_t gib = 10 + static_cast<std::int64_t>(rng() % 400);
    const std::string uid = "u" + std::to_string(next++);
    model::PodDemand pod;
    pod.uid = "pod-" + uid;
    pod.volumes.push_back({"v", "local-storage", "local", gib * kGiB, false, "ns/" + uid, true, ""});
    const auto now = SteadyClock::now();
    const NodeState* n = state->snapshot().find(node.name);
    policy::Fit fit = policy::check_fit(pod, n->supply, n->usage_excluding(pod.uid, now));
    if (fit.verdict != policy::Verdict::kFits) return;
    Claim c;
    c.owner = pod.uid;
    c.node = node.name;
    c.allocation = fit.allocation;
    state->reserve(pod.uid, c, std::chrono::minutes(5), now);
    // The bind records the device on the claim (a bind whose record fails is refused).
    api[uid] = {node.name, "ns/" + uid, gib, fit.allocation.volumes[0].device};
    undelivered.push_back(uid);
  }

  // Claims that predate the device annotation, there before any bind: each one the ledger can
  // still hold (a provisioner placed them somewhere with room).
  void predating(std::mt19937& rng) {
    for (int i = 0, n = static_cast<int>(rng() % 6); i < n; ++i) {
      const auto& node = nodes[rng() % nodes.size()];
      const std::string uid = "old" + std::to_string(i);
      api[uid] = {node.name, "ns/" + uid, 10 + static_cast<std::int64_t>(rng() % 300), ""};
      state->place("pvc/" + uid, claim_of(api[uid]));
      if (!overcommit().empty()) {
        state->drop("pvc/" + uid);
        api.erase(uid);
      }
    }
  }

  Claim claim_of(const ApiClaim& a) const { return volume_claim(a.node, a.name, a.gib, a.device); }

  void deliver(std::mt19937& rng) {
    if (undelivered.empty()) return;
    const std::size_t i = rng() % undelivered.size();
    const std::string uid = undelivered[i];
    undelivered.erase(undelivered.begin() + static_cast<std::ptrdiff_t>(i));
    if (auto it = api.find(uid); it != api.end()) {
      state->place("pvc/" + uid, claim_of(it->second));
      state->drop_reservation("pod-" + uid);
    }
  }

  void remove(std::mt19937& rng) {
    if (api.empty()) return;
    auto it = api.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(rng() % api.size()));
    state->drop("pvc/" + it->first);
    state->drop_reservation("pod-" + it->first);
    api.erase(it);
  }

  void restart() {
    state = std::make_unique<ClusterState>();
    start();
    std::vector<std::pair<std::string, Claim>> placed;
    for (const auto& [uid, a] : api) placed.emplace_back("pvc/" + uid, claim_of(a));
    state->replace_placements("volume", std::move(placed));
    undelivered.clear();
  }

  // Empty when no pool and no device holds more than it has, as the API server has the claims
  // (each volume on its recorded device, or on the rule's for claims that predate the record).
  std::string overcommit() const {
    std::map<std::string, std::int64_t> pool_bytes, device_bytes;
    for (const auto& [uid, a] : api) {
      const model::NodeSupply& n = a.node == "a" ? nodes[0] : nodes[1];
      pool_bytes[a.node] += a.gib * kGiB;
      device_bytes[a.node + "/" + ledger_device(n.pools[0], "pvc/" + uid, a.device, a.gib * kGiB)] += a.gib * kGiB;
    }
    for (const auto& n : nodes) {
      if (pool_bytes[n.name] > n.pools[0].capacity_bytes) return n.name + " pool";
      for (const auto& d : n.pools[0].devices) {
        if (device_bytes[n.name + "/" + d.name] > d.capacity_bytes) return n.name + " device " + d.name;
      }
    }
    return {};
  }
};

TEST(VolumeLedger, NoPoolOrDeviceIsEverOvercommittedOverRandomSequences) {
  int sequences_with_binds = 0;
  for (int seed = 0; seed < 10'000; ++seed) {
    std::mt19937 rng(static_cast<unsigned>(seed));
    LedgerSimulation sim;
    sim.start();
    sim.predating(rng);
    const int steps = 20 + static_cast<int>(rng() % 30);
    for (int step = 0; step < steps; ++step) {
      switch (rng() % 10) {
        case 0:
        case 1:
        case 2:
        case 3: sim.bind(rng); break;
        case 4:
        case 5:
        case 6: sim.deliver(rng); break;
        case 7:
        case 8: sim.remove(rng); break;
        default: sim.restart(); break;
      }
      const std::string over = sim.overcommit();
      ASSERT_EQ(over, "") << "seed " << seed << ", step " << step << ": overcommitted";
    }
    sequences_with_binds += sim.next > 0;
  }
  EXPECT_GT(sequences_with_binds, 9'000);
}

}  // namespace
}  // namespace extender::state
