// WakeupBatchPolicy: what a sleeping io_uring loop asks for, driven with synthetic times.
#include "server/net/wakeup_batch_policy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace strata {
namespace {

constexpr int64_t kWindow = WakeupBatchPolicy::kWindowUs;

// `clients` connections each send `per_client` inputs spread evenly over one window that
// starts at `start`; returns the window's end.
int64_t Window(WakeupBatchPolicy& p, std::vector<uint64_t>& conns, size_t clients,
               unsigned per_client, int64_t start) {
  for (unsigned r = 0; r < per_client; r++) {
    for (size_t i = 0; i < clients; i++) p.NoteInput(&conns[i]);
  }
  return start + kWindow;
}

// Fills waits until the level reaches its cap; returns what the last wait asked for.
unsigned Settle(WakeupBatchPolicy& p, int64_t now) {
  unsigned want = 1;
  for (int i = 0; i < 64; i++) {
    want = p.Wanted(now);
    p.AfterWait(want, want);
  }
  return want;
}

TEST(WakeupBatchPolicyTest, OffAsksForOne) {
  WakeupBatchPolicy p;
  EXPECT_FALSE(p.on());
  std::vector<uint64_t> conns(50, 0);
  int64_t t = Window(p, conns, 50, 100, 10 * kWindow);
  EXPECT_EQ(Settle(p, t), 1u);
}

TEST(WakeupBatchPolicyTest, ABusyLoadGetsTheWholeBatch) {
  WakeupBatchPolicy p;
  p.Configure(8, 100);
  std::vector<uint64_t> conns(50, 0);
  p.Wanted(10 * kWindow);  // opens the first window
  // 50 clients, 4 requests each per 2 ms: 100k/s, 5 within each 50 us.
  int64_t t = Window(p, conns, 50, 4, 10 * kWindow);
  EXPECT_EQ(Settle(p, t), 5u);
  // 8 each (200k/s): the batch's cap.
  t = Window(p, conns, 50, 8, t);
  EXPECT_EQ(Settle(p, t), 8u);
}

// 50 clients at 500 requests a second each (25k/s in all): one every 40 us, 1.25 within
// half the bound, so no wait is held for a second.
TEST(WakeupBatchPolicyTest, ALoadTooSlowToFillABatchWithinTheBoundIsNeverHeld) {
  WakeupBatchPolicy p;
  p.Configure(8, 100);
  std::vector<uint64_t> conns(50, 0);
  int64_t t = 10 * kWindow;
  p.Wanted(t);
  for (int w = 0; w < 20; w++) {
    Window(p, conns, 50, 1, t);
    t += kWindow;
    EXPECT_EQ(Settle(p, t), 1u) << "window " << w;
  }
  // With a bound four times as long, the same rate fills batches of 5.
  p.Configure(8, 400);
  Window(p, conns, 50, 1, t);
  t += kWindow;
  EXPECT_EQ(Settle(p, t), 5u);
}

TEST(WakeupBatchPolicyTest, OneClientAtATimeIsNeverHeld) {
  WakeupBatchPolicy p;
  p.Configure(64, 100000);  // a rate no bound would refuse
  std::vector<uint64_t> conns(1, 0);
  int64_t t = 10 * kWindow;
  p.Wanted(t);
  t = Window(p, conns, 1, 1000, t);
  EXPECT_EQ(Settle(p, t), 1u);
  // Two clients: still one each, at most (half the clients sending).
  conns.push_back(0);
  t = Window(p, conns, 2, 1000, t);
  EXPECT_EQ(Settle(p, t), 1u);
  conns.resize(6, 0);
  t = Window(p, conns, 6, 1000, t);
  EXPECT_EQ(Settle(p, t), 3u);
}

TEST(WakeupBatchPolicyTest, WakesFromOtherThreadsTurnItOffForTwoWindows) {
  WakeupBatchPolicy p;
  p.Configure(8, 100);
  std::vector<uint64_t> conns(50, 0);
  int64_t t = 10 * kWindow;
  p.Wanted(t);
  t = Window(p, conns, 50, 8, t);
  EXPECT_EQ(Settle(p, t), 8u);
  p.NoteWake();
  EXPECT_EQ(p.Wanted(t + 1), 1u);
  t = Window(p, conns, 50, 8, t);
  EXPECT_EQ(p.Wanted(t), 1u);  // the window before had a wake
  t = Window(p, conns, 50, 8, t);
  EXPECT_EQ(Settle(p, t), 8u);
}

TEST(WakeupBatchPolicyTest, AWaitThatRunsOutHalvesTheLevel) {
  WakeupBatchPolicy p;
  p.Configure(8, 100);
  std::vector<uint64_t> conns(50, 0);
  int64_t t = 10 * kWindow;
  p.Wanted(t);
  t = Window(p, conns, 50, 8, t);
  EXPECT_EQ(Settle(p, t), 8u);
  p.AfterWait(3, 8);
  EXPECT_EQ(p.Wanted(t), 4u);
  p.AfterWait(1, 4);
  EXPECT_EQ(p.Wanted(t), 2u);
  p.AfterWait(2, 2);
  EXPECT_EQ(p.Wanted(t), 3u);
}

TEST(WakeupBatchPolicyTest, ASilenceForgetsTheLoad) {
  WakeupBatchPolicy p;
  p.Configure(8, 100);
  std::vector<uint64_t> conns(50, 0);
  int64_t t = 10 * kWindow;
  p.Wanted(t);
  t = Window(p, conns, 50, 8, t);
  EXPECT_EQ(Settle(p, t), 8u);
  // Nothing for two windows: the next wait asks for one, whatever came before.
  t += 2 * kWindow;
  EXPECT_EQ(p.Wanted(t), 1u);
}

}  // namespace
}  // namespace strata
