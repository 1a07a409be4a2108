#include "server/engine/lock_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata {
namespace {

LockTable::Request Req(std::vector<std::string> keys, bool exclusive, bool hold,
                       std::vector<std::string>* log, std::string name) {
  LockTable::Request r;
  for (auto& k : keys) r.keys.push_back(LockTable::LockKey(0, k));
  r.exclusive = exclusive;
  r.hold = hold;
  r.on_admit = MakeTask([log, name] { log->push_back(name); });
  return r;
}

TEST(LockTableTest, EmptyTableRunsEverything) {
  LockTable t;
  std::vector<std::string_view> keys = {"a", "b"};
  EXPECT_TRUE(t.empty());
  EXPECT_TRUE(t.CanRun(0, keys, true));
}

TEST(LockTableTest, ExclusiveBlocksReadersAndWritersSharedBlocksWriters) {
  LockTable t;
  std::vector<std::string> log;
  auto w = Req({"a"}, true, true, &log, "w");
  t.Acquire(w);
  std::vector<std::string_view> a = {"a"};
  std::vector<std::string_view> b = {"b"};
  EXPECT_FALSE(t.CanRun(0, a, false));
  EXPECT_FALSE(t.CanRun(0, a, true));
  EXPECT_TRUE(t.CanRun(0, b, true));
  EXPECT_TRUE(t.CanRun(1, a, true));  // same name in another database is another key
  t.Release(w.keys, true);
  EXPECT_TRUE(t.empty());

  auto r = Req({"a"}, false, true, &log, "r");
  t.Acquire(r);
  EXPECT_TRUE(t.CanRun(0, a, false));
  EXPECT_FALSE(t.CanRun(0, a, true));
  t.Release(r.keys, false);
  EXPECT_TRUE(t.empty());
  // Tasks that were never run must still be freed.
  w.on_admit.Run();
  r.on_admit.Run();
}

TEST(LockTableTest, QueueIsFifoPerKey) {
  LockTable t;
  std::vector<std::string> log;
  auto holder = Req({"k"}, true, true, &log, "holder");
  t.Acquire(holder);
  t.Enqueue(Req({"k"}, false, false, &log, "read1"));
  t.Enqueue(Req({"k"}, true, false, &log, "write"));
  t.Enqueue(Req({"other"}, true, false, &log, "other"));
  // A newcomer on k must queue behind the waiters, even a reader.
  std::vector<std::string_view> k = {"k"};
  EXPECT_FALSE(t.CanRun(0, k, false));
  EXPECT_EQ(t.queued(), 3u);
  t.Release(holder.keys, true);
  EXPECT_EQ(log, (std::vector<std::string>{"read1", "write", "other"}));
  EXPECT_EQ(t.queued(), 0u);
  EXPECT_TRUE(t.empty());
  holder.on_admit.Run();
}

TEST(LockTableTest, HeldRequestBlocksLaterOnesUntilReleased) {
  LockTable t;
  std::vector<std::string> log;
  auto first = Req({"x"}, true, true, &log, "first");
  t.Acquire(first);
  auto second = Req({"x", "y"}, true, true, &log, "second");
  std::vector<LockTable::Key> second_keys = second.keys;
  t.Enqueue(std::move(second));
  t.Enqueue(Req({"y"}, true, false, &log, "y-writer"));
  t.Release(first.keys, true);
  // "second" is admitted and now holds x and y; the y writer waits behind it.
  EXPECT_EQ(log, (std::vector<std::string>{"second"}));
  t.Release(second_keys, true);
  EXPECT_EQ(log, (std::vector<std::string>{"second", "y-writer"}));
  EXPECT_TRUE(t.empty());
  first.on_admit.Run();
}

// Many waiters behind a blocked prefix: one release admits every one that can run, in
// FIFO order, and one more admits the rest (each pass looks at each waiter once).
TEST(LockTableTest, ManyWaitersAreAdmittedInOrderBehindABlockedPrefix) {
  LockTable t;
  std::vector<std::string> log;
  auto holder = Req({"a"}, true, true, &log, "holder");
  t.Acquire(holder);
  auto writer = Req({"a"}, true, true, &log, "writer");
  std::vector<LockTable::Key> writer_keys = writer.keys;
  t.Enqueue(std::move(writer));
  std::vector<std::string> want_later;
  for (int i = 0; i < 2000; i++) {
    std::string name = "reader" + std::to_string(i);
    // Readers of a wait behind the writer; readers of their own key run at once.
    if (i % 2 == 0) {
      t.Enqueue(Req({"a"}, false, false, &log, name));
      want_later.push_back(name);
    } else {
      t.Enqueue(Req({"b" + std::to_string(i)}, false, false, &log, name));
    }
  }
  EXPECT_EQ(t.queued(), 2001u);
  t.Release(holder.keys, true);
  // The writer, then every reader of another key (none of them waits for a).
  ASSERT_EQ(log.size(), 1001u);
  EXPECT_EQ(log[0], "writer");
  for (int i = 1; i <= 1000; i++) EXPECT_EQ(log[i], "reader" + std::to_string(2 * i - 1));
  log.clear();
  t.Release(writer_keys, true);
  EXPECT_EQ(log, want_later);
  EXPECT_EQ(t.queued(), 0u);
  EXPECT_TRUE(t.empty());
  holder.on_admit.Run();
}

// A transaction's nested requests (an MSET run inside EXEC) pass its own locks at once,
// ahead of others queued on the keys, and their release leaves the transaction's hold.
TEST(LockTableTest, OwnerNestedRequestsPassTheOwnersLocks) {
  LockTable t;
  std::vector<std::string> log;
  auto txn = Req({"a", "b"}, true, true, &log, "txn");
  txn.owner = 7;
  ASSERT_TRUE(t.CanRun(txn));
  t.Acquire(txn);
  auto other = Req({"a"}, true, true, &log, "other");
  EXPECT_FALSE(t.CanRun(other));
  t.Enqueue(other);
  auto nested = Req({"a", "b"}, false, true, &log, "nested");
  nested.owner = 7;
  EXPECT_TRUE(t.CanRun(nested));  // not behind "other", which waits for the owner
  t.Acquire(nested);
  auto stranger = Req({"b"}, false, true, &log, "stranger");
  stranger.owner = 8;
  EXPECT_FALSE(t.CanRun(stranger));
  t.Release(nested.keys, false);
  EXPECT_TRUE(log.empty());  // still held by the transaction
  std::vector<std::string_view> a = {"a"};
  EXPECT_FALSE(t.CanRun(0, a, false));
  t.Release(txn.keys, true);
  EXPECT_EQ(log, std::vector<std::string>{"other"});
  t.Release(other.keys, true);
  EXPECT_TRUE(t.empty());
  txn.on_admit.Run();
  nested.on_admit.Run();
  stranger.on_admit.Run();
}

// A nested request over a key the owner does not hold locks that key normally.
TEST(LockTableTest, OwnerNestedRequestLocksKeysItDoesNotHold) {
  LockTable t;
  std::vector<std::string> log;
  auto txn = Req({"a"}, true, true, &log, "txn");
  txn.owner = 7;
  t.Acquire(txn);
  auto nested = Req({"a", "c"}, true, true, &log, "nested");
  nested.owner = 7;
  ASSERT_TRUE(t.CanRun(nested));
  t.Acquire(nested);
  std::vector<std::string_view> c = {"c"};
  EXPECT_FALSE(t.CanRun(0, c, false));
  t.Release(nested.keys, true);
  EXPECT_TRUE(t.CanRun(0, c, true));
  std::vector<std::string_view> a = {"a"};
  EXPECT_FALSE(t.CanRun(0, a, true));
  t.Release(txn.keys, true);
  EXPECT_TRUE(t.empty());
  txn.on_admit.Run();
  nested.on_admit.Run();
}

// The whole-shard lock waits for every holder, blocks every later command (plain ones
// too), lets its owner's nested requests through, and admits the queue in order when
// released.
TEST(LockTableTest, WholeShardLockWaitsForHoldersAndBlocksEveryoneButItsOwner) {
  LockTable t;
  std::vector<std::string> log;
  auto holder = Req({"a"}, false, true, &log, "holder");
  t.Acquire(holder);
  LockTable::Request whole;
  whole.whole = true;
  whole.owner = 9;
  whole.on_admit = MakeTask([&log] { log.push_back("whole"); });
  EXPECT_FALSE(t.CanRun(whole));
  t.Enqueue(whole);
  EXPECT_FALSE(t.empty());
  std::vector<std::string_view> b = {"b"};
  EXPECT_FALSE(t.CanRun(0, b, false));  // behind the queued whole-shard request
  auto later = Req({"b"}, false, false, &log, "later");
  t.Enqueue(later);
  t.Release(holder.keys, false);
  EXPECT_EQ(log, std::vector<std::string>{"whole"});
  EXPECT_TRUE(t.whole_held());
  EXPECT_TRUE(t.AnyExclusive());
  EXPECT_FALSE(t.CanRun(0, b, false));
  auto nested = Req({"z"}, true, true, &log, "nested");
  nested.owner = 9;
  EXPECT_TRUE(t.CanRun(nested));
  t.Acquire(nested);
  t.Release(nested.keys, true);
  EXPECT_EQ(log.size(), 1u);
  t.ReleaseWhole();
  EXPECT_EQ(log, (std::vector<std::string>{"whole", "later"}));
  EXPECT_TRUE(t.empty());
  holder.on_admit.Run();
  nested.on_admit.Run();
}

// A snapshot's cut looks for half-applied writes, except those of the transaction that
// waits for it (DEBUG RELOAD inside EXEC): its owner's locks are excepted, nobody else's.
TEST(LockTableTest, AnyExclusiveExceptsOneOwner) {
  LockTable t;
  std::vector<std::string> log;
  auto txn = Req({"a"}, true, true, &log, "txn");
  txn.owner = 7;
  t.Acquire(txn);
  EXPECT_TRUE(t.AnyExclusive());
  EXPECT_FALSE(t.AnyExclusive(7));
  EXPECT_TRUE(t.AnyExclusive(8));
  auto reader = Req({"b"}, false, true, &log, "reader");
  t.Acquire(reader);
  EXPECT_FALSE(t.AnyExclusive(7));  // shared holds are never a half-applied write
  auto other = Req({"c"}, true, true, &log, "other");
  t.Acquire(other);
  EXPECT_TRUE(t.AnyExclusive(7));
  t.Release(other.keys, true);
  t.Release(reader.keys, false);
  t.Release(txn.keys, true);
  LockTable::Request whole;
  whole.whole = true;
  whole.owner = 9;
  whole.on_admit = MakeTask([] {});
  t.Acquire(whole);
  EXPECT_TRUE(t.AnyExclusive(7));
  EXPECT_FALSE(t.AnyExclusive(9));
  t.ReleaseWhole();
  EXPECT_TRUE(t.empty());
  for (auto* r : {&txn, &reader, &other, &whole}) r->on_admit.Run();
}

// Two whole-shard requests: the second waits for the first's release.
TEST(LockTableTest, WholeShardRequestsQueueInOrder) {
  LockTable t;
  std::vector<std::string> log;
  LockTable::Request first;
  first.whole = true;
  first.owner = 1;
  first.on_admit = MakeTask([] {});
  ASSERT_TRUE(t.CanRun(first));
  t.Acquire(first);
  first.on_admit.Run();
  LockTable::Request second;
  second.whole = true;
  second.owner = 2;
  second.on_admit = MakeTask([&log] { log.push_back("second"); });
  EXPECT_FALSE(t.CanRun(second));
  t.Enqueue(second);
  auto key = Req({"k"}, true, false, &log, "key");
  t.Enqueue(key);
  t.ReleaseWhole();
  EXPECT_EQ(log, std::vector<std::string>{"second"});
  t.ReleaseWhole();
  EXPECT_EQ(log, (std::vector<std::string>{"second", "key"}));
  EXPECT_TRUE(t.empty());
}

// A transaction holds a key; a whole-shard request (DBSIZE) queues behind it; the
// transaction's nested MSET on that key must still run at once, or each waits for the
// other forever.
TEST(LockTableTest, OwnerNestedRequestPassesAQueuedWholeShardRequest) {
  LockTable t;
  std::vector<std::string> log;
  auto txn = Req({"a"}, true, true, &log, "txn");
  txn.owner = 7;
  t.Acquire(txn);
  LockTable::Request whole;
  whole.whole = true;
  whole.on_admit = MakeTask([&log] { log.push_back("whole"); });
  ASSERT_FALSE(t.CanRun(whole));
  t.Enqueue(whole);
  auto nested = Req({"a"}, true, true, &log, "nested");
  nested.owner = 7;
  EXPECT_TRUE(t.CanRun(nested));
  t.Acquire(nested);
  t.Release(nested.keys, true);
  EXPECT_TRUE(log.empty());
  auto other = Req({"a"}, false, true, &log, "other");  // not the owner: behind the queue
  EXPECT_FALSE(t.CanRun(other));
  t.Release(txn.keys, true);
  EXPECT_EQ(log, std::vector<std::string>{"whole"});
  t.ReleaseWhole();
  EXPECT_TRUE(t.empty());
  txn.on_admit.Run();
  nested.on_admit.Run();
  other.on_admit.Run();
}

TEST(LockTableTest, BusyExceptSeesOthersLocksAndQueuesButNotTheOwners) {
  // What a reload waits out: any lock held or waited for, except its own transaction's
  // and what waits behind them.
  LockTable t;
  std::vector<std::string> log;
  EXPECT_FALSE(t.BusyExcept(0));
  LockTable::Request mine = Req({"a"}, true, true, &log, "mine");
  mine.owner = 7;
  t.Acquire(mine);
  EXPECT_TRUE(t.BusyExcept(0));
  EXPECT_FALSE(t.BusyExcept(7));
  t.Enqueue(Req({"a"}, true, false, &log, "behind"));  // waits for owner 7
  EXPECT_TRUE(t.BusyExcept(0));
  EXPECT_FALSE(t.BusyExcept(7));
  LockTable::Request read = Req({"b"}, false, true, &log, "read");
  t.Acquire(read);  // a shared lock of another command
  EXPECT_TRUE(t.BusyExcept(7));
  t.Release(read.keys, false);
  EXPECT_FALSE(t.BusyExcept(7));
  t.Release(mine.keys, true);  // admits "behind", which holds nothing
  EXPECT_EQ(log, std::vector<std::string>({"behind"}));
  EXPECT_FALSE(t.BusyExcept(0));

  LockTable::Request whole;
  whole.whole = true;
  whole.owner = 9;
  t.Acquire(whole);
  EXPECT_TRUE(t.BusyExcept(0));
  EXPECT_FALSE(t.BusyExcept(9));
  t.ReleaseWhole();
  EXPECT_FALSE(t.BusyExcept(0));
}

}  // namespace
}  // namespace strata
