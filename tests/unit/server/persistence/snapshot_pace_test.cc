// SnapshotPace: the traversal's share of its worker's time, and when the worker may sleep
// instead of spinning for it.
#include "server/persistence/snapshot_pace.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

constexpr int64_t kUs = 1000;
constexpr int64_t kMs = 1000 * 1000;

class SnapshotPaceTest : public ::testing::Test {
 protected:
  // Turns of turn_ns each that run commands, from now_ on; returns the budgets offered.
  int64_t ServeTurns(int n, int64_t turn_ns) {
    int64_t offered = 0;
    for (int i = 0; i < n; i++) {
      now_ += turn_ns;
      offered += pace_.OnTurn(now_, turn_ns, /*busy=*/true);
    }
    return offered;
  }

  SnapshotPace pace_;
  int64_t now_ = 1000 * kMs;
};

TEST_F(SnapshotPaceTest, AnIdleShardStepsInLongSlicesAndNeverWaits) {
  EXPECT_TRUE(pace_.Ready(now_));
  EXPECT_EQ(pace_.OnTurn(now_, 2 * kUs, /*busy=*/false), SnapshotPace::kIdleStepNs);
  pace_.Stepped(SnapshotPace::kIdleStepNs);
  now_ += SnapshotPace::kIdleStepNs;
  EXPECT_TRUE(pace_.Ready(now_));
  EXPECT_EQ(pace_.OnTurn(now_, 2 * kUs, /*busy=*/false), SnapshotPace::kIdleStepNs);
}

TEST_F(SnapshotPaceTest, WhileClientsAreServedTheShareIsATenthOfTheirTime) {
  // 10 turns of 10 us: 10 us earned, below the smallest step.
  EXPECT_EQ(ServeTurns(10, 10 * kUs), 0);
  // The 20th turn brings it to 20 us: that step is offered.
  EXPECT_EQ(ServeTurns(9, 10 * kUs), 0);
  EXPECT_EQ(ServeTurns(1, 10 * kUs), SnapshotPace::kMinStepNs);
  pace_.Stepped(SnapshotPace::kMinStepNs);
  EXPECT_EQ(pace_.credit_ns(), 0);
}

TEST_F(SnapshotPaceTest, WhileClientsAreServedAShardWithoutItsShareLetsItsWorkerSleep) {
  ServeTurns(1, 10 * kUs);
  // 1 us earned: nothing to step until clients' turns earn more, so the worker may sleep
  // (a spinning one would spend the time its clients, or other workers, need).
  EXPECT_FALSE(pace_.Ready(now_));
  ServeTurns(19, 10 * kUs);
  EXPECT_TRUE(pace_.Ready(now_));
}

TEST_F(SnapshotPaceTest, AShardWhoseClientsWentQuietIsIdleAfterTheWindow) {
  ServeTurns(1, 10 * kUs);
  EXPECT_FALSE(pace_.Ready(now_));
  // A sleep of the bound with no input: the shard is idle again and steps at once.
  now_ += SnapshotPace::kSleepBoundNs;
  EXPECT_TRUE(pace_.Ready(now_));
  EXPECT_EQ(pace_.OnTurn(now_, SnapshotPace::kSleepBoundNs, /*busy=*/false),
            SnapshotPace::kIdleStepNs);
}

TEST_F(SnapshotPaceTest, AStepPastItsBudgetIsOwedByLaterTurns) {
  EXPECT_EQ(ServeTurns(1, 200 * kUs), 20 * kUs);
  // The step ran 100 us: 80 us owed, repaid by 800 us of clients' time before the next.
  pace_.Stepped(100 * kUs);
  EXPECT_EQ(pace_.credit_ns(), -80 * kUs);
  EXPECT_EQ(ServeTurns(9, 100 * kUs), 0);
  EXPECT_FALSE(pace_.Ready(now_));
  EXPECT_EQ(ServeTurns(1, 1000 * kUs), 110 * kUs);  // 10 us left, 100 us earned
  // What is owed is bounded: a very long step owes at most one idle slice.
  pace_.Stepped(100 * kMs);
  EXPECT_EQ(pace_.credit_ns(), -SnapshotPace::kIdleStepNs);
}

TEST_F(SnapshotPaceTest, TheShareEarnedIsCappedAtOneIdleSlice) {
  EXPECT_EQ(ServeTurns(1, 100 * kMs), SnapshotPace::kIdleStepNs);
}

}  // namespace
}  // namespace strata
