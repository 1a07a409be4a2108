// TryLockAll: a fiber's intent locks taken on every shard at once in one round trip, or
// none held when any shard cannot grant at once; ReleaseAll lets them go.
#include "server/engine/try_lock_all.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "server/base/config.h"
#include "server/engine/engine.h"
#include "server/engine/shard_groups.h"
#include "server/engine/task.h"
#include "server/engine/worker.h"
#include "server/net/event_loop.h"
#include "tests/unit/server/run_on_worker.h"

namespace strata {
namespace {

constexpr uint32_t kShards = 3;

bool WaitFor(const std::function<bool()>& cond) {
  for (int i = 0; i < 1000 && !cond(); i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return cond();
}

// What one fiber saw: TryLockAll's answer (-1 until it resumed) and, per group, the
// worker its step ran on (-1: it did not run).
struct Outcome {
  std::atomic<int> granted{-1};
  std::vector<std::atomic<int>> stepped_on;
  explicit Outcome(size_t groups) : stepped_on(groups) {
    for (auto& s : stepped_on) s = -1;
  }
};

Fiber TryAll(ShardGroups* g, Outcome* out) {
  bool ok = co_await TryLockAll(
      *g, [out](Worker& w, size_t i) { out->stepped_on[i] = static_cast<int>(w.index()); });
  out->granted = ok ? 1 : 0;
}

class TryLockAllTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(engine.Start(IoBackend::kEpoll, {}, {}, &error)) << error;
    // Enough keys to land on every shard.
    for (int i = 0; i < 32; i++) names.push_back("key:" + std::to_string(i));
    keys.assign(names.begin(), names.end());
  }
  void TearDown() override { engine.Stop(); }

  ShardGroups Groups(bool exclusive, uint64_t owner = 0) {
    ShardGroups g = GroupByShard(keys, 0, kShards, exclusive, owner);
    EXPECT_EQ(g.shards.size(), kShards);
    return g;
  }
  // Whether a request of these keys could run on its shard now (nothing holds them).
  bool Free(const ShardGroups& g, size_t i) {
    bool free = false;
    RunOnWorker(engine, g.shards[i], [&](Worker& w) { free = w.locks().CanRun(g.locks[i]); });
    return free;
  }
  bool AllFree(const ShardGroups& g) {
    for (size_t i = 0; i < g.shards.size(); i++) {
      if (!Free(g, i)) return false;
    }
    return true;
  }

  Config config;
  Engine engine{&config, kShards};
  std::vector<std::string> names;
  std::vector<std::string_view> keys;
};

TEST_F(TryLockAllTest, FreeKeysAreTakenOnEveryShardEachStepOnItsOwn) {
  ShardGroups g = Groups(true);
  Outcome out(g.shards.size());
  RunOnWorker(engine, 0, [&](Worker&) { TryAll(&g, &out); });
  ASSERT_TRUE(WaitFor([&] { return out.granted >= 0; }));
  EXPECT_EQ(out.granted, 1);
  for (size_t i = 0; i < g.shards.size(); i++) {
    EXPECT_EQ(out.stepped_on[i], static_cast<int>(g.shards[i])) << "group " << i;
    EXPECT_FALSE(Free(g, i)) << "group " << i << " is not held";
  }
  RunOnWorker(engine, 0, [&](Worker&) { ReleaseAll(g); });
  EXPECT_TRUE(WaitFor([&] { return AllFree(g); }));
}

TEST_F(TryLockAllTest, ABusyShardRefusesAndTheOthersLetGo) {
  ShardGroups g = Groups(false);
  // Another command holds shard 2's keys exclusively: the shared request cannot run there.
  ShardGroups writer = Groups(true);
  size_t busy = g.IndexOf(2);
  RunOnWorker(engine, 2, [&](Worker& w) { w.locks().Acquire(writer.locks[busy]); });
  Outcome out(g.shards.size());
  RunOnWorker(engine, 0, [&](Worker&) { TryAll(&g, &out); });
  ASSERT_TRUE(WaitFor([&] { return out.granted >= 0; }));
  EXPECT_EQ(out.granted, 0);
  EXPECT_EQ(out.stepped_on[busy], -1);
  // What the other shards granted is released: a writer may take their keys again.
  for (size_t i = 0; i < g.shards.size(); i++) {
    if (i == busy) continue;
    EXPECT_TRUE(WaitFor([&] { return Free(writer, i); })) << "group " << i << " still held";
  }
  EXPECT_FALSE(Free(g, busy));
  RunOnWorker(engine, 2, [&](Worker& w) { w.locks().Release(writer.locks[busy].keys, true); });
  EXPECT_TRUE(WaitFor([&] { return AllFree(writer); }));
}

TEST_F(TryLockAllTest, ATransactionsRequestsAreLeftToTheOrderedWay) {
  ShardGroups g = Groups(true, /*owner=*/7);
  Outcome out(g.shards.size());
  RunOnWorker(engine, 0, [&](Worker&) { TryAll(&g, &out); });
  ASSERT_TRUE(WaitFor([&] { return out.granted >= 0; }));
  EXPECT_EQ(out.granted, 0);
  for (size_t i = 0; i < g.shards.size(); i++) EXPECT_EQ(out.stepped_on[i], -1);
  ShardGroups other = Groups(true);
  EXPECT_TRUE(AllFree(other));
}

}  // namespace
}  // namespace strata
