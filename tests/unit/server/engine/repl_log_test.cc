#include "server/engine/repl_log.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "server/engine/repl_feed.h"

namespace strata {
namespace {

std::string Set(const std::string& k) { return RespCommand({"SET", k, "v"}); }

// The feed's encoder writes what RespCommand does, for lengths around every digit count.
TEST(ReplOutTest, EncodesLikeRespCommand) {
  for (size_t len : {0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 12345, 100000}) {
    std::string value(len, 'x');
    std::vector<std::string_view> args{"SET", "k", value};
    ReplOut out;
    out.Add(CmdArgs(args.data(), args.size()));
    out.Add({"DEL", value});
    EXPECT_EQ(out.bytes(), RespCommand(args) + RespCommand({"DEL", value})) << len;
    EXPECT_EQ(out.commands(), 2u);
  }
  std::vector<std::string_view> many(123, "a");
  ReplOut out;
  out.Add(CmdArgs(many.data(), many.size()));
  EXPECT_EQ(out.bytes(), RespCommand(many));
}

TEST(ReplBacklogTest, KeepsTheNewestBytesAndAnswersOffsetsItHolds) {
  ReplBacklog b(10);
  std::string out;
  EXPECT_TRUE(b.From(0, &out));
  EXPECT_EQ(out, "");
  b.Append("abcd");
  EXPECT_EQ(b.offset(), 4);
  EXPECT_EQ(b.first(), 0);
  ASSERT_TRUE(b.From(1, &out));
  EXPECT_EQ(out, "bcd");
  b.Append("efghijkl");  // 12 bytes in all: "cdefghijkl" held
  EXPECT_EQ(b.offset(), 12);
  EXPECT_EQ(b.first(), 2);
  EXPECT_EQ(b.held(), 10u);
  EXPECT_FALSE(b.From(1, &out));
  ASSERT_TRUE(b.From(2, &out));
  EXPECT_EQ(out, "cdefghijkl");
  ASSERT_TRUE(b.From(11, &out));
  EXPECT_EQ(out, "l");
  ASSERT_TRUE(b.From(12, &out));
  EXPECT_EQ(out, "");
  EXPECT_FALSE(b.From(13, &out));
  b.Append(std::string(25, 'z') + "0123456789");  // bigger than the ring
  EXPECT_EQ(b.offset(), 47);
  ASSERT_TRUE(b.From(b.first(), &out));
  EXPECT_EQ(out, "0123456789");
  b.Resize(4);
  EXPECT_EQ(b.offset(), 47);
  ASSERT_TRUE(b.From(b.first(), &out));
  EXPECT_EQ(out, "6789");
  b.Resize(8);
  b.Append("ab");
  ASSERT_TRUE(b.From(b.first(), &out));
  EXPECT_EQ(out, "6789ab");
}

TEST(ReplBacklogTest, MatchesAReferenceUnderRandomAppends) {
  std::mt19937 rng(7);
  ReplBacklog b(97);
  std::string all;
  for (int i = 0; i < 2000; i++) {
    std::string chunk(rng() % 60, static_cast<char>('a' + rng() % 26));
    b.Append(chunk);
    all += chunk;
    ASSERT_EQ(b.offset(), static_cast<int64_t>(all.size()));
    int64_t from = b.first() + static_cast<int64_t>(rng() % (b.held() + 1));
    std::string out;
    ASSERT_TRUE(b.From(from, &out));
    ASSERT_EQ(out, all.substr(static_cast<size_t>(from)));
  }
}

TEST(ReplLogTest, SelectGoesBeforeAChangeOfDatabase) {
  ReplLog log(1, 1024);
  auto& s = log.shard(0);
  s.Append(log, 0, Set("a"));
  s.Append(log, 0, Set("b"));
  s.Append(log, 3, Set("c"));
  EXPECT_TRUE(s.Publish());
  std::string out;
  log.Merge([&](std::string_view b) { out.append(b); });
  EXPECT_EQ(out, RespCommand({"SELECT", "0"}) + Set("a") + Set("b") + RespCommand({"SELECT", "3"}) +
                     Set("c"));
  EXPECT_EQ(log.backlog().offset(), static_cast<int64_t>(out.size()));
  EXPECT_FALSE(s.Publish());
  out.clear();
  log.ForgetDb();
  s.Append(log, 3, Set("d"));
  s.Publish();
  log.Merge([&](std::string_view b) { out.append(b); });
  EXPECT_EQ(out, RespCommand({"SELECT", "3"}) + Set("d"));
}

// The stream is not copied: a run of one shard's records is one slice of the batch's
// own buffer, shared by the backlog and the sink, and it outlives the shard's next turns.
TEST(ReplLogTest, SlicesShareTheShardsBufferAndOutliveIt) {
  ReplLog log(1, 1 << 20);
  auto& s = log.shard(0);
  s.Append(log, 0, Set("a"));
  s.Append(log, 0, Set("b"));
  s.Publish();
  std::vector<ReplSlice> got;
  log.MergeSlices([&](const ReplSlice& x) { got.push_back(x); });
  ASSERT_EQ(got.size(), 2u);  // SELECT, then both records at once
  EXPECT_EQ(got[0].view(), RespCommand({"SELECT", "0"}));
  EXPECT_EQ(got[1].view(), Set("a") + Set("b"));
  EXPECT_GE(got[1].buf.use_count(), 2);  // the backlog holds the same buffer: not a copy
  for (int turn = 0; turn < 5; turn++) {
    s.Append(log, 0, Set("x" + std::to_string(turn)));
    s.Publish();
    log.Merge(nullptr);
  }
  EXPECT_EQ(got[1].view(), Set("a") + Set("b"));
  std::string all;
  ASSERT_TRUE(log.backlog().From(0, &all));
  EXPECT_EQ(all.substr(0, got[0].len + got[1].len),
            RespCommand({"SELECT", "0"}) + Set("a") + Set("b"));
}

TEST(ReplLogTest, AShardStillProducingHoldsBackLaterRecords) {
  ReplLog log(2, 1024);
  auto& a = log.shard(0);
  auto& b = log.shard(1);
  a.Append(log, 0, Set("a1"));  // 0
  b.Append(log, 0, Set("b1"));  // 1
  a.Append(log, 0, Set("a2"));  // 2
  b.Publish();
  std::string out;
  auto sink = [&](std::string_view x) { out.append(x); };
  EXPECT_EQ(log.Merge(sink), 0u);  // a is producing from 0: b1 waits
  a.Publish();
  log.Merge(sink);
  EXPECT_EQ(out, RespCommand({"SELECT", "0"}) + Set("a1") + Set("b1") + Set("a2"));
}

TEST(ReplLogTest, ACutResolvesAtTheOffsetBeforeItsFirstRecordAndSelectsAgain) {
  ReplLog log(2, 1024);
  auto& a = log.shard(0);
  auto& b = log.shard(1);
  a.Append(log, 0, Set("a1"));   // 0
  b.Append(log, 0, Set("b1"));   // 1
  uint64_t cut = log.counter();  // 2: the image holds a1 and b1
  log.AddCut(cut, 7);
  a.Append(log, 0, Set("a2"));  // 2
  a.Publish();
  b.Publish();
  std::string out;
  log.Merge([&](std::string_view x) { out.append(x); });
  auto r = log.TakeResolvedCuts();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].first, 7u);
  std::string before = RespCommand({"SELECT", "0"}) + Set("a1") + Set("b1");
  EXPECT_EQ(r[0].second, static_cast<int64_t>(before.size()));
  // After the cut the stream selects its database again.
  EXPECT_EQ(out, before + RespCommand({"SELECT", "0"}) + Set("a2"));
  // A cut with nothing after it resolves at the bound.
  log.AddCut(log.counter(), 8);
  log.Merge([&](std::string_view x) { out.append(x); });
  r = log.TakeResolvedCuts();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].second, static_cast<int64_t>(out.size()));
  // ... unless a shard still producing may yet add a record below it.
  b.Append(log, 0, Set("b2"));
  log.AddCut(log.counter(), 9);
  log.Merge([&](std::string_view x) { out.append(x); });
  EXPECT_TRUE(log.TakeResolvedCuts().empty());
  b.Publish();
  log.Merge([&](std::string_view x) { out.append(x); });
  r = log.TakeResolvedCuts();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].second, static_cast<int64_t>(out.size()));
}

TEST(ReplLogTest, AReservedNumberKeepsItsPlaceAndRecordsWithoutDatabaseNeedNoSelect) {
  ReplLog log(1, 1024);
  auto& s = log.shard(0);
  uint64_t n = s.Reserve(log);     // 0
  s.Append(log, 2, Set("later"));  // 1
  s.AppendAt(n, 2, Set("first"));
  s.Append(log, ReplLog::kNoDb, RespCommand({"PING"}));
  s.Publish();
  std::string out;
  log.Merge([&](std::string_view x) { out.append(x); });
  EXPECT_EQ(out,
            RespCommand({"SELECT", "2"}) + Set("first") + Set("later") + RespCommand({"PING"}));
  // A number reserved and never used is a gap the merge passes.
  s.Reserve(log);
  s.Append(log, 2, Set("after-gap"));
  s.Publish();
  out.clear();
  log.Merge([&](std::string_view x) { out.append(x); });
  EXPECT_EQ(out, Set("after-gap"));
}

// Many producers and a merger at once: the stream is every record, in number order.
TEST(ReplLogTest, ConcurrentProducersMergeInOneOrder) {
  constexpr uint32_t kShards = 4;
  constexpr int kPerShard = 20000;
  ReplLog log(kShards, 1 << 16);
  std::atomic<int> done{0};
  std::vector<std::thread> producers;
  for (uint32_t s = 0; s < kShards; s++) {
    producers.emplace_back([&, s] {
      auto& shard = log.shard(s);
      std::mt19937 rng(s);
      for (int i = 0; i < kPerShard; i++) {
        // The record names its shard and index; the number is checked from the order.
        shard.Append(log, 0, std::to_string(s) + ":" + std::to_string(i) + "\n");
        if (rng() % 8 == 0) shard.Publish();
      }
      shard.Publish();
      done++;
    });
  }
  std::string out;
  auto sink = [&](std::string_view x) { out.append(x); };
  while (done.load() < static_cast<int>(kShards)) log.Merge(sink);
  for (auto& t : producers) t.join();
  log.Merge(sink);
  // Each shard's records in its order, all of them.
  std::vector<int> next(kShards, 0);
  std::string select = RespCommand({"SELECT", "0"});
  ASSERT_EQ(out.compare(0, select.size(), select), 0);
  size_t pos = select.size();
  size_t records = 0;
  while (pos < out.size()) {
    size_t nl = out.find('\n', pos);
    std::string rec = out.substr(pos, nl - pos);
    pos = nl + 1;
    size_t colon = rec.find(':');
    uint32_t s = static_cast<uint32_t>(std::stoul(rec.substr(0, colon)));
    int i = std::stoi(rec.substr(colon + 1));
    ASSERT_EQ(i, next[s]) << "shard " << s;
    next[s]++;
    records++;
  }
  EXPECT_EQ(records, static_cast<size_t>(kShards) * kPerShard);
}

// The number order itself: producers that each take numbers in turn must come out in
// exactly the order the numbers were taken (a single global ticket per record).
TEST(ReplLogTest, RecordsComeOutInTheOrderTheirNumbersWereTaken) {
  constexpr uint32_t kShards = 3;
  ReplLog log(kShards, 1 << 12);
  std::atomic<int> turn{0};
  std::atomic<bool> stop{false};
  constexpr int kRecords = 600;
  std::vector<std::thread> producers;
  for (uint32_t s = 0; s < kShards; s++) {
    producers.emplace_back([&, s] {
      auto& shard = log.shard(s);
      while (true) {
        int t = turn.load();
        if (t >= kRecords) break;
        if (t % static_cast<int>(kShards) != static_cast<int>(s)) {
          if (t % 5 == 0) shard.Publish();
          std::this_thread::yield();
          continue;
        }
        shard.Append(log, 0, std::to_string(t) + "\n");  // t-th number taken
        turn.store(t + 1);
        if (t % 3 == 0) shard.Publish();
      }
      shard.Publish();
    });
  }
  std::string out;
  std::thread merger([&] {
    while (!stop.load()) {
      log.Merge([&](std::string_view x) { out.append(x); });
      std::this_thread::yield();
    }
  });
  for (auto& t : producers) t.join();
  stop.store(true);
  merger.join();
  log.Merge([&](std::string_view x) { out.append(x); });
  std::string expect = RespCommand({"SELECT", "0"});
  for (int t = 0; t < kRecords; t++) expect += std::to_string(t) + "\n";
  EXPECT_EQ(out, expect);
}

}  // namespace
}  // namespace strata
