// Sorted-set commands that touch one member or pop: ZADD, ZINCRBY, ZREM, ZCARD, ZSCORE,
// ZMSCORE, ZRANK, ZREVRANK, ZRANDMEMBER, ZSCAN, ZPOPMIN, ZPOPMAX and ZMPOP; the family's
// registration.
//
// Single-key commands run on the key's shard: reads through ZSetReader, writes through
// ZSetEditor (either form). ZMPOP over keys of several shards runs as a fiber that locks
// its keys, as LMPOP does. Commands that add members signal the key (Worker::
// SignalKeyReady) so that clients blocked in BZPOPMIN/BZPOPMAX/BZMPOP are served.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/glob.h"
#include "core/hash.h"
#include "core/string_util.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/commands/zset_args.h"
#include "server/commands/zset_ops.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/hops.h"
#include "server/engine/notify.h"
#include "server/engine/shard_groups.h"
#include "server/engine/try_lock_all.h"
#include "server/engine/worker.h"

namespace strata {

namespace {

// ---- ZADD / ZINCRBY ----

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...], and ZINCRBY key
// increment member (incr set, no options).
void ZAddGeneric(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb, bool zincrby) {
  int flags = zincrby ? kZAddIncr : 0;
  bool ch = false;
  size_t scoreidx = 2;
  if (!zincrby) {
    for (; scoreidx < args.size(); scoreidx++) {
      std::string_view opt = args[scoreidx];
      if (EqualsIgnoreCase(opt, "nx")) {
        flags |= kZAddNx;
      } else if (EqualsIgnoreCase(opt, "xx")) {
        flags |= kZAddXx;
      } else if (EqualsIgnoreCase(opt, "ch")) {
        ch = true;
      } else if (EqualsIgnoreCase(opt, "incr")) {
        flags |= kZAddIncr;
      } else if (EqualsIgnoreCase(opt, "gt")) {
        flags |= kZAddGt;
      } else if (EqualsIgnoreCase(opt, "lt")) {
        flags |= kZAddLt;
      } else {
        break;
      }
    }
  }
  size_t elements = args.size() - scoreidx;
  if (elements % 2 != 0 || elements == 0) {
    rb.Error(errors::kSyntax);
    return;
  }
  elements /= 2;
  bool nx = flags & kZAddNx, xx = flags & kZAddXx, gt = flags & kZAddGt, lt = flags & kZAddLt;
  bool incr = flags & kZAddIncr;
  if (nx && xx) {
    rb.Error("ERR XX and NX options at the same time are not compatible");
    return;
  }
  if ((gt && nx) || (lt && nx) || (gt && lt)) {
    rb.Error("ERR GT, LT, and/or NX options at the same time are not compatible");
    return;
  }
  if (incr && elements > 1) {
    rb.Error("ERR INCR option supports a single increment-element pair");
    return;
  }
  std::vector<ZMember> items(elements);
  for (size_t j = 0; j < elements; j++) {
    items[j].member = args[scoreidx + 1 + j * 2];
    if (!ParseZScore(args[scoreidx + j * 2], &items[j].score)) {
      rb.Error(errors::kNotFloat);
      return;
    }
  }
  ZAddParsed(ctx, rb, args[1], flags, ch, items);
}

void CmdZAdd(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) { ZAddGeneric(args, ctx, rb, false); }
void CmdZIncrBy(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) { ZAddGeneric(args, ctx, rb, true); }

// ---- ZREM ZCARD ZSCORE ZMSCORE ZRANK ----

void CmdZRem(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!LookupZSet(ctx, args[1], rb, &e, false)) return;
  if (e == nullptr) {
    rb.Integer(0);
    return;
  }
  int64_t removed = 0;
  ZSetEditor ed(ctx.ks, ctx.db, args[1], e);
  for (size_t i = 2; i < args.size(); i++) removed += ed.Remove(args[i]) ? 1 : 0;
  ed.Commit();
  if (removed == 0) {
    ctx.ks.NoChange(ctx.db, args[1]);
  } else {
    NotifyKeyspaceEvent(kNotifyZSet, "zrem", args[1], ctx.db);
    if (ctx.ks.FindMeta(ctx.db, args[1], ctx.now_ms, false) == nullptr)
      NotifyKeyspaceEvent(kNotifyGeneric, "del", args[1], ctx.db);
  }
  rb.Integer(removed);
}

void CmdZCard(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!LookupZSet(ctx, args[1], rb, &e)) return;
  rb.Integer(e == nullptr ? 0 : static_cast<int64_t>(ZSetLength(e)));
}

void CmdZScore(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!LookupZSet(ctx, args[1], rb, &e)) return;
  double s = 0;
  if (e == nullptr || !ZSetReader(e).Score(args[2], &s)) {
    rb.Null();
  } else {
    rb.Double(s);
  }
}

void CmdZMScore(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!LookupZSet(ctx, args[1], rb, &e)) return;
  rb.Array(args.size() - 2);
  if (e == nullptr) {
    for (size_t i = 2; i < args.size(); i++) rb.Null();
    return;
  }
  ZSetReader r(e);
  for (size_t i = 2; i < args.size(); i++) {
    double s = 0;
    if (r.Score(args[i], &s)) {
      rb.Double(s);
    } else {
      rb.Null();
    }
  }
}

// ZRANK/ZREVRANK key member [WITHSCORE] (WITHSCORE as in Redis 7.2).
void RankGeneric(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb, bool reverse) {
  if (args.size() > 4) {
    rb.Error(WrongArityError(args[0]));
    return;
  }
  bool withscore = false;
  if (args.size() == 4) {
    if (!EqualsIgnoreCase(args[3], "withscore")) {
      rb.Error(errors::kSyntax);
      return;
    }
    withscore = true;
  }
  Entry* e;
  if (!LookupZSet(ctx, args[1], rb, &e)) return;
  size_t rank = 0;
  double score = 0;
  if (e == nullptr) {
    withscore ? rb.NullArray() : rb.Null();
    return;
  }
  ZSetReader r(e);
  if (!r.Rank(args[2], &rank, &score)) {
    withscore ? rb.NullArray() : rb.Null();
    return;
  }
  if (reverse) rank = r.size() - 1 - rank;
  if (withscore) {
    rb.Array(2);
    rb.Integer(static_cast<int64_t>(rank));
    rb.Double(score);
  } else {
    rb.Integer(static_cast<int64_t>(rank));
  }
}

void CmdZRank(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) { RankGeneric(args, ctx, rb, false); }
void CmdZRevRank(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  RankGeneric(args, ctx, rb, true);
}

// ---- ZRANDMEMBER key [count [WITHSCORES]] ----

void CmdZRandMember(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  bool with_count = args.size() >= 3;
  int64_t count = 1;
  bool withscores = false;
  if (with_count) {
    if (!ParseZLong(args[2], rb, &count)) return;
    if (count == INT64_MIN) {
      rb.Error(
          "ERR value is out of range, value must between -9223372036854775807 and "
          "9223372036854775807");
      return;
    }
    if (args.size() > 4 || (args.size() == 4 && !EqualsIgnoreCase(args[3], "withscores"))) {
      rb.Error(errors::kSyntax);
      return;
    }
    if (args.size() == 4) {
      withscores = true;
      if (count < -(INT64_MAX / 2) || count > INT64_MAX / 2) {
        rb.Error("ERR value is out of range");
        return;
      }
    }
  }
  Entry* e;
  if (!LookupZSet(ctx, args[1], rb, &e)) return;
  if (e == nullptr) {
    with_count ? rb.Array(0) : rb.Null();
    return;
  }
  ZSetReader r(e);
  size_t n = r.size();
  if (!with_count) {
    rb.Bulk(r.At(ctx.worker.next_random() % n).member);
    return;
  }
  if (count == 0) {
    rb.Array(0);
    return;
  }
  ZRangeReply out(rb, withscores);
  if (count < 0) {
    size_t want = static_cast<size_t>(-count);
    out.Begin(want);
    for (size_t i = 0; i < want; i++) {
      ZMember m = r.At(ctx.worker.next_random() % n);
      out.Add(m.member, m.score);
    }
    return;
  }
  size_t want = static_cast<size_t>(count);
  if (want >= n) {
    // The whole set, in order (as Redis does).
    out.Begin(n);
    r.Walk(0, false, [&](std::string_view m, double s) {
      out.Add(m, s);
      return true;
    });
    return;
  }
  std::vector<size_t> picks;
  if (want * 3 > n) {
    // Partial Fisher-Yates over every rank.
    std::vector<size_t> ranks(n);
    for (size_t i = 0; i < n; i++) ranks[i] = i;
    for (size_t i = 0; i < want; i++) {
      size_t j = i + ctx.worker.next_random() % (n - i);
      std::swap(ranks[i], ranks[j]);
    }
    picks.assign(ranks.begin(), ranks.begin() + static_cast<std::ptrdiff_t>(want));
  } else {
    std::unordered_set<size_t> seen;
    while (picks.size() < want) {
      size_t k = ctx.worker.next_random() % n;
      if (seen.insert(k).second) picks.push_back(k);
    }
  }
  out.Begin(want);
  for (size_t k : picks) {
    ZMember m = r.At(k);
    out.Add(m.member, m.score);
  }
}

// ---- ZSCAN key cursor [MATCH pattern] [COUNT count] ----

void CmdZScan(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  uint64_t cursor = 0;
  if (!ParseUint64(args[2], &cursor)) {
    rb.Error("ERR invalid cursor");
    return;
  }
  Entry* e;
  if (!LookupZSet(ctx, args[1], rb, &e)) return;
  if (e == nullptr) {
    rb.Array(2);
    rb.Bulk("0");
    rb.Array(0);
    return;
  }
  std::string_view pattern;
  bool has_pattern = false;
  int64_t count = 10;
  for (size_t i = 3; i < args.size(); i += 2) {
    bool has_next = i + 1 < args.size();
    if (EqualsIgnoreCase(args[i], "count") && has_next) {
      if (!ParseZLong(args[i + 1], rb, &count)) return;
      if (count < 1) {
        rb.Error(errors::kSyntax);
        return;
      }
    } else if (EqualsIgnoreCase(args[i], "match") && has_next) {
      pattern = args[i + 1];
      has_pattern = !(pattern.size() == 1 && pattern[0] == '*');
    } else {
      rb.Error(errors::kSyntax);
      return;
    }
  }
  std::vector<std::pair<std::string, double>> found;
  auto take = [&](std::string_view m, double s) {
    if (has_pattern && !GlobMatch(pattern, m)) return;
    found.emplace_back(std::string(m), s);
  };
  uint64_t next = 0;
  if (e->IsExternal()) {
    Table& t = static_cast<ZSetObject*>(e->Object())->table();
    uint64_t p = cursor < Table::kCursorEnd ? cursor : 0;
    int64_t budget = count * 10;
    size_t visited = 0;
    do {
      p = t.ScanChunk(p, [&](Entry* m) {
        visited++;
        take(m->Key(), ZSetObject::ScoreOf(m));
        return false;
      });
    } while (p != 0 && static_cast<int64_t>(visited) < count && --budget > 0);
    next = p;
  } else {
    // Small sets are returned whole, as Redis does.
    ZSetReader(e).Walk(0, false, [&](std::string_view m, double s) {
      take(m, s);
      return true;
    });
  }
  rb.Array(2);
  rb.Bulk(std::to_string(next));
  rb.Array(found.size() * 2);
  for (auto& [m, s] : found) {
    rb.Bulk(m);
    rb.Bulk(DoubleToString(s));
  }
}

// ---- ZPOPMIN / ZPOPMAX key [count] ----

void PopGeneric(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb, bool max) {
  if (args.size() > 3) {
    rb.Error(errors::kSyntax);
    return;
  }
  int64_t count = -1;
  if (args.size() == 3 && (!ParseInt64(args[2], &count) || count < 0)) {
    rb.Error(zset_errors::kNotPositive);
    return;
  }
  bool nested = rb.resp() >= 3 && count != -1;
  Entry* e;
  if (!LookupZSet(ctx, args[1], rb, &e, false)) return;
  if (e == nullptr || count == 0) {
    rb.Array(0);
    return;
  }
  ZPopped got;
  {
    ZSetEditor ed(ctx.ks, ctx.db, args[1], e);
    ed.Pop(max, count < 0 ? 1 : static_cast<size_t>(count), &got);
    ed.Commit();
  }
  if (!got.empty()) NotifyZPopped(ctx.ks, ctx.db, args[1], max, ctx.now_ms);
  rb.Array(nested ? got.size() : got.size() * 2);
  for (auto& [m, s] : got) {
    if (nested) rb.Array(2);
    rb.Bulk(m);
    rb.Double(s);
  }
}

void CmdZPopMin(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) { PopGeneric(args, ctx, rb, false); }
void CmdZPopMax(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) { PopGeneric(args, ctx, rb, true); }

// ---- ZMPOP numkeys key [key ...] MIN|MAX [COUNT count] ----

struct ZMPopArgs {
  std::vector<std::string_view> keys;
  bool max = false;
  int64_t count = 1;
};

bool ParseZMPop(CmdArgs args, size_t first, ReplyBuilder& rb, ZMPopArgs* m) {
  int64_t numkeys = 0;
  if (!ParseInt64(args[first], &numkeys) || numkeys <= 0) {
    rb.Error("ERR numkeys should be greater than 0");
    return false;
  }
  if (static_cast<uint64_t>(numkeys) >= args.size() - first - 1) {
    rb.Error(errors::kSyntax);
    return false;
  }
  size_t i = first + 1;
  for (int64_t k = 0; k < numkeys; k++) m->keys.push_back(args[i++]);
  if (EqualsIgnoreCase(args[i], "min")) {
    m->max = false;
  } else if (EqualsIgnoreCase(args[i], "max")) {
    m->max = true;
  } else {
    rb.Error(errors::kSyntax);
    return false;
  }
  bool seen_count = false;
  for (i++; i < args.size(); i++) {
    if (!seen_count && EqualsIgnoreCase(args[i], "count") && i + 1 < args.size()) {
      if (!ParseInt64(args[++i], &m->count) || m->count <= 0) {
        rb.Error("ERR count should be greater than 0");
        return false;
      }
      seen_count = true;
    } else {
      rb.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

void ReplyZMPop(ReplyBuilder& rb, std::string_view key, const ZPopped& got) {
  rb.Array(2);
  rb.Bulk(key);
  rb.Array(got.size());
  for (auto& [m, s] : got) {
    rb.Array(2);
    rb.Bulk(m);
    rb.Double(s);
  }
}

void CmdZMPop(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  ZMPopArgs m;
  if (!ParseZMPop(args, 1, rb, &m)) return;
  for (std::string_view key : m.keys) {
    bool wrong = false;
    ZPopped got =
        OpZPop(ctx.ks, ctx.db, key, m.max, static_cast<size_t>(m.count), ctx.now_ms, &wrong);
    if (wrong) {
      rb.Error(errors::kWrongType);
      return;
    }
    if (!got.empty()) {
      ReplyZMPop(rb, key, got);
      return;
    }
  }
  rb.NullArray();
}

Fiber ZMPopFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  ZMPopArgs m;
  if (!ParseZMPop(args, 1, rb, &m)) {
    c->FinishFiber(std::move(out));
    co_return;
  }
  uint32_t db = c->db;
  uint32_t n = c->worker().engine().shard_count();
  ShardGroups g = GroupByShard(m.keys, db, n, true, c->txn_owner);
  if (!co_await TryLockAll(g)) {
    for (size_t i = 0; i < g.shards.size(); i++) co_await LockOn(g.shards[i], &g.locks[i]);
  }
  bool wrong = false;
  ZPopped got;
  std::string_view from;
  for (std::string_view key : m.keys) {
    co_await RunOn(std::vector<uint32_t>(1, ShardOfKey(key, n)), [&](Worker& w) {
      got = OpZPop(w.keyspace(), db, key, m.max, static_cast<size_t>(m.count), w.now_ms(), &wrong);
    });
    if (wrong || !got.empty()) {
      from = key;
      break;
    }
  }
  if (wrong || got.empty()) FiberChangesNothing();
  co_await RunOn(g.shards,
                 [&](Worker& w) { w.locks().Release(g.locks[g.IndexOf(w.index())].keys, true); });
  if (wrong) {
    rb.Error(errors::kWrongType);
  } else if (got.empty()) {
    rb.NullArray();
  } else {
    ReplyZMPop(rb, from, got);
  }
  c->FinishFiber(std::move(out));
}

}  // namespace

void ZAddParsed(ShardCtx& ctx, ReplyBuilder& rb, std::string_view key, int flags, bool ch,
                const std::vector<ZMember>& items) {
  bool xx = flags & kZAddXx, incr = flags & kZAddIncr;
  Entry* e;
  if (!LookupZSet(ctx, key, rb, &e, false)) return;
  if (e == nullptr && xx) {
    incr ? rb.Null() : rb.Integer(0);
    return;
  }
  int64_t added = 0, updated = 0, processed = 0;
  double score = 0;
  bool nan = false;
  {
    ZSetEditor ed(ctx.ks, ctx.db, key, e);
    for (const ZMember& m : items) {
      int out = 0;
      double newscore = 0;
      if (!ed.Add(m.member, m.score, flags, &out, &newscore)) {
        nan = true;
        break;
      }
      if (out & kZAddAdded) added++;
      if (out & kZAddUpdated) updated++;
      if (!(out & kZAddNop)) {
        processed++;
        score = newscore;
      }
    }
    ed.Commit();
  }
  if (nan) {
    rb.Error(zset_errors::kNaN);
  } else if (incr) {
    processed > 0 ? rb.Double(score) : rb.Null();
  } else {
    rb.Integer(ch ? added + updated : added);
  }
  if (added > 0 || updated > 0) {
    NotifyKeyspaceEvent(kNotifyZSet, incr ? "zincr" : "zadd", key, ctx.db);
    ctx.worker.SignalKeyReady(ctx.db, key);
  } else if (e != nullptr) {
    ctx.ks.NoChange(ctx.db, key);  // every member kept its score (WATCH)
  }
}

void RegisterZSetFamily(CommandRegistry& r) {
  constexpr uint32_t kW = kCmdWrite | kCmdDenyOom | kCmdSortedSet;
  constexpr uint32_t kD = kCmdWrite | kCmdSortedSet;  // writes that only remove
  constexpr uint32_t kR = kCmdReadOnly | kCmdSortedSet;
  auto add = [&](const char* name, int arity, uint32_t flags, int first, int last, ShardFn fn,
                 FiberFn fiber, const char* since, const char* summary) {
    CommandSpec s{name, arity, flags, first, last, 1};
    s.shard_fn = fn;
    s.fiber_fn = fiber;
    s.group = "sorted-set";
    s.since = since;
    s.summary = summary;
    r.Add(std::move(s));
  };
  add("zadd", -4, kW | kCmdFast, 1, 1, CmdZAdd, nullptr, "1.2.0",
      "Adds one or more members to a sorted set, or updates their scores. Creates the key if it "
      "doesn't exist.");
  add("zincrby", 4, kW | kCmdFast, 1, 1, CmdZIncrBy, nullptr, "1.2.0",
      "Increments the score of a member in a sorted set.");
  add("zrem", -3, kD | kCmdFast, 1, 1, CmdZRem, nullptr, "1.2.0",
      "Removes one or more members from a sorted set. Deletes the sorted set if all members were "
      "removed.");
  add("zcard", 2, kR | kCmdFast, 1, 1, CmdZCard, nullptr, "1.2.0",
      "Returns the number of members in a sorted set.");
  add("zscore", 3, kR | kCmdFast, 1, 1, CmdZScore, nullptr, "1.2.0",
      "Returns the score of a member in a sorted set.");
  add("zmscore", -3, kR | kCmdFast, 1, 1, CmdZMScore, nullptr, "6.2.0",
      "Returns the score of one or more members in a sorted set.");
  add("zrank", -3, kR | kCmdFast, 1, 1, CmdZRank, nullptr, "2.0.0",
      "Returns the index of a member in a sorted set ordered by ascending scores.");
  add("zrevrank", -3, kR | kCmdFast, 1, 1, CmdZRevRank, nullptr, "2.0.0",
      "Returns the index of a member in a sorted set ordered by descending scores.");
  add("zrandmember", -2, kR, 1, 1, CmdZRandMember, nullptr, "6.2.0",
      "Returns one or more random members from a sorted set.");
  add("zscan", -3, kR, 1, 1, CmdZScan, nullptr, "2.8.0",
      "Iterates over members and scores of a sorted set.");
  add("zpopmin", -2, kD | kCmdFast, 1, 1, CmdZPopMin, nullptr, "5.0.0",
      "Returns the lowest-scoring members from a sorted set after removing them. Deletes the "
      "sorted set if the last member was popped.");
  add("zpopmax", -2, kD | kCmdFast, 1, 1, CmdZPopMax, nullptr, "5.0.0",
      "Returns the highest-scoring members from a sorted set after removing them. Deletes the "
      "sorted set if the last member was popped.");
  // ZMPOP's keys follow numkeys; routing takes every argument after it as a key, which
  // only ever sends a call to the fiber, where the arguments are parsed properly.
  add("zmpop", -4, kD, 2, -1, CmdZMPop, ZMPopFiber, "7.0.0",
      "Returns the highest- or lowest-scoring members from one or more sorted sets after "
      "removing them. Deletes the sorted set if the last member was popped.");
  RegisterZSetRangeCommands(r);
  RegisterZSetAlgebraCommands(r);
  RegisterZSetBlockingCommands(r);
}

}  // namespace strata
