// SyncHop and SyncHopScope on a bare engine: a hop runs on its destination's thread and
// returns after it ran; two workers hopping to a third at once both finish; under a
// scope the awaitables of hops.h complete without suspending, and a lock request of an
// owner that holds the shard whole is granted as a nested hold (and refused, logged,
// for anyone else).
#include "server/engine/sync_hop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "server/base/config.h"
#include "server/engine/engine.h"
#include "server/engine/hops.h"
#include "server/engine/lock_table.h"
#include "server/engine/worker.h"
#include "server/net/event_loop.h"
#include "tests/unit/server/run_on_worker.h"

namespace strata {
namespace {

TEST(SyncHopTest, RunsOnTheDestinationThreadAndReturnsAfterIt) {
  Config config;
  Engine engine(&config, 3);
  std::string error;
  ASSERT_TRUE(engine.Start(IoBackend::kEpoll, {}, {}, &error)) << error;
  std::vector<int> ran_on(3, -1);
  RunOnWorker(engine, 0, [&](Worker& w) {
    for (uint32_t d = 0; d < 3; d++) {
      bool ok = SyncHop(d, [&, d](Worker& x) {
        EXPECT_EQ(Worker::Current(), &x);
        ran_on[d] = static_cast<int>(x.index());
      });
      EXPECT_TRUE(ok);
      EXPECT_EQ(ran_on[d], static_cast<int>(d));  // done before SyncHop returned
    }
    EXPECT_EQ(Worker::Current(), &w);
  });
  engine.Stop();
}

TEST(SyncHopTest, TwoWorkersHoppingToAThirdAtOnceBothFinish) {
  Config config;
  Engine engine(&config, 3);
  std::string error;
  ASSERT_TRUE(engine.Start(IoBackend::kEpoll, {}, {}, &error)) << error;
  std::atomic<int> hops{0};
  // Many more hops than a ring holds: the sender waits for room, never drops one.
  constexpr int kHops = 3000;
  std::thread a([&] {
    RunOnWorker(engine, 0, [&](Worker&) {
      for (int i = 0; i < kHops; i++) SyncHop(1, [&](Worker&) { hops++; });
    });
  });
  std::thread b([&] {
    RunOnWorker(engine, 2, [&](Worker&) {
      for (int i = 0; i < kHops; i++) SyncHop(1, [&](Worker&) { hops++; });
    });
  });
  a.join();
  b.join();
  EXPECT_EQ(hops.load(), 2 * kHops);
  engine.Stop();
}

Fiber LockRunRelease(uint64_t owner, std::vector<int>* log, bool* finished) {
  LockTable::Request r;
  r.keys.push_back(LockTable::LockKey(0, "k"));
  r.owner = owner;
  co_await LockOn(1, &r);
  std::vector<uint32_t> both = {1, 2};
  std::vector<uint32_t> one = {1};
  co_await RunOn(both, [log](Worker& w) { (*log)[w.index()]++; });
  co_await RunOn(one, [&r](Worker& w) { w.locks().Release(r.keys, true); });
  *finished = true;
}

TEST(SyncHopTest, UnderAScopeHopsCompleteAtOnceAndLocksNestUnderTheOwnersWholeHold) {
  Config config;
  Engine engine(&config, 3);
  std::string error;
  ASSERT_TRUE(engine.Start(IoBackend::kEpoll, {}, {}, &error)) << error;
  constexpr uint64_t kOwner = 77;
  RunOnWorker(engine, 1, [&](Worker& w) {
    LockTable::Request whole;
    whole.whole = true;
    whole.owner = kOwner;
    ASSERT_TRUE(w.locks().CanRun(whole));
    w.locks().Acquire(whole);
  });
  std::vector<int> log(3, 0);
  bool finished = false;
  RunOnWorker(engine, 0, [&](Worker&) {
    SyncHopScope scope;
    EXPECT_TRUE(SyncHopScope::Active());
    LockRunRelease(kOwner, &log, &finished);
    EXPECT_TRUE(finished);  // never suspended
  });
  EXPECT_EQ(log, (std::vector<int>{0, 1, 1}));
  RunOnWorker(engine, 1, [&](Worker& w) {
    EXPECT_TRUE(w.locks().whole_held());  // the nested hold went, the owner's stays
    w.locks().ReleaseWhole();
    EXPECT_TRUE(w.locks().empty());
  });
  RunOnWorker(engine, 0, [&](Worker&) { EXPECT_FALSE(SyncHopScope::Active()); });
  engine.Stop();
}

TEST(SyncHopTest, ANestedRequestOfAnotherOwnerIsNotGranted) {
  LockTable t;
  LockTable::Request whole;
  whole.whole = true;
  whole.owner = 5;
  t.Acquire(whole);
  LockTable::Request other;
  other.keys = {LockTable::LockKey(0, "k")};
  other.owner = 6;
  t.AcquireNested(other);  // logged, not granted
  t.ReleaseWhole();
  EXPECT_TRUE(t.empty());
  LockTable::Request mine = other;
  mine.owner = 5;
  t.Acquire(whole);
  t.AcquireNested(mine);
  t.Release(mine.keys, true);
  EXPECT_TRUE(t.whole_held());
  t.ReleaseWhole();
  EXPECT_TRUE(t.empty());
}

}  // namespace
}  // namespace strata
