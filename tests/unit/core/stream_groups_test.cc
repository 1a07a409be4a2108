#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/stream_type.h"
#include "stream_test_util.h"

namespace strata {
namespace {

using test::Id;

void AddIds(StreamObject& s, uint64_t from_ms, uint64_t to_ms) {
  for (uint64_t ms = from_ms; ms <= to_ms; ms++) {
    std::string v = "value-" + std::to_string(ms);
    std::vector<std::string_view> fv = {"data", v};
    StreamId id;
    ASSERT_EQ(s.Add({StreamAddId::kExplicit, Id(ms, 0)}, fv, 0, &id), StreamStatus::kOk);
  }
}

std::vector<StreamId> ReadNew(StreamObject& s, StreamGroup* g, StreamConsumer* c, size_t count,
                              int64_t now, bool noack = false) {
  std::vector<StreamId> out;
  s.ReadGroupNew(g, c, count, noack, now, [&](const StreamEntry& e) {
    EXPECT_EQ(e.fields.size(), 1u);
    out.push_back(e.id);
  });
  return out;
}

// The lag XINFO would show; -1 for nil.
int64_t Lag(const StreamObject& s, const StreamGroup& g) {
  int64_t lag;
  return s.GroupLag(g, &lag) ? lag : -1;
}

TEST(StreamGroupTest, GroupsAndConsumers) {
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  size_t empty = s.Bytes();
  StreamGroup* g = s.CreateGroup("g1", Id(0, 0), -1);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(s.CreateGroup("g1", Id(5, 0), -1), nullptr);  // BUSYGROUP
  ASSERT_NE(s.CreateGroup("a-group-with-a-name-longer-than-inline", Id(0, 0), 3), nullptr);
  std::vector<std::string_view> names;
  for (const auto& [name, grp] : s.groups()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string_view>{"a-group-with-a-name-longer-than-inline", "g1"}));

  StreamConsumer* c = s.CreateConsumer(g, "alice", 100);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->seen_ms, 100);
  EXPECT_EQ(c->active_ms, -1);
  EXPECT_EQ(s.CreateConsumer(g, "alice", 200), nullptr);
  bool created = true;
  EXPECT_EQ(s.TouchConsumer(g, "alice", 300, &created), c);
  EXPECT_FALSE(created);
  EXPECT_EQ(c->seen_ms, 300);
  StreamConsumer* bob = s.TouchConsumer(g, "bob", 400, &created);
  EXPECT_TRUE(created);
  EXPECT_EQ(bob->seen_ms, 400);
  EXPECT_EQ(g->consumers.size(), 2u);

  AddIds(s, 1, 5);
  EXPECT_EQ(ReadNew(s, g, bob, 3, 500).size(), 3u);
  EXPECT_EQ(bob->active_ms, 500);
  EXPECT_EQ(s.DeleteConsumer(g, "bob"), 3u);
  EXPECT_EQ(s.DeleteConsumer(g, "bob"), 0u);
  EXPECT_TRUE(g->pel.empty());
  EXPECT_EQ(s.FindConsumer(g, "bob"), nullptr);

  EXPECT_TRUE(s.DestroyGroup("g1"));
  EXPECT_FALSE(s.DestroyGroup("g1"));
  EXPECT_TRUE(s.DestroyGroup("a-group-with-a-name-longer-than-inline"));
  EXPECT_TRUE(s.groups().empty());
  StreamTrimSpec t;
  t.strategy = StreamTrimSpec::kMaxLen;
  s.Trim(t);
  EXPECT_EQ(s.Bytes(), empty);  // every group, consumer and PEL byte given back
}

TEST(StreamGroupTest, ReadGroupDeliversAndTracksThePel) {
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  AddIds(s, 1, 10);
  StreamGroup* g = s.CreateGroup("g", Id(0, 0), -1);
  StreamConsumer* alice = s.TouchConsumer(g, "alice", 1000);
  StreamConsumer* bob = s.TouchConsumer(g, "bob", 1000);
  EXPECT_EQ(ReadNew(s, g, alice, 3, 1000), (std::vector<StreamId>{Id(1, 0), Id(2, 0), Id(3, 0)}));
  EXPECT_EQ(g->last_id, Id(3, 0));
  EXPECT_EQ(g->entries_read, 3);
  EXPECT_EQ(ReadNew(s, g, bob, 2, 1010), (std::vector<StreamId>{Id(4, 0), Id(5, 0)}));
  EXPECT_EQ(ReadNew(s, g, bob, 2, 1020, true), (std::vector<StreamId>{Id(6, 0), Id(7, 0)}));
  EXPECT_EQ(g->pel.size(), 5u);  // NOACK added nothing
  EXPECT_EQ(g->entries_read, 7);
  EXPECT_EQ(ReadNew(s, g, alice, 0, 1030).size(), 3u);
  EXPECT_TRUE(ReadNew(s, g, alice, 0, 1040).empty());
  EXPECT_EQ(g->last_id, Id(10, 0));
  EXPECT_EQ(Lag(s, *g), 0);

  const StreamPending& p = g->pel.at(Id(4, 0));
  EXPECT_EQ(p.consumer, bob);
  EXPECT_EQ(p.delivery_ms, 1010);
  EXPECT_EQ(p.delivery_count, 1u);
  EXPECT_EQ(alice->pending.size(), 6u);
  EXPECT_EQ(bob->pending.size(), 2u);

  // History: only the consumer's own entries, deleted ones as null, each a delivery.
  ASSERT_TRUE(s.Delete(Id(2, 0)));
  std::vector<std::pair<StreamId, bool>> history;
  s.ReadGroupHistory(g, alice, Id(0, 0), 3, 2000, [&](StreamId id, const StreamEntry* e) {
    history.emplace_back(id, e != nullptr);
  });
  EXPECT_EQ(history, (std::vector<std::pair<StreamId, bool>>{
                         {Id(1, 0), true}, {Id(2, 0), false}, {Id(3, 0), true}}));
  EXPECT_EQ(g->pel.at(Id(1, 0)).delivery_count, 2u);
  EXPECT_EQ(g->pel.at(Id(1, 0)).delivery_ms, 2000);
  EXPECT_EQ(g->pel.at(Id(2, 0)).delivery_count, 1u);
  history.clear();
  s.ReadGroupHistory(g, bob, Id(4, 1), 0, 2000,
                     [&](StreamId id, const StreamEntry* e) { history.emplace_back(id, true); });
  EXPECT_EQ(history, (std::vector<std::pair<StreamId, bool>>{{Id(5, 0), true}}));

  // XACK.
  EXPECT_TRUE(s.Ack(g, Id(1, 0)));
  EXPECT_FALSE(s.Ack(g, Id(1, 0)));
  EXPECT_FALSE(s.Ack(g, Id(6, 0)));  // read with NOACK
  EXPECT_EQ(alice->pending.count(Id(1, 0)), 0u);
  EXPECT_EQ(g->pel.size(), 7u);

  // SETID back: the next read takes entries pending for others.
  s.SetGroupId(g, Id(3, 0), -1);
  EXPECT_EQ(ReadNew(s, g, alice, 2, 3000), (std::vector<StreamId>{Id(4, 0), Id(5, 0)}));
  EXPECT_TRUE(bob->pending.empty());
  EXPECT_EQ(g->pel.at(Id(4, 0)).consumer, alice);
  EXPECT_EQ(g->pel.at(Id(4, 0)).delivery_ms, 3000);
  EXPECT_EQ(g->last_id, Id(5, 0));
}

TEST(StreamGroupTest, PendingSummaryAndRanges) {
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  AddIds(s, 1, 6);
  StreamGroup* g = s.CreateGroup("g", Id(0, 0), -1);
  StreamConsumer* a = s.TouchConsumer(g, "a", 0);
  StreamConsumer* b = s.TouchConsumer(g, "b", 0);
  s.TouchConsumer(g, "c", 0);
  ReadNew(s, g, a, 2, 1000);
  ReadNew(s, g, b, 3, 5000);
  ReadNew(s, g, a, 1, 9000);
  StreamPendingSummary sum = s.PendingSummary(*g);
  EXPECT_EQ(sum.count, 6u);
  EXPECT_EQ(sum.min, Id(1, 0));
  EXPECT_EQ(sum.max, Id(6, 0));
  EXPECT_EQ(sum.consumers, (std::vector<std::pair<std::string_view, size_t>>{{"a", 3}, {"b", 3}}));

  std::vector<StreamPendingLine> lines;
  s.PendingRange(*g, nullptr, StreamId::Min(), StreamId::Max(), 10, 0, 10000, &lines);
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0].id, Id(1, 0));
  EXPECT_EQ(lines[0].consumer, "a");
  EXPECT_EQ(lines[0].idle_ms, 9000);
  EXPECT_EQ(lines[5].idle_ms, 1000);
  lines.clear();
  s.PendingRange(*g, nullptr, Id(2, 0), Id(5, 0), 2, 0, 10000, &lines);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].id, Id(3, 0));
  lines.clear();
  s.PendingRange(*g, nullptr, StreamId::Min(), StreamId::Max(), 10, 4000, 10000, &lines);
  ASSERT_EQ(lines.size(), 5u);  // IDLE 4000 drops the entry delivered at 9000
  lines.clear();
  s.PendingRange(*g, b, StreamId::Min(), StreamId::Max(), 10, 0, 10000, &lines);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].id, Id(3, 0));
  EXPECT_EQ(lines[0].consumer, "b");
  lines.clear();
  s.PendingRange(*g, a, StreamId::Min(), StreamId::Max(), 0, 0, 10000, &lines);
  EXPECT_TRUE(lines.empty());
  lines.clear();
  s.PendingRange(*g, nullptr, StreamId::Min(), StreamId::Max(), 10, 0, 500, &lines);
  EXPECT_EQ(lines[0].idle_ms, 0);  // a delivery in the future reads as idle 0

  auto empty_owner = std::make_unique<StreamObject>();

  StreamObject& empty = *empty_owner;
  StreamGroup* eg = empty.CreateGroup("g", Id(0, 0), -1);
  EXPECT_EQ(empty.PendingSummary(*eg).count, 0u);
}

TEST(StreamGroupTest, ClaimFollowsRedis) {
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  AddIds(s, 1, 6);
  StreamGroup* g = s.CreateGroup("g", Id(0, 0), -1);
  StreamConsumer* a = s.TouchConsumer(g, "a", 0);
  StreamConsumer* b = s.TouchConsumer(g, "b", 0);
  ReadNew(s, g, a, 4, 1000);  // 1..4 pending for a
  std::vector<StreamId> claimed, dropped;
  StreamClaimOptions o;

  // Not idle long enough.
  o.min_idle_ms = 5000;
  std::vector<StreamId> ids = {Id(1, 0), Id(2, 0)};
  s.Claim(g, b, ids, o, 3000, &claimed, &dropped);
  EXPECT_TRUE(claimed.empty());
  EXPECT_EQ(b->active_ms, -1);

  // Idle enough: ownership moves, delivery time is now, count goes up.
  s.Claim(g, b, ids, o, 7000, &claimed, &dropped);
  EXPECT_EQ(claimed, ids);
  EXPECT_EQ(g->pel.at(Id(1, 0)).consumer, b);
  EXPECT_EQ(g->pel.at(Id(1, 0)).delivery_ms, 7000);
  EXPECT_EQ(g->pel.at(Id(1, 0)).delivery_count, 2u);
  EXPECT_EQ(a->pending.size(), 2u);
  EXPECT_EQ(b->pending.size(), 2u);
  EXPECT_EQ(b->active_ms, 7000);

  // IDLE/TIME give the delivery time; RETRYCOUNT sets the count; JUSTID does not count.
  claimed.clear();
  o = StreamClaimOptions{};
  o.delivery_ms = 6500;
  o.retry_count = 9;
  std::vector<StreamId> three = {Id(3, 0)};
  s.Claim(g, b, three, o, 8000, &claimed, &dropped);
  EXPECT_EQ(g->pel.at(Id(3, 0)).delivery_ms, 6500);
  EXPECT_EQ(g->pel.at(Id(3, 0)).delivery_count, 9u);
  o = StreamClaimOptions{};
  o.justid = true;
  o.delivery_ms = 99999;  // in the future: taken as now
  s.Claim(g, b, three, o, 8100, &claimed, &dropped);
  EXPECT_EQ(g->pel.at(Id(3, 0)).delivery_ms, 8100);
  EXPECT_EQ(g->pel.at(Id(3, 0)).delivery_count, 9u);

  // FORCE creates missing PEL entries, only for entries that exist.
  claimed.clear();
  o = StreamClaimOptions{};
  o.force = true;
  o.min_idle_ms = 100000;  // ignored for entries FORCE creates
  std::vector<StreamId> forced = {Id(6, 0), Id(77, 0)};
  s.Claim(g, b, forced, o, 9000, &claimed, &dropped);
  EXPECT_EQ(claimed, (std::vector<StreamId>{Id(6, 0)}));
  EXPECT_EQ(g->pel.at(Id(6, 0)).delivery_count, 2u);
  EXPECT_EQ(g->pel.count(Id(77, 0)), 0u);
  // Without FORCE an ID not pending is skipped.
  claimed.clear();
  std::vector<StreamId> five = {Id(5, 0)};
  s.Claim(g, b, five, StreamClaimOptions{}, 9000, &claimed, &dropped);
  EXPECT_TRUE(claimed.empty());

  // An entry deleted from the stream loses its PEL entry.
  ASSERT_TRUE(s.Delete(Id(4, 0)));
  std::vector<StreamId> four = {Id(4, 0)};
  s.Claim(g, b, four, StreamClaimOptions{}, 9000, &claimed, &dropped);
  EXPECT_TRUE(claimed.empty());
  EXPECT_EQ(dropped, four);
  EXPECT_EQ(g->pel.count(Id(4, 0)), 0u);
  EXPECT_EQ(a->pending.count(Id(4, 0)), 0u);

  // LASTID raises the group's last-delivered-id, never lowers it.
  o = StreamClaimOptions{};
  o.last_id = Id(50, 0);
  s.Claim(g, b, {}, o, 9000, &claimed, &dropped);
  EXPECT_EQ(g->last_id, Id(50, 0));
  o.last_id = Id(10, 0);
  s.Claim(g, b, {}, o, 9000, &claimed, &dropped);
  EXPECT_EQ(g->last_id, Id(50, 0));
}

TEST(StreamGroupTest, AutoClaimScansWithACursor) {
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  AddIds(s, 1, 10);
  StreamGroup* g = s.CreateGroup("g", Id(0, 0), -1);
  StreamConsumer* a = s.TouchConsumer(g, "a", 0);
  StreamConsumer* b = s.TouchConsumer(g, "b", 0);
  ReadNew(s, g, a, 5, 1000);   // 1..5 at 1000
  ReadNew(s, g, a, 5, 50000);  // 6..10 at 50000
  ASSERT_TRUE(s.Delete(Id(2, 0)));

  StreamAutoClaimResult r;
  s.AutoClaim(g, b, Id(0, 0), 2, 10000, false, 60000, &r);
  // 1 is claimed, 2 is gone (counts toward COUNT): the cursor is 3.
  EXPECT_EQ(r.claimed, (std::vector<StreamId>{Id(1, 0)}));
  EXPECT_EQ(r.deleted, (std::vector<StreamId>{Id(2, 0)}));
  EXPECT_EQ(r.next, Id(3, 0));
  EXPECT_EQ(g->pel.count(Id(2, 0)), 0u);
  EXPECT_EQ(g->pel.at(Id(1, 0)).consumer, b);
  EXPECT_EQ(g->pel.at(Id(1, 0)).delivery_count, 2u);
  EXPECT_EQ(b->active_ms, 60000);

  StreamId cursor = r.next;
  r = StreamAutoClaimResult{};
  s.AutoClaim(g, b, cursor, 100, 20000, true, 60000, &r);  // 6..10 are idle 10000 only
  EXPECT_EQ(r.claimed, (std::vector<StreamId>{Id(3, 0), Id(4, 0), Id(5, 0)}));
  EXPECT_EQ(g->pel.at(Id(3, 0)).delivery_count, 1u);  // JUSTID
  EXPECT_EQ(r.next, StreamId::Min());                 // scanned to the end
  EXPECT_TRUE(r.deleted.empty());
}

TEST(StreamGroupTest, AutoClaimAttemptsAreBounded) {
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  AddIds(s, 1, 25);
  StreamGroup* g = s.CreateGroup("g", Id(0, 0), -1);
  StreamConsumer* a = s.TouchConsumer(g, "a", 0);
  StreamConsumer* b = s.TouchConsumer(g, "b", 0);
  ReadNew(s, g, a, 0, 1000);
  // Nothing is idle enough: COUNT 1 allows ten attempts, so the cursor is the 11th entry.
  StreamAutoClaimResult r;
  s.AutoClaim(g, b, Id(0, 0), 1, 5000, false, 2000, &r);
  EXPECT_TRUE(r.claimed.empty());
  EXPECT_EQ(r.next, Id(11, 0));
  // COUNT 2 with everything idle: two claimed, the cursor right after them.
  r = StreamAutoClaimResult{};
  s.AutoClaim(g, b, Id(11, 0), 2, 0, false, 2000, &r);
  EXPECT_EQ(r.claimed, (std::vector<StreamId>{Id(11, 0), Id(12, 0)}));
  EXPECT_EQ(r.next, Id(13, 0));
  EXPECT_EQ(b->pending.size(), 2u);
  EXPECT_EQ(a->pending.size(), 23u);
}

TEST(StreamGroupTest, LagFollowsRedis) {
  // Redis's "Consumer group lag with XDELs" sequence.
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  AddIds(s, 1, 5);
  ASSERT_TRUE(s.Delete(Id(3, 0)));
  StreamGroup* g1 = s.CreateGroup("g1", Id(0, 0), -1);
  StreamGroup* g2 = s.CreateGroup("g2", Id(0, 0), -1);
  StreamConsumer* c = s.TouchConsumer(g1, "c", 0);
  EXPECT_EQ(g1->entries_read, -1);
  EXPECT_EQ(Lag(s, *g1), -1);
  std::vector<int64_t> reads, lags;
  for (int i = 0; i < 4; i++) {
    ReadNew(s, g1, c, 1, 0);
    reads.push_back(g1->entries_read);
    lags.push_back(Lag(s, *g1));
  }
  EXPECT_EQ(reads, (std::vector<int64_t>{-1, -1, -1, 5}));
  EXPECT_EQ(lags, (std::vector<int64_t>{-1, -1, -1, 0}));
  StreamConsumer* c2 = s.TouchConsumer(g2, "c", 0);
  EXPECT_EQ(ReadNew(s, g2, c2, 0, 0).size(), 4u);
  EXPECT_EQ(g2->entries_read, 5);
  EXPECT_EQ(Lag(s, *g2), 0);
  AddIds(s, 6, 6);
  EXPECT_EQ(Lag(s, *g1), 1);
  ReadNew(s, g1, c, 1, 0);
  EXPECT_EQ(g1->entries_read, 6);
  EXPECT_EQ(Lag(s, *g1), 0);

  // Without deletions the counters are exact from the start.
  auto t_owner = std::make_unique<StreamObject>();
  StreamObject& t = *t_owner;
  AddIds(t, 1, 5);
  StreamGroup* g = t.CreateGroup("g", Id(0, 0), -1);
  EXPECT_EQ(Lag(t, *g), 5);
  StreamConsumer* tc = t.TouchConsumer(g, "c", 0);
  ReadNew(t, g, tc, 2, 0);
  EXPECT_EQ(g->entries_read, 2);
  EXPECT_EQ(Lag(t, *g), 3);
  // A group created at "$" reads as lag 0; one set past the end has no known lag.
  StreamGroup* at_end = t.CreateGroup("end", t.last_id(), -1);
  EXPECT_EQ(Lag(t, *at_end), 0);
  StreamGroup* future = t.CreateGroup("future", Id(99, 0), -1);
  EXPECT_EQ(Lag(t, *future), -1);
  // Trimming the head keeps the estimate: entries before the first are all counted.
  StreamTrimSpec trim;
  trim.strategy = StreamTrimSpec::kMaxLen;
  trim.max_len = 2;
  EXPECT_EQ(t.Trim(trim), 3u);
  StreamGroup* late = t.CreateGroup("late", Id(0, 0), -1);
  EXPECT_EQ(Lag(t, *late), 2);
  EXPECT_EQ(t.EstimateEntriesRead(Id(4, 0)), 4);
  EXPECT_EQ(t.EstimateEntriesRead(Id(5, 0)), 5);
  // g read 2 entries; 3 was trimmed since: the next read re-estimates.
  ReadNew(t, g, tc, 1, 0);
  EXPECT_EQ(g->last_id, Id(4, 0));
  EXPECT_EQ(g->entries_read, 4);
  EXPECT_EQ(Lag(t, *g), 1);
  // An empty, never-written stream has lag 0.
  auto u_owner = std::make_unique<StreamObject>();
  StreamObject& u = *u_owner;
  EXPECT_EQ(Lag(u, *u.CreateGroup("g", Id(0, 0), -1)), 0);
}

TEST(StreamGroupTest, RangeHasTombstones) {
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  AddIds(s, 1, 5);
  EXPECT_FALSE(s.RangeHasTombstones(StreamId::Min(), StreamId::Max()));
  ASSERT_TRUE(s.Delete(Id(3, 0)));
  EXPECT_TRUE(s.RangeHasTombstones(Id(2, 0), StreamId::Max()));
  EXPECT_TRUE(s.RangeHasTombstones(Id(3, 0), Id(3, 0)));
  EXPECT_FALSE(s.RangeHasTombstones(Id(4, 0), StreamId::Max()));
  EXPECT_FALSE(s.RangeHasTombstones(Id(1, 0), Id(2, 0)));
}

}  // namespace
}  // namespace strata
