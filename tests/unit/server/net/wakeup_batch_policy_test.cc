// WakeupBatchPolicy: what a sleeping io_uring loop asks for, driven with synthetic times.
#include "server/net/wakeup_batch_policy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace strata {
namespace {

constexpr int64_t kWindow = WakeupBatchPolicy::kWindowUs;

class WakeupBatchPolicyTest : public ::testing::Test {
 protected:
  // Configures the policy and opens its first window (at t).
  void Start(unsigned max_batch, unsigned bound_us, size_t clients = 50) {
    p.Configure(max_batch, bound_us);
    conns.assign(clients, 0);
    p.Wanted(t);
  }
  // The first `clients` connections each send `per_client` inputs within the window that
  // starts at t; t moves to its end.
  void Window(size_t clients, unsigned per_client) {
    if (conns.size() < clients) conns.resize(clients, 0);
    for (unsigned r = 0; r < per_client; r++) {
      for (size_t i = 0; i < clients; i++) p.NoteInput(&conns[i]);
    }
    t += kWindow;
  }
  // Waits that fill, until the level reaches its cap; returns what the last one asked for.
  unsigned Settle() {
    unsigned want = 1;
    for (int i = 0; i < 64; i++) {
      want = p.Wanted(t);
      p.AfterWait(want, want);
    }
    return want;
  }

  WakeupBatchPolicy p;
  std::vector<uint64_t> conns;
  int64_t t = 10 * kWindow;
};

TEST_F(WakeupBatchPolicyTest, OffAsksForOne) {
  EXPECT_FALSE(p.on());
  conns.assign(50, 0);
  Window(50, 100);
  EXPECT_EQ(Settle(), 1u);
}

TEST_F(WakeupBatchPolicyTest, ABusyLoadGetsTheWholeBatch) {
  Start(8, 100);
  // 50 clients, 4 requests each per 2 ms: 100k/s, 5 within each 50 us.
  Window(50, 4);
  EXPECT_EQ(Settle(), 5u);
  // 8 each (200k/s): the batch's cap.
  Window(50, 8);
  EXPECT_EQ(Settle(), 8u);
}

// 50 clients at 500 requests a second each (25k/s in all): one every 40 us, 1.25 within
// half the bound, so no wait is held for a second.
TEST_F(WakeupBatchPolicyTest, ALoadTooSlowToFillABatchWithinTheBoundIsNeverHeld) {
  Start(8, 100);
  for (int w = 0; w < 20; w++) {
    Window(50, 1);
    EXPECT_EQ(Settle(), 1u) << "window " << w;
  }
  // With a bound four times as long, the same rate fills batches of 5.
  p.Configure(8, 400);
  Window(50, 1);
  EXPECT_EQ(Settle(), 5u);
}

TEST_F(WakeupBatchPolicyTest, OneClientAtATimeIsNeverHeld) {
  Start(64, 100000, 1);  // a rate no bound would refuse
  Window(1, 1000);
  EXPECT_EQ(Settle(), 1u);
  // Two clients: still one each, at most (half the clients sending).
  Window(2, 1000);
  EXPECT_EQ(Settle(), 1u);
  Window(6, 1000);
  EXPECT_EQ(Settle(), 3u);
}

TEST_F(WakeupBatchPolicyTest, WakesFromOtherThreadsTurnItOffForTwoWindows) {
  Start(8, 100);
  Window(50, 8);
  EXPECT_EQ(Settle(), 8u);
  p.NoteWake();
  EXPECT_EQ(p.Wanted(t + 1), 1u);
  Window(50, 8);
  EXPECT_EQ(p.Wanted(t), 1u);  // the window before had a wake
  Window(50, 8);
  EXPECT_EQ(Settle(), 8u);
}

TEST_F(WakeupBatchPolicyTest, AWaitThatRunsOutHalvesTheLevel) {
  Start(8, 100);
  Window(50, 8);
  EXPECT_EQ(Settle(), 8u);
  p.AfterWait(3, 8);
  EXPECT_EQ(p.Wanted(t), 4u);
  p.AfterWait(1, 4);
  EXPECT_EQ(p.Wanted(t), 2u);
  p.AfterWait(2, 2);
  EXPECT_EQ(p.Wanted(t), 3u);
}

TEST_F(WakeupBatchPolicyTest, ASilenceForgetsTheLoad) {
  Start(8, 100);
  Window(50, 8);
  EXPECT_EQ(Settle(), 8u);
  // Nothing for two windows: the next wait asks for one, whatever came before.
  t += 2 * kWindow;
  EXPECT_EQ(p.Wanted(t), 1u);
}

}  // namespace
}  // namespace strata
