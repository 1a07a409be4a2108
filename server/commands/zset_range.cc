// Sorted-set commands over a range of ranks, scores or members: ZRANGE (BYSCORE BYLEX REV
// LIMIT WITHSCORES), ZRANGESTORE, ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE,
// ZRANGEBYLEX, ZREVRANGEBYLEX, ZCOUNT, ZLEXCOUNT, ZREMRANGEBYRANK, ZREMRANGEBYSCORE and
// ZREMRANGEBYLEX.
//
// Argument parsing follows Redis's zrangeGenericCommand step by step (options, then
// conflicts, then the range, then the key), so the same call fails with the same error. A
// range becomes a pair of ranks (ZScoreRanks/ZLexRanks: two O(log n) searches on a big
// set), and the members are walked from there. ZRANGESTORE with its two keys on different
// shards runs as a fiber that locks both, copies the range off the source's shard and
// writes it on the destination's.
#include <string>
#include <tuple>
#include <utility>
#include <vector>

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

enum class RangeType { kAuto, kRank, kScore, kLex };
enum class Direction { kAuto, kForward, kReverse };

struct ZRangeSpec {
  RangeType type = RangeType::kRank;
  bool reverse = false;
  bool withscores = false;
  int64_t offset = 0;
  int64_t limit = -1;  // negative: no limit
  int64_t start = 0, end = 0;
  ZScoreRange score;
  ZLexRange lex;
  std::string_view key;
};

// Redis's zrangeGenericCommand, steps 1 and 2. argc_start is the source key's position.
bool ParseZRange(CmdArgs args, size_t argc_start, bool store, RangeType type, Direction dir,
                 ReplyBuilder& rb, ZRangeSpec* spec) {
  spec->key = args[argc_start];
  size_t minidx = argc_start + 1, maxidx = argc_start + 2;
  bool has_limit = false;
  for (size_t j = argc_start + 3; j < args.size(); j++) {
    size_t leftargs = args.size() - j - 1;
    if (!store && EqualsIgnoreCase(args[j], "withscores")) {
      spec->withscores = true;
    } else if (EqualsIgnoreCase(args[j], "limit") && leftargs >= 2) {
      if (!ParseZLong(args[j + 1], rb, &spec->offset) ||
          !ParseZLong(args[j + 2], rb, &spec->limit)) {
        return false;
      }
      has_limit = true;
      j += 2;
    } else if (dir == Direction::kAuto && EqualsIgnoreCase(args[j], "rev")) {
      dir = Direction::kReverse;
    } else if (type == RangeType::kAuto && EqualsIgnoreCase(args[j], "bylex")) {
      type = RangeType::kLex;
    } else if (type == RangeType::kAuto && EqualsIgnoreCase(args[j], "byscore")) {
      type = RangeType::kScore;
    } else {
      rb.Error(errors::kSyntax);
      return false;
    }
  }
  if (dir == Direction::kAuto) dir = Direction::kForward;
  if (type == RangeType::kAuto) type = RangeType::kRank;
  // Redis tests the limit against its "not given" value of -1.
  if (has_limit && spec->limit != -1 && type == RangeType::kRank) {
    rb.Error(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
    return false;
  }
  if (spec->withscores && type == RangeType::kLex) {
    rb.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
    return false;
  }
  spec->type = type;
  spec->reverse = dir == Direction::kReverse;
  if (spec->reverse && type != RangeType::kRank) std::swap(minidx, maxidx);
  switch (type) {
    case RangeType::kAuto:
    case RangeType::kRank:
      return ParseZLong(args[minidx], rb, &spec->start) && ParseZLong(args[maxidx], rb, &spec->end);
    case RangeType::kScore:
      if (!ParseZScoreRange(args[minidx], args[maxidx], &spec->score)) {
        rb.Error(zset_errors::kMinMaxNotFloat);
        return false;
      }
      return true;
    case RangeType::kLex:
      if (!ParseZLexRange(args[minidx], args[maxidx], &spec->lex)) {
        rb.Error(zset_errors::kNotLexRange);
        return false;
      }
      return true;
  }
  return true;
}

// Normalizes a rank range [start, end] against len as Redis does; false when empty.
bool NormalizeRanks(int64_t* start, int64_t* end, int64_t len) {
  if (*start < 0) *start += len;
  if (*end < 0) *end += len;
  if (*start < 0) *start = 0;
  if (*start > *end || *start >= len) return false;
  if (*end >= len) *end = len - 1;
  return true;
}

// The members of the range, in reply order (views valid until the shard's next write).
void CollectZRange(const ZSetReader& r, const ZRangeSpec& spec, std::vector<ZMember>* out) {
  int64_t len = static_cast<int64_t>(r.size());
  if (len == 0) return;
  if (spec.type == RangeType::kRank) {
    int64_t start = spec.start, end = spec.end;
    if (!NormalizeRanks(&start, &end, len)) return;
    size_t n = static_cast<size_t>(end - start + 1);
    size_t from = static_cast<size_t>(spec.reverse ? len - 1 - start : start);
    out->reserve(n);
    r.Walk(from, spec.reverse, [&](std::string_view m, double s) {
      out->push_back(ZMember{m, s});
      return out->size() < n;
    });
    return;
  }
  std::pair<size_t, size_t> ranks =
      spec.type == RangeType::kScore ? ZScoreRanks(r, spec.score) : ZLexRanks(r, spec.lex);
  size_t count = ranks.second - ranks.first;
  // A negative offset skips everything, a negative limit takes everything (Redis's loops).
  if (count == 0 || spec.offset < 0 || static_cast<uint64_t>(spec.offset) >= count) return;
  size_t avail = count - static_cast<size_t>(spec.offset);
  size_t n = spec.limit < 0 ? avail : std::min(avail, static_cast<size_t>(spec.limit));
  if (n == 0) return;
  size_t from = spec.reverse ? ranks.second - 1 - static_cast<size_t>(spec.offset)
                             : ranks.first + static_cast<size_t>(spec.offset);
  out->reserve(n);
  r.Walk(from, spec.reverse, [&](std::string_view m, double s) {
    out->push_back(ZMember{m, s});
    return out->size() < n;
  });
}

void ReplyRange(ReplyBuilder& rb, const ZRangeSpec& spec, const std::vector<ZMember>& items) {
  ZRangeReply out(rb, spec.withscores);
  out.Begin(items.size());
  for (const ZMember& m : items) out.Add(m.member, m.score);
}

void RangeGeneric(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb, RangeType type, Direction dir) {
  ZRangeSpec spec;
  if (!ParseZRange(args, 1, false, type, dir, rb, &spec)) return;
  Entry* e;
  if (!LookupZSet(ctx, spec.key, rb, &e)) return;
  std::vector<ZMember> items;
  if (e != nullptr) CollectZRange(ZSetReader(e), spec, &items);
  ReplyRange(rb, spec, items);
}

void CmdZRange(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  RangeGeneric(args, ctx, rb, RangeType::kAuto, Direction::kAuto);
}
void CmdZRevRange(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  RangeGeneric(args, ctx, rb, RangeType::kRank, Direction::kReverse);
}
void CmdZRangeByScore(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  RangeGeneric(args, ctx, rb, RangeType::kScore, Direction::kForward);
}
void CmdZRevRangeByScore(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  RangeGeneric(args, ctx, rb, RangeType::kScore, Direction::kReverse);
}
void CmdZRangeByLex(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  RangeGeneric(args, ctx, rb, RangeType::kLex, Direction::kForward);
}
void CmdZRevRangeByLex(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  RangeGeneric(args, ctx, rb, RangeType::kLex, Direction::kReverse);
}

// ---- ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count] ----

void CmdZRangeStore(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  ZRangeSpec spec;
  if (!ParseZRange(args, 2, true, RangeType::kAuto, Direction::kAuto, rb, &spec)) return;
  Entry* e;
  if (!LookupZSet(ctx, spec.key, rb, &e)) return;
  std::vector<ZMember> items;
  std::vector<std::string> copies;  // the source's views die when the destination is written
  if (e != nullptr) {
    CollectZRange(ZSetReader(e), spec, &items);
    copies.reserve(items.size());
    for (ZMember& m : items) {
      copies.emplace_back(m.member);
      m.member = copies.back();
    }
  }
  StoreZSetAndNotify(ctx.ks, ctx.db, "zrangestore", args[1], &items, ctx.now_ms);
  rb.Integer(static_cast<int64_t>(items.size()));
  if (!items.empty()) ctx.worker.SignalKeyReady(ctx.db, args[1]);
}

Fiber ZRangeStoreFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  ZRangeSpec spec;
  if (!ParseZRange(args, 2, true, RangeType::kAuto, Direction::kAuto, rb, &spec)) {
    c->FinishFiber(std::move(out));
    co_return;
  }
  uint32_t db = c->db;
  uint32_t n = c->worker().engine().shard_count();
  std::vector<std::string_view> keys = {args[1], args[2]};
  ShardGroups g = GroupByShard(keys, db, n, true, c->txn_owner);
  if (!co_await TryLockAll(g)) {
    for (size_t i = 0; i < g.shards.size(); i++) co_await LockOn(g.shards[i], &g.locks[i]);
  }
  bool wrong = false;
  std::vector<std::pair<std::string, double>> copied;
  uint32_t src = ShardOfKey(args[2], n);
  uint32_t dst = ShardOfKey(args[1], n);
  bool dst_exists = false;
  co_await RunOn(g.shards, [&](Worker& w) {
    if (w.index() == dst) dst_exists = w.keyspace().FindMeta(db, args[1], w.now_ms()) != nullptr;
    if (w.index() != src) return;
    Entry* e = w.keyspace().FindRead(db, args[2], w.now_ms());
    if (e == nullptr) return;
    if (e->Type() != ValueType::kZSet) {
      wrong = true;
      return;
    }
    std::vector<ZMember> items;
    CollectZRange(ZSetReader(e), spec, &items);
    copied.reserve(items.size());
    for (const ZMember& m : items) copied.emplace_back(std::string(m.member), m.score);
  });
  // An error, or an empty range with no destination to delete, changes nothing.
  if (wrong || (copied.empty() && !dst_exists)) FiberChangesNothing();
  co_await RunOn(g.shards, [&](Worker& w) {
    if (!wrong && w.index() == dst) {
      std::vector<ZMember> items;
      items.reserve(copied.size());
      for (auto& [m, s] : copied) items.push_back(ZMember{m, s});
      StoreZSetAndNotify(w.keyspace(), db, "zrangestore", args[1], &items, w.now_ms());
      if (!items.empty()) w.SignalKeyReady(db, args[1]);
    }
    w.locks().Release(g.locks[g.IndexOf(w.index())].keys, true);
  });
  if (wrong) {
    rb.Error(errors::kWrongType);
  } else {
    rb.Integer(static_cast<int64_t>(copied.size()));
  }
  c->FinishFiber(std::move(out));
}

// ---- ZCOUNT / ZLEXCOUNT ----

void CmdZCount(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  ZScoreRange range;
  if (!ParseZScoreRange(args[2], args[3], &range)) {
    rb.Error(zset_errors::kMinMaxNotFloat);
    return;
  }
  Entry* e;
  if (!LookupZSet(ctx, args[1], rb, &e)) return;
  if (e == nullptr) {
    rb.Integer(0);
    return;
  }
  auto [first, last] = ZScoreRanks(ZSetReader(e), range);
  rb.Integer(static_cast<int64_t>(last - first));
}

void CmdZLexCount(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  ZLexRange range;
  if (!ParseZLexRange(args[2], args[3], &range)) {
    rb.Error(zset_errors::kNotLexRange);
    return;
  }
  Entry* e;
  if (!LookupZSet(ctx, args[1], rb, &e)) return;
  if (e == nullptr) {
    rb.Integer(0);
    return;
  }
  auto [first, last] = ZLexRanks(ZSetReader(e), range);
  rb.Integer(static_cast<int64_t>(last - first));
}

// ---- ZREMRANGEBYRANK / ZREMRANGEBYSCORE / ZREMRANGEBYLEX ----

void RemRangeGeneric(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb, RangeType type) {
  int64_t start = 0, end = 0;
  ZScoreRange score;
  ZLexRange lex;
  if (type == RangeType::kRank) {
    if (!ParseZLong(args[2], rb, &start) || !ParseZLong(args[3], rb, &end)) return;
  } else if (type == RangeType::kScore) {
    if (!ParseZScoreRange(args[2], args[3], &score)) {
      rb.Error(zset_errors::kMinMaxNotFloat);
      return;
    }
  } else if (!ParseZLexRange(args[2], args[3], &lex)) {
    rb.Error(zset_errors::kNotLexRange);
    return;
  }
  Entry* e;
  if (!LookupZSet(ctx, args[1], rb, &e, false)) return;
  if (e == nullptr) {
    rb.Integer(0);
    return;
  }
  size_t first = 0, last = 0;  // [first, last)
  {
    ZSetReader r(e);
    if (type == RangeType::kRank) {
      if (NormalizeRanks(&start, &end, static_cast<int64_t>(r.size()))) {
        first = static_cast<size_t>(start);
        last = static_cast<size_t>(end) + 1;
      }
    } else {
      std::tie(first, last) = type == RangeType::kScore ? ZScoreRanks(r, score) : ZLexRanks(r, lex);
    }
  }
  if (last > first) {
    ZSetEditor ed(ctx.ks, ctx.db, args[1], e);
    ed.RemoveRanks(first, last - 1);
    ed.Commit();
    NotifyKeyspaceEvent(kNotifyZSet, Lowercase(args[0]), args[1], ctx.db);
    if (ctx.ks.FindMeta(ctx.db, args[1], ctx.now_ms, false) == nullptr)
      NotifyKeyspaceEvent(kNotifyGeneric, "del", args[1], ctx.db);
  } else {
    ctx.ks.NoChange(ctx.db, args[1]);
  }
  rb.Integer(static_cast<int64_t>(last - first));
}

void CmdZRemRangeByRank(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  RemRangeGeneric(args, ctx, rb, RangeType::kRank);
}
void CmdZRemRangeByScore(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  RemRangeGeneric(args, ctx, rb, RangeType::kScore);
}
void CmdZRemRangeByLex(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  RemRangeGeneric(args, ctx, rb, RangeType::kLex);
}

}  // namespace

void RegisterZSetRangeCommands(CommandRegistry& r) {
  constexpr uint32_t kR = kCmdReadOnly | kCmdSortedSet;
  constexpr uint32_t kD = kCmdWrite | kCmdSortedSet;
  auto add = [&](const char* name, int arity, uint32_t flags, int last, ShardFn fn, FiberFn fiber,
                 const char* since, const char* summary) {
    CommandSpec s{name, arity, flags, 1, last, 1};
    s.shard_fn = fn;
    s.fiber_fn = fiber;
    s.group = "sorted-set";
    s.since = since;
    s.summary = summary;
    r.Add(std::move(s));
  };
  add("zrange", -4, kR, 1, CmdZRange, nullptr, "1.2.0",
      "Returns members in a sorted set within a range of indexes.");
  add("zrangestore", -5, kCmdWrite | kCmdDenyOom | kCmdSortedSet, 2, CmdZRangeStore,
      ZRangeStoreFiber, "6.2.0", "Stores a range of members from sorted set in a key.");
  add("zrevrange", -4, kR, 1, CmdZRevRange, nullptr, "1.2.0",
      "Returns members in a sorted set within a range of indexes in reverse order.");
  add("zrangebyscore", -4, kR, 1, CmdZRangeByScore, nullptr, "1.0.5",
      "Returns members in a sorted set within a range of scores.");
  add("zrevrangebyscore", -4, kR, 1, CmdZRevRangeByScore, nullptr, "2.2.0",
      "Returns members in a sorted set within a range of scores in reverse order.");
  add("zrangebylex", -4, kR, 1, CmdZRangeByLex, nullptr, "2.8.9",
      "Returns members in a sorted set within a lexicographical range.");
  add("zrevrangebylex", -4, kR, 1, CmdZRevRangeByLex, nullptr, "2.8.9",
      "Returns members in a sorted set within a lexicographical range in reverse order.");
  add("zcount", 4, kR | kCmdFast, 1, CmdZCount, nullptr, "2.0.0",
      "Returns the count of members in a sorted set that have scores within a range.");
  add("zlexcount", 4, kR | kCmdFast, 1, CmdZLexCount, nullptr, "2.8.9",
      "Returns the number of members in a sorted set within a lexicographical range.");
  add("zremrangebyrank", 4, kD, 1, CmdZRemRangeByRank, nullptr, "2.0.0",
      "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all "
      "members were removed.");
  add("zremrangebyscore", 4, kD, 1, CmdZRemRangeByScore, nullptr, "1.2.0",
      "Removes members in a sorted set within a range of scores. Deletes the sorted set if all "
      "members were removed.");
  add("zremrangebylex", 4, kD, 1, CmdZRemRangeByLex, nullptr, "2.8.9",
      "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if "
      "all members were removed.");
}

}  // namespace strata
