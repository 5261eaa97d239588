#include "extender/kube/leader_elector.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>

namespace extender::kube {
namespace {

using namespace std::chrono_literals;
using WallClock = LeaderElector::WallClock;

// A Lease in memory, with the API server's rules: create fails when it exists, update when the
// resourceVersion read is no longer current. `down` makes every call fail; `before_write` runs
// between a caller's read and its write (another replica writing meanwhile); `during_get` runs
// once inside the next read, before it answers (a slow read, while which another replica writes);
// `after_write` once after the next update is stored, before it answers (a slow answer).
class MemoryLeaseStore : public LeaseStore {
 public:
  Result<std::optional<LeaseRecord>> get() override {
    ++reads;
    if (auto hook = std::exchange(during_get, nullptr)) hook();
    if (down) return Error{"connection refused"};
    return lease;
  }
  Result<WriteOutcome> create(LeaseRecord& record) override {
    if (auto hook = std::exchange(before_write, nullptr)) hook();
    if (down) return Error{"connection refused"};
    if (lease) return WriteOutcome::kConflict;
    return store(record);
  }
  Result<WriteOutcome> update(LeaseRecord& record) override {
    if (auto hook = std::exchange(before_write, nullptr)) hook();
    if (down) return Error{"connection refused"};
    if (!lease || lease->resource_version != record.resource_version) return WriteOutcome::kConflict;
    const WriteOutcome stored = store(record);
    if (auto hook = std::exchange(after_write, nullptr)) hook();
    return stored;
  }
  std::string where() const override { return "ns/lease"; }

  WriteOutcome store(LeaseRecord& record) {
    record.resource_version = std::to_string(++version);
    lease = record;
    ++writes;
    return WriteOutcome::kWritten;
  }

  std::optional<LeaseRecord> lease;
  bool down = false;
  std::function<void()> before_write;
  std::function<void()> during_get;
  std::function<void()> after_write;
  int version = 100;
  int reads = 0;
  int writes = 0;
};

const ElectionTiming kTiming{15s, 10s, 2s};
const TimePoint T0 = TimePoint(1h);
const WallClock::time_point W0 = WallClock::time_point(std::chrono::hours(24 * 365 * 56));

// The fake monotonic clock the electors read when a read returns; an attempt moves it to its start.
TimePoint fake_now = T0;
TimePoint fake_clock() { return fake_now; }

// Wall time moves with the fake monotonic clock.
WallClock::time_point wall(TimePoint t) { return W0 + (t - T0); }

bool attempt(LeaderElector& e, TimePoint t) {
  fake_now = t;
  return e.try_acquire_or_renew(t, wall(t));
}

TEST(LeaderElector, CreatesAMissingLeaseAndLeads) {
  MemoryLeaseStore store;
  LeaderElector a(store, "a", kTiming, fake_clock);
  EXPECT_TRUE(a.not_leading(T0)) << "nobody leads before the first attempt";
  EXPECT_TRUE(attempt(a, T0));
  ASSERT_TRUE(store.lease);
  EXPECT_EQ(store.lease->holder, "a");
  EXPECT_EQ(store.lease->lease_duration_seconds, 15);
  EXPECT_EQ(store.lease->transitions, 0);
  EXPECT_EQ(store.lease->acquire_time, store.lease->renew_time);
  EXPECT_FALSE(a.not_leading(T0 + 1s));
  EXPECT_TRUE(a.view(T0).leading);
  EXPECT_EQ(a.view(T0).transitions, 1u);
}

TEST(LeaderElector, RenewalMovesRenewTimeAndKeepsAcquireTime) {
  MemoryLeaseStore store;
  LeaderElector a(store, "a", kTiming, fake_clock);
  ASSERT_TRUE(attempt(a, T0));
  const LeaseRecord first = *store.lease;
  ASSERT_TRUE(attempt(a, T0 + 2s));
  EXPECT_EQ(store.lease->acquire_time, first.acquire_time);
  EXPECT_NE(store.lease->renew_time, first.renew_time);
  EXPECT_EQ(store.lease->transitions, first.transitions);
  EXPECT_FALSE(a.not_leading(T0 + 11s)) << "the term runs renew_deadline from the last renewal's start";
  EXPECT_TRUE(a.not_leading(T0 + 12s));
  EXPECT_EQ(a.view(T0 + 2s).transitions, 1u) << "a renewal is not a transition";
}

TEST(LeaderElector, StopsLeadingAtTheRenewDeadlineWhenItCannotRenew) {
  MemoryLeaseStore store;
  LeaderElector a(store, "a", kTiming, fake_clock);
  ASSERT_TRUE(attempt(a, T0));
  store.down = true;
  for (auto t = T0 + 2s; t < T0 + 10s; t += 2s) {
    EXPECT_TRUE(attempt(a, t)) << "a failed renewal keeps the term until its deadline";
    EXPECT_FALSE(a.note_deadline(t, wall(t)));
  }
  EXPECT_FALSE(a.not_leading(T0 + 10s - 1ms));
  auto why = a.not_leading(T0 + 10s);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("not renewed within the renew deadline"), std::string::npos) << *why;
  EXPECT_NE(why->find("connection refused"), std::string::npos) << *why;
  EXPECT_TRUE(a.note_deadline(T0 + 10s, wall(T0 + 10s)));
  EXPECT_FALSE(a.note_deadline(T0 + 11s, wall(T0 + 11s))) << "a step down is reported once";
  EXPECT_FALSE(a.view(T0 + 10s).leading);
  EXPECT_EQ(a.view(T0 + 10s).transitions, 2u);
}

TEST(LeaderElector, NeverTakesALiveLease) {
  MemoryLeaseStore store;
  LeaderElector a(store, "a", kTiming, fake_clock);
  LeaderElector b(store, "b", kTiming, fake_clock);
  ASSERT_TRUE(attempt(a, T0));
  for (auto t = T0 + 1s; t < T0 + 120s; t += 1s) {
    if ((t - T0) % 2s == 0s) {
      ASSERT_TRUE(attempt(a, t));
    }
    EXPECT_FALSE(attempt(b, t)) << "at +" << (t - T0) / 1s << "s";
  }
  EXPECT_EQ(store.lease->holder, "a");
  auto why = b.not_leading(T0 + 120s);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("standby; a leads"), std::string::npos) << *why;
  EXPECT_EQ(b.view(T0 + 120s).holder, "a");
}

TEST(LeaderElector, TakesOverALeaseNotRenewedForItsDurationAfterTheOldLeaderStopped) {
  MemoryLeaseStore store;
  LeaderElector a(store, "a", kTiming, fake_clock);
  LeaderElector b(store, "b", kTiming, fake_clock);
  ASSERT_TRUE(attempt(a, T0));
  const LeaseRecord held = *store.lease;
  EXPECT_FALSE(attempt(b, T0 + 1s));  // b sees a's record first here: its 15 s count from now
  store.down = true;                  // a is cut off from the API server; b's view is frozen
  EXPECT_FALSE(attempt(b, T0 + 8s));
  store.down = false;
  EXPECT_TRUE(a.not_leading(T0 + 10s)) << "the old leader has stopped before anyone may take over";
  EXPECT_FALSE(attempt(b, T0 + 16s - 1ms));
  EXPECT_TRUE(attempt(b, T0 + 16s));
  EXPECT_EQ(store.lease->holder, "b");
  EXPECT_EQ(store.lease->transitions, held.transitions + 1);
  EXPECT_NE(store.lease->acquire_time, held.acquire_time);
  EXPECT_FALSE(attempt(a, T0 + 17s)) << "the old leader finds b's live lease and stays a standby";
  EXPECT_EQ(store.lease->holder, "b");
}

TEST(LeaderElector, AStandbyCountsTheLeaseDurationFromWhenItsSlowReadReturned) {
  MemoryLeaseStore store;
  LeaderElector a(store, "a", kTiming, fake_clock);
  LeaderElector b(store, "b", kTiming, fake_clock);
  ASSERT_TRUE(attempt(a, T0));
  // b's read starts at +1 s and takes 4.5 s; a renews at +5 s, so the read shows that renewal.
  store.during_get = [&] {
    ASSERT_TRUE(attempt(a, T0 + 5s));
    fake_now = T0 + 5500ms;
  };
  EXPECT_FALSE(attempt(b, T0 + 1s));
  EXPECT_FALSE(a.not_leading(T0 + 15s - 1ms)) << "a's last term runs until +15 s";
  // a stops renewing. b saw the renewal at +5.5 s and may take over 15 s after that, not before.
  for (auto t = T0 + 6s; t < T0 + 20500ms; t += 500ms) {
    EXPECT_FALSE(attempt(b, t)) << "at +" << std::chrono::duration<double>(t - T0).count() << " s";
  }
  EXPECT_EQ(store.lease->holder, "a");
  EXPECT_TRUE(attempt(b, T0 + 20500ms));
  EXPECT_EQ(store.lease->holder, "b");
}

TEST(LeaderElector, OfTwoWritersOnTheSameReadOneGetsAConflict) {
  MemoryLeaseStore store;
  LeaderElector a(store, "a", kTiming, fake_clock);
  LeaderElector b(store, "b", kTiming, fake_clock);
  LeaderElector c(store, "c", kTiming, fake_clock);
  ASSERT_TRUE(attempt(a, T0));
  EXPECT_FALSE(attempt(b, T0 + 1s));
  EXPECT_FALSE(attempt(c, T0 + 1s));
  // Both b and c find the lease expired at +16 s; c writes between b's read and b's write.
  store.before_write = [&] { EXPECT_TRUE(attempt(c, T0 + 16s)); };
  EXPECT_FALSE(attempt(b, T0 + 16s));
  EXPECT_EQ(store.lease->holder, "c");
  EXPECT_NE(b.view(T0 + 16s).last_error.find("409"), std::string::npos) << b.view(T0 + 16s).last_error;
  EXPECT_TRUE(b.not_leading(T0 + 16s));
  EXPECT_FALSE(attempt(b, T0 + 18s)) << "c's lease is live now";
}

TEST(LeaderElector, ACreateRaceIsAConflictToo) {
  MemoryLeaseStore store;
  LeaderElector a(store, "a", kTiming, fake_clock);
  LeaderElector b(store, "b", kTiming, fake_clock);
  store.before_write = [&] { EXPECT_TRUE(attempt(a, T0)); };
  EXPECT_FALSE(attempt(b, T0));
  EXPECT_EQ(store.lease->holder, "a");
}

TEST(LeaderElector, ReleaseHandsOverAtTheStandbysNextAttempt) {
  MemoryLeaseStore store;
  LeaderElector a(store, "a", kTiming, fake_clock);
  LeaderElector b(store, "b", kTiming, fake_clock);
  ASSERT_TRUE(attempt(a, T0));
  EXPECT_FALSE(attempt(b, T0 + 1s));
  a.release(T0 + 1500ms, wall(T0 + 1500ms));
  EXPECT_TRUE(a.not_leading(T0 + 1500ms)) << "a releasing replica stops deciding first";
  EXPECT_EQ(store.lease->holder, "");
  EXPECT_EQ(store.lease->lease_duration_seconds, 1);
  EXPECT_TRUE(attempt(b, T0 + 2s)) << "a released lease is taken without waiting for it to expire";
  EXPECT_EQ(store.lease->holder, "b");
  EXPECT_EQ(store.lease->transitions, 1);
}

TEST(LeaderElector, AReleaseSaysWhetherItFailed) {
  MemoryLeaseStore store;
  LeaderElector a(store, "a", kTiming, fake_clock);
  ASSERT_TRUE(attempt(a, T0));
  store.down = true;
  EXPECT_TRUE(attempt(a, T0 + 2s)) << "a failed renewal keeps the term";
  ASSERT_NE(a.view(T0 + 2s).last_error, "");
  store.down = false;
  a.release(T0 + 3s, wall(T0 + 3s));
  EXPECT_EQ(a.view(T0 + 3s).last_error, "") << "released: the earlier renewal's error is over";

  LeaderElector b(store, "b", kTiming, fake_clock);
  ASSERT_TRUE(attempt(b, T0 + 4s));
  store.down = true;
  b.release(T0 + 5s, wall(T0 + 5s));
  EXPECT_NE(b.view(T0 + 5s).last_error.find("releasing Lease ns/lease: connection refused"), std::string::npos)
      << b.view(T0 + 5s).last_error;
}

TEST(LeaderElector, ReleaseByAStandbyWritesNothing) {
  MemoryLeaseStore store;
  LeaderElector a(store, "a", kTiming, fake_clock);
  LeaderElector b(store, "b", kTiming, fake_clock);
  ASSERT_TRUE(attempt(a, T0));
  EXPECT_FALSE(attempt(b, T0 + 1s));
  const int writes = store.writes;
  b.release(T0 + 2s, wall(T0 + 2s));
  EXPECT_EQ(store.writes, writes);
  EXPECT_EQ(store.lease->holder, "a");
}

TEST(LeaderElector, ARestartedProcessOfTheSameIdentityRenewsAtOnce) {
  MemoryLeaseStore store;
  {
    LeaderElector before(store, "pod-0_uid", kTiming, fake_clock);
    ASSERT_TRUE(attempt(before, T0));
    ASSERT_TRUE(attempt(before, T0 + 2s));
  }
  const LeaseRecord held = *store.lease;
  LeaderElector after(store, "pod-0_uid", kTiming, fake_clock);
  EXPECT_TRUE(attempt(after, T0 + 3s));
  EXPECT_EQ(store.lease->acquire_time, held.acquire_time);
  EXPECT_EQ(store.lease->transitions, held.transitions);
}

TEST(LeaderElector, ALeaseDurationOfAnySizeIsReadSafely) {
  for (std::int64_t seconds : {std::numeric_limits<std::int64_t>::max(), std::int64_t{-5}, std::int64_t{0}}) {
    MemoryLeaseStore store;
    store.lease = LeaseRecord{"x", seconds, "t", "t", 0, "1"};
    LeaderElector a(store, "a", kTiming, fake_clock);
    EXPECT_EQ(attempt(a, T0), seconds <= 0) << seconds << " s: only a lease that is already over is taken";
    EXPECT_EQ(attempt(a, T0 + std::chrono::hours(24 * 400)), true) << seconds << " s: held to a year at most";
  }
}

TEST(LeaderElector, AFailedAttemptAsStandbyIsReportedAndLeadsNowhere) {
  MemoryLeaseStore store;
  store.down = true;
  LeaderElector a(store, "a", kTiming, fake_clock);
  EXPECT_FALSE(attempt(a, T0));
  EXPECT_NE(a.view(T0).last_error.find("connection refused"), std::string::npos);
  EXPECT_EQ(a.view(T0).transitions, 0u);
  store.down = false;
  EXPECT_TRUE(attempt(a, T0 + 2s));
  EXPECT_TRUE(a.view(T0 + 2s).last_error.empty());
}

// One replica's view of the shared lease: while `cut`, its calls fail (a partition) or, with
// `hang`, run `hang` first (a call that hangs while the world moves on) and then fail.
class PartitionedStore : public LeaseStore {
 public:
  explicit PartitionedStore(MemoryLeaseStore& shared) : shared_(shared) {}
  Result<std::optional<LeaseRecord>> get() override {
    if (auto e = cut_off()) return *e;
    return shared_.get();
  }
  Result<WriteOutcome> create(LeaseRecord& record) override {
    if (auto e = cut_off()) return *e;
    return shared_.create(record);
  }
  Result<WriteOutcome> update(LeaseRecord& record) override {
    if (auto e = cut_off()) return *e;
    return shared_.update(record);
  }
  std::string where() const override { return shared_.where(); }

  bool cut = false;
  std::function<void()> hang;

 private:
  std::optional<Error> cut_off() {
    if (!cut) return std::nullopt;
    if (auto hook = std::exchange(hang, nullptr)) hook();
    return Error{"i/o timeout"};
  }
  MemoryLeaseStore& shared_;
};

// What a fencing scenario shows: when the standby b first leads, and what the old leader a says
// then (inside a hung call if the scenario hangs one).
struct Handover {
  std::optional<TimePoint> takeover;  // b's first successful attempt
  bool a_decides = false;             // a still leads at the takeover
  TimePoint a_fence{};                // by when a's writes are answered (its last term's)
};

// b attempts every retry period from `from` until it leads (at most 10 s); a's state is taken then.
void standby_polls(LeaderElector& b, LeaderElector& a, TimePoint from, Handover& out) {
  for (auto t = from; t < from + 10s; t += 500ms) {
    if (attempt(b, t)) {
      out.takeover = t;
      out.a_decides = !a.not_leading(t);
    }
    if (a.write_fence() != TimePoint{}) out.a_fence = a.write_fence();
    if (out.takeover) return;
  }
}

// Whatever the API server does, the old leader stops deciding, and its writes are answered, before
// the new leader decides: each row fails without the guard it names.
TEST(LeaderElector, FencingHoldsWhateverTheApiServerDoes) {
  const ElectionTiming timing;  // the defaults: 2s / 1.5s / 500ms
  struct Case {
    const char* what;
    std::function<void(MemoryLeaseStore&, PartitionedStore&, LeaderElector& a, LeaderElector& b, Handover&)> run;
    TimePoint latest_takeover;  // failover still comes, by then
  };
  const Case cases[] = {
      {"slow Lease GET by the standby (guard: the lease duration counts from when the read returned)",
       [](MemoryLeaseStore& shared, PartitionedStore&, LeaderElector& a, LeaderElector& b, Handover& out) {
         ASSERT_TRUE(attempt(a, T0));
         // b's read starts at +0.1 s and returns at +2 s, showing the renewal a made at +1.5 s.
         shared.during_get = [&] {
           ASSERT_TRUE(attempt(a, T0 + 1500ms));
           fake_now = T0 + 2s;
         };
         EXPECT_FALSE(attempt(b, T0 + 100ms));
         standby_polls(b, a, T0 + 2500ms, out);  // a is gone after +1.5 s
       },
       T0 + 4500ms},
      {"slow answer to a renewal (guard: the term counts from the write's start, not its answer)",
       [](MemoryLeaseStore& shared, PartitionedStore&, LeaderElector& a, LeaderElector& b, Handover& out) {
         ASSERT_TRUE(attempt(a, T0));
         // a's renewal at +0.5 s is stored at once but answered at +1.7 s; b reads it at +0.6 s.
         shared.after_write = [&] {
           EXPECT_FALSE(attempt(b, T0 + 600ms));
           fake_now = T0 + 1700ms;
         };
         ASSERT_TRUE(attempt(a, T0 + 500ms));
         standby_polls(b, a, T0 + 1s, out);  // a is gone after its renewal
       },
       T0 + 3500ms},
      {"partition, the old leader's calls fail (guard: it stops at the renew deadline)",
       [](MemoryLeaseStore&, PartitionedStore& a_view, LeaderElector& a, LeaderElector& b, Handover& out) {
         ASSERT_TRUE(attempt(a, T0));
         ASSERT_TRUE(attempt(a, T0 + 500ms));
         EXPECT_FALSE(attempt(b, T0 + 700ms));
         a_view.cut = true;
         // a stays alive and keeps trying every retry period; b polls; they interleave.
         for (auto t = T0 + 1s; t < T0 + 10s && !out.takeover; t += 500ms) {
           attempt(a, t);
           (void)a.note_deadline(t, wall(t));
           if (attempt(b, t + 1ms)) {
             out.takeover = t + 1ms;
             out.a_decides = !a.not_leading(t + 1ms);
           }
           if (a.write_fence() != TimePoint{}) out.a_fence = a.write_fence();
         }
       },
       T0 + 3500ms},
      {"partition, the old leader's renewal hangs (guard: leadership answers from the clock meanwhile)",
       [](MemoryLeaseStore&, PartitionedStore& a_view, LeaderElector& a, LeaderElector& b, Handover& out) {
         ASSERT_TRUE(attempt(a, T0));
         EXPECT_FALSE(attempt(b, T0 + 200ms));
         out.a_fence = a.write_fence();
         a_view.cut = true;
         a_view.hang = [&] { standby_polls(b, a, T0 + 700ms, out); };
         attempt(a, T0 + 500ms);  // hangs until b has taken over, then fails
       },
       T0 + 2700ms},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    MemoryLeaseStore shared;
    PartitionedStore a_view(shared);
    LeaderElector a(a_view, "a", timing, fake_clock);
    LeaderElector b(shared, "b", timing, fake_clock);
    Handover out;
    c.run(shared, a_view, a, b, out);
    ASSERT_TRUE(out.takeover) << "the standby never took over";
    EXPECT_FALSE(out.a_decides) << "both decide at +" << std::chrono::duration<double>(*out.takeover - T0).count()
                                << " s";
    EXPECT_LE(out.a_fence, *out.takeover)
        << "a's writes may still land at +" << std::chrono::duration<double>(out.a_fence - T0).count() << " s";
    EXPECT_LE(*out.takeover, c.latest_takeover) << "failover took too long";
  }
}

TEST(LeaderElector, ALeaderRenewsWithOneWriteAndReadsOnlyOnAConflict) {
  MemoryLeaseStore store;
  LeaderElector a(store, "a", ElectionTiming{}, fake_clock);
  ASSERT_TRUE(attempt(a, T0));
  const int reads = store.reads;
  ASSERT_TRUE(attempt(a, T0 + 500ms));
  ASSERT_TRUE(attempt(a, T0 + 1s));
  EXPECT_EQ(store.reads, reads) << "a renewal is one update";
  store.lease->resource_version = "changed-by-someone-else";
  ASSERT_TRUE(attempt(a, T0 + 1500ms)) << "its own lease, written elsewhere: read, then renewed";
  EXPECT_EQ(store.reads, reads + 1);
  EXPECT_EQ(store.lease->holder, "a");
}

TEST(LeaderElector, AStandbyKnowsWhenTheLeaseItSawExpires) {
  MemoryLeaseStore store;
  LeaderElector a(store, "a", ElectionTiming{}, fake_clock);
  LeaderElector b(store, "b", ElectionTiming{}, fake_clock);
  EXPECT_FALSE(b.others_lease_ends());
  ASSERT_TRUE(attempt(a, T0));
  EXPECT_FALSE(a.others_lease_ends()) << "its own lease";
  EXPECT_FALSE(attempt(b, T0 + 200ms));
  ASSERT_TRUE(b.others_lease_ends());
  EXPECT_EQ(*b.others_lease_ends(), T0 + 2200ms);
  EXPECT_FALSE(attempt(b, T0 + 2200ms - 1ms));
  EXPECT_TRUE(attempt(b, T0 + 2200ms));
}

}  // namespace
}  // namespace extender::kube
