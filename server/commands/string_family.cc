// String commands. Single-key commands run on the key's shard (shard_fn); MGET, MSET
// and MSETNX also have fibers for keys spread over several shards (see lock_table.h
// for how those stay atomic).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "core/string_util.h"
#include "server/base/config.h"
#include "server/commands/arg_parsers.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
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

constexpr std::string_view kTooBig = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

uint64_t MaxStringLen(ShardCtx& ctx) {
  return static_cast<uint64_t>(ctx.worker.engine().config().proto_max_bulk_len().load());
}

// Looks a key up for reading; replies WRONGTYPE and returns false for a non-string.
// Inlined: it is GET's whole lookup, and a call costs more than its body.
[[gnu::always_inline]] inline bool ReadString(ShardCtx& ctx, std::string_view key, ReplyBuilder& rb,
                                              Entry** out, bool count_stats = true) {
  Entry* e =
      count_stats ? ctx.ks.FindRead(ctx.db, key, ctx.now_ms) : ctx.ks.Find(ctx.db, key, ctx.now_ms);
  if (e != nullptr && e->Type() != ValueType::kString) {
    rb.Error(errors::kWrongType);
    return false;
  }
  if (count_stats && e == nullptr) NotifyKeyspaceEvent(kNotifyKeyMiss, "keymiss", key, ctx.db);
  *out = e;
  return true;
}

void CmdGet(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!ReadString(ctx, args[1], rb, &e)) return;
  if (e == nullptr) {
    rb.Null();
  } else {
    rb.BulkValue(*e);
  }
}

struct SetOptions {
  bool nx = false, xx = false, get = false, keepttl = false, persist = false;
  int64_t expire_ms = Entry::kNoExpire;
  bool has_expire = false;
};

// Parses SET/GETEX flags from args[first..]. For GETEX (getex=true) PERSIST is allowed
// and NX/XX/GET/KEEPTTL are not. Expire values are validated later (validate()).
struct ParsedExpire {
  std::string_view value;
  ExpireUnit unit = ExpireUnit::kSeconds;
  bool absolute = false;
};

bool ParseSetFlags(CmdArgs args, size_t first, bool getex, SetOptions* o, ParsedExpire* pe,
                   ReplyBuilder& rb) {
  for (size_t i = first; i < args.size(); i++) {
    std::string_view a = args[i];
    bool has_next = i + 1 < args.size();
    if (!getex && EqualsIgnoreCase(a, "nx") && !o->xx) {
      o->nx = true;
    } else if (!getex && EqualsIgnoreCase(a, "xx") && !o->nx) {
      o->xx = true;
    } else if (!getex && EqualsIgnoreCase(a, "get")) {
      o->get = true;
    } else if (!getex && EqualsIgnoreCase(a, "keepttl") && !o->has_expire) {
      o->keepttl = true;
    } else if (getex && EqualsIgnoreCase(a, "persist") && !o->has_expire) {
      o->persist = true;
    } else if ((EqualsIgnoreCase(a, "ex") || EqualsIgnoreCase(a, "px") ||
                EqualsIgnoreCase(a, "exat") || EqualsIgnoreCase(a, "pxat")) &&
               !o->keepttl && !o->persist && !o->has_expire && has_next) {
      o->has_expire = true;
      pe->unit = (a[0] == 'p' || a[0] == 'P') ? ExpireUnit::kMilliseconds : ExpireUnit::kSeconds;
      pe->absolute = a.size() == 4;
      pe->value = args[++i];
    } else {
      rb.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

void CmdSet(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  SetOptions o;
  ParsedExpire pe;
  if (args.size() > 3 && !ParseSetFlags(args, 3, false, &o, &pe, rb)) return;
  if (o.has_expire &&
      !ParseExpireArg(pe.value, pe.unit, pe.absolute, ctx.now_ms, "set", rb, &o.expire_ms))
    return;
  std::string_view key = args[1];
  Entry* old = nullptr;
  if (g_notify_gate.load(std::memory_order_relaxed) & (kNotifyExpired | kNotifyNew)) [[unlikely]] {
    // An expired key is deleted (and "expired" published) before the write, as Redis's
    // lookup does; the write then creates the key anew ("new").
    ctx.ks.FindMeta(ctx.db, key, ctx.now_ms, false);
  }
  if (o.get || o.nx || o.xx || o.keepttl) {
    // Only GET needs the old value: a cold one is not read back for NX, XX, KEEPTTL.
    old = o.get ? ctx.ks.Find(ctx.db, key, ctx.now_ms)
                : ctx.ks.FindMeta(ctx.db, key, ctx.now_ms, false, /*touch=*/true);
    if (o.get && old != nullptr && old->Type() != ValueType::kString) {
      rb.Error(errors::kWrongType);
      return;
    }
  }
  std::optional<std::string> old_value;
  if (o.get && old != nullptr) old_value = old->ValueString();
  if ((o.nx && old != nullptr) || (o.xx && old == nullptr)) {
    if (o.get) {
      old_value ? rb.Bulk(*old_value) : rb.Null();
    } else {
      rb.Null();
    }
    return;
  }
  int64_t expire = o.expire_ms;
  if (o.keepttl && old != nullptr) expire = old->ExpireMs();
  // A time already past is stored as given, as Redis 7.0 does: the key is gone at its
  // next lookup (or the active cycle), which publishes "expired".
  ctx.ks.SetString(ctx.db, key, args[2], expire);
  NotifyKeyspaceEvent(kNotifyString, "set", key, ctx.db);
  if (o.has_expire) NotifyKeyspaceEvent(kNotifyGeneric, "expire", key, ctx.db);
  if (o.get) {
    old_value ? rb.Bulk(*old_value) : rb.Null();
  } else {
    rb.Ok();
  }
}

void CmdSetNx(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  if (ctx.ks.FindMeta(ctx.db, args[1], ctx.now_ms, false, /*touch=*/true) != nullptr) {
    rb.Integer(0);
    return;
  }
  ctx.ks.SetString(ctx.db, args[1], args[2], Entry::kNoExpire);
  NotifyKeyspaceEvent(kNotifyString, "set", args[1], ctx.db);
  rb.Integer(1);
}

void SetWithTtl(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb, ExpireUnit unit,
                std::string_view cmd) {
  int64_t at = 0;
  if (!ParseExpireArg(args[2], unit, false, ctx.now_ms, cmd, rb, &at)) return;
  ctx.ks.SetString(ctx.db, args[1], args[3], at);
  NotifyKeyspaceEvent(kNotifyString, "set", args[1], ctx.db);
  NotifyKeyspaceEvent(kNotifyGeneric, "expire", args[1], ctx.db);
  rb.Ok();
}

void CmdSetEx(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  SetWithTtl(args, ctx, rb, ExpireUnit::kSeconds, "setex");
}

void CmdPSetEx(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  SetWithTtl(args, ctx, rb, ExpireUnit::kMilliseconds, "psetex");
}

void CmdGetSet(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!ReadString(ctx, args[1], rb, &e)) return;
  if (e == nullptr) {
    rb.Null();
  } else {
    rb.BulkValue(*e);
  }
  ctx.ks.SetString(ctx.db, args[1], args[2], Entry::kNoExpire);
  NotifyKeyspaceEvent(kNotifyString, "set", args[1], ctx.db);
}

void CmdGetDel(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!ReadString(ctx, args[1], rb, &e)) return;
  if (e == nullptr) {
    rb.Null();
    return;
  }
  rb.BulkValue(*e);
  ctx.ks.Delete(ctx.db, args[1]);
  NotifyKeyspaceEvent(kNotifyGeneric, "del", args[1], ctx.db);
}

void CmdGetEx(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  SetOptions o;
  ParsedExpire pe;
  if (!ParseSetFlags(args, 2, true, &o, &pe, rb)) return;
  Entry* e;
  if (!ReadString(ctx, args[1], rb, &e)) return;
  if (e == nullptr) {
    rb.Null();
    return;
  }
  int64_t at = 0;
  if (o.has_expire && !ParseExpireArg(pe.value, pe.unit, pe.absolute, ctx.now_ms, "getex", rb, &at))
    return;
  rb.BulkValue(*e);
  if (o.has_expire) {
    if (ctx.ExpiryAlreadyPast(at)) {
      ctx.ks.Delete(ctx.db, args[1]);
      NotifyKeyspaceEvent(kNotifyGeneric, "del", args[1], ctx.db);
    } else {
      ctx.ks.SetExpire(ctx.db, args[1], at);
      NotifyKeyspaceEvent(kNotifyGeneric, "expire", args[1], ctx.db);
    }
  } else if (o.persist && e->HasExpire()) {
    ctx.ks.SetExpire(ctx.db, args[1], Entry::kNoExpire);
    NotifyKeyspaceEvent(kNotifyGeneric, "persist", args[1], ctx.db);
  }
}

void CmdStrlen(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  // The length is in the entry, hot or cold: a spilled value stays on disk.
  Entry* e = ctx.ks.FindMeta(ctx.db, args[1], ctx.now_ms);
  if (e != nullptr && e->Type() != ValueType::kString) {
    rb.Error(errors::kWrongType);
    return;
  }
  rb.Integer(e == nullptr ? 0 : e->ValueLen());
}

void CmdAppend(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!ReadString(ctx, args[1], rb, &e, false)) return;
  if (e == nullptr) {
    ctx.ks.SetString(ctx.db, args[1], args[2], Entry::kNoExpire);
    NotifyKeyspaceEvent(kNotifyString, "append", args[1], ctx.db);
    rb.Integer(static_cast<int64_t>(args[2].size()));
    return;
  }
  uint64_t old = e->ValueLen();
  uint64_t total = old + args[2].size();
  if (total > MaxStringLen(ctx)) {
    rb.Error(kTooBig);
    return;
  }
  // In place, with room kept as the value grows: appending costs O(bytes appended).
  e = ctx.ks.StringForWrite(ctx.db, args[1], e, total);
  if (!args[2].empty()) std::memcpy(e->MutableValue() + old, args[2].data(), args[2].size());
  NotifyKeyspaceEvent(kNotifyString, "append", args[1], ctx.db);
  rb.Integer(static_cast<int64_t>(total));
}

void IncrBy(std::string_view key, int64_t by, bool is_decrby_min, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!ReadString(ctx, key, rb, &e, false)) return;
  int64_t cur = 0;
  std::string scratch;
  if (e != nullptr && !ParseInt64(e->Value(&scratch), &cur)) {
    rb.Error(errors::kNotInteger);
    return;
  }
  if (is_decrby_min) {
    rb.Error("ERR decrement would overflow");
    return;
  }
  if ((by < 0 && cur < 0 && by < INT64_MIN - cur) || (by > 0 && cur > 0 && by > INT64_MAX - cur)) {
    rb.Error(errors::kOverflow);
    return;
  }
  int64_t v = cur + by;
  std::string s = IntToString(v);
  ctx.ks.SetString(ctx.db, key, s, e ? e->ExpireMs() : Entry::kNoExpire);
  NotifyKeyspaceEvent(kNotifyString, "incrby", key, ctx.db);
  rb.Integer(v);
}

void CmdIncr(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) { IncrBy(args[1], 1, false, ctx, rb); }
void CmdDecr(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) { IncrBy(args[1], -1, false, ctx, rb); }

void CmdIncrBy(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  int64_t by = 0;
  if (!ParseInt64(args[2], &by)) {
    rb.Error(errors::kNotInteger);
    return;
  }
  IncrBy(args[1], by, false, ctx, rb);
}

void CmdDecrBy(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  int64_t by = 0;
  if (!ParseInt64(args[2], &by)) {
    rb.Error(errors::kNotInteger);
    return;
  }
  if (by == INT64_MIN) {
    IncrBy(args[1], 0, true, ctx, rb);
    return;
  }
  IncrBy(args[1], -by, false, ctx, rb);
}

void CmdIncrByFloat(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!ReadString(ctx, args[1], rb, &e, false)) return;
  long double cur = 0;
  long double by = 0;
  std::string scratch;
  if (e != nullptr && !ParseLongDouble(e->Value(&scratch), &cur)) {
    rb.Error(errors::kNotFloat);
    return;
  }
  if (!ParseLongDouble(args[2], &by)) {
    rb.Error(errors::kNotFloat);
    return;
  }
  long double v = cur + by;
  if (std::isnan(v) || std::isinf(v)) {
    rb.Error("ERR increment would produce NaN or Infinity");
    return;
  }
  std::string s = LongDoubleToHuman(v);
  ctx.ks.SetString(ctx.db, args[1], s, e ? e->ExpireMs() : Entry::kNoExpire);
  NotifyKeyspaceEvent(kNotifyString, "incrbyfloat", args[1], ctx.db);
  rb.Bulk(s);
}

void CmdGetRange(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  int64_t start = 0;
  int64_t end = 0;
  if (!ParseInt64(args[2], &start) || !ParseInt64(args[3], &end)) {
    rb.Error(errors::kNotInteger);
    return;
  }
  Entry* e;
  if (!ReadString(ctx, args[1], rb, &e)) return;
  if (e == nullptr) {
    rb.Bulk("");
    return;
  }
  int64_t len = e->ValueLen();
  if (start < 0 && end < 0 && start > end) {
    rb.Bulk("");
    return;
  }
  if (start < 0) start = len + start;
  if (end < 0) end = len + end;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= len) end = len - 1;
  if (start > end || len == 0) {
    rb.Bulk("");
    return;
  }
  std::string scratch;
  rb.Bulk(
      e->Value(&scratch).substr(static_cast<size_t>(start), static_cast<size_t>(end - start + 1)));
}

void CmdSetRange(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  int64_t offset = 0;
  if (!ParseInt64(args[2], &offset)) {
    rb.Error(errors::kNotInteger);
    return;
  }
  if (offset < 0) {
    rb.Error("ERR offset is out of range");
    return;
  }
  Entry* e;
  if (!ReadString(ctx, args[1], rb, &e, false)) return;
  std::string_view value = args[3];
  if (value.empty()) {
    rb.Integer(e == nullptr ? 0 : e->ValueLen());
    return;
  }
  if (static_cast<uint64_t>(offset) + value.size() > MaxStringLen(ctx)) {
    rb.Error(kTooBig);
    return;
  }
  // In place: the cost is the bytes written (and any zeros added), not the value's size.
  size_t need = static_cast<size_t>(offset) + value.size();
  e = ctx.ks.StringForWrite(ctx.db, args[1], e, need);
  std::memcpy(e->MutableValue() + offset, value.data(), value.size());
  NotifyKeyspaceEvent(kNotifyString, "setrange", args[1], ctx.db);
  rb.Integer(static_cast<int64_t>(e->ValueLen()));
}

// ---- multi-key: single-shard fast paths ----

void CmdMGet(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  rb.Array(args.size() - 1);
  for (size_t i = 1; i < args.size(); i++) {
    // The lookups of the next run of keys are prefetched together (a big table misses
    // the caches on each; Keyspace::PrefetchKeys).
    if ((i - 1) % Table::kLookaheadMax == 0)
      ctx.ks.PrefetchKeys(ctx.db, &args[i], std::min(Table::kLookaheadMax, args.size() - i));
    Entry* e = ctx.ks.FindRead(ctx.db, args[i], ctx.now_ms);
    if (e == nullptr) NotifyKeyspaceEvent(kNotifyKeyMiss, "keymiss", args[i], ctx.db);
    if (e == nullptr || e->Type() != ValueType::kString) {
      rb.Null();
    } else {
      rb.BulkValue(*e);
    }
  }
}

// MSET's keys, every other argument from i, written one after another: the next
// Table::kLookaheadMax of them have their lookups prefetched together
// (Keyspace::PrefetchKeys), so that their cache misses overlap.
void PrefetchPairRun(const Keyspace& ks, uint32_t db, CmdArgs args, size_t i) {
  std::string_view run[Table::kLookaheadMax];
  size_t m = 0;
  for (size_t k = i; k + 1 < args.size() && m < Table::kLookaheadMax; k += 2) run[m++] = args[k];
  ks.PrefetchKeys(db, run, m);
}

void CmdMSet(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  if (args.size() % 2 == 0) {
    rb.Error(WrongArityError(args[0]));
    return;
  }
  for (size_t i = 1; i + 1 < args.size(); i += 2) {
    if ((i - 1) / 2 % Table::kLookaheadMax == 0) PrefetchPairRun(ctx.ks, ctx.db, args, i);
    ctx.ks.SetString(ctx.db, args[i], args[i + 1], Entry::kNoExpire);
    NotifyKeyspaceEvent(kNotifyString, "set", args[i], ctx.db);
  }
  rb.Ok();
}

void CmdMSetNx(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  if (args.size() % 2 == 0) {
    rb.Error(WrongArityError(args[0]));
    return;
  }
  for (size_t i = 1; i + 1 < args.size(); i += 2) {
    if (ctx.ks.FindMeta(ctx.db, args[i], ctx.now_ms) != nullptr) {
      rb.Integer(0);
      return;
    }
  }
  for (size_t i = 1; i + 1 < args.size(); i += 2) {
    if ((i - 1) / 2 % Table::kLookaheadMax == 0) PrefetchPairRun(ctx.ks, ctx.db, args, i);
    ctx.ks.SetString(ctx.db, args[i], args[i + 1], Entry::kNoExpire);
    NotifyKeyspaceEvent(kNotifyString, "set", args[i], ctx.db);
  }
  rb.Integer(1);
}

// ---- multi-key across shards ----

// MGET's calls over several shards: one call (`one`), or a pipelined run of calls (`run`,
// FiberRun). Every key of every call is read under one set of shared locks, usually in
// one round trip; each call's reply is put together from its keys' pieces. A run whose
// locks are not all free at once (a writer holds or waits for one of its keys) reads
// call by call instead, each call as its own fiber would: a run never waits for more
// locks at a time than one call.
Fiber MGetCalls(Client* c, std::shared_ptr<OwnedArgs> one, std::shared_ptr<FiberRun> run) {
  const size_t ncalls = run != nullptr ? run->calls.size() : 1;
  uint32_t db = c->db;
  const uint32_t shard_count = c->worker().engine().shard_count();
  // The keys of all the calls, one after another; ends[i]: where call i's keys end.
  std::vector<std::string_view> keys;
  std::vector<size_t> ends(ncalls);
  if (run == nullptr) {
    CmdArgs args = one->span();
    keys.assign(args.begin() + 1, args.end());
    ends[0] = keys.size();
  } else {
    size_t total = 0;
    for (const auto& call : run->calls) total += call->views.size() - 1;
    keys.reserve(total);
    for (size_t i = 0; i < ncalls; i++) {
      CmdArgs args = run->calls[i]->span();
      keys.insert(keys.end(), args.begin() + 1, args.end());
      ends[i] = keys.size();
    }
  }
  // Each shard writes its keys' replies into a buffer of its own (one per group, not one
  // string per value); the replies are then put together in key order.
  struct Piece {
    uint32_t part;
    size_t off;
    size_t len;
  };
  std::vector<std::string> parts;
  std::vector<Piece> pieces(keys.size());
  int resp = c->resp;
  // On a group's shard: reads the keys of group gi of g, whose positions index `sub`
  // (keys[base...]), into parts[part0 + gi].
  auto read = [&](const ShardGroups& g, const std::vector<std::string_view>& sub, size_t base,
                  size_t part0, Worker& w, size_t gi) {
    std::string& part = parts[part0 + gi];
    part.clear();
    ReplyBuilder prb(&part, resp);
    const std::vector<size_t>& positions = g.positions[gi];
    for (size_t j = 0; j < positions.size(); j++) {
      if (j % Table::kLookaheadMax == 0) PrefetchGroupRun(w.keyspace(), db, sub, positions, j);
      size_t p = positions[j];
      size_t start = part.size();
      Entry* e = w.keyspace().FindRead(db, sub[p], w.now_ms());
      if (e == nullptr) NotifyKeyspaceEvent(kNotifyKeyMiss, "keymiss", sub[p], db);
      if (e != nullptr && e->Type() == ValueType::kString) {
        prb.BulkValue(*e);
      } else {
        prb.Null();
      }
      pieces[base + p] = Piece{static_cast<uint32_t>(part0 + gi), start, part.size() - start};
    }
  };
  // Usually one round trip: every shard takes its shared locks and reads at once
  // (try_lock_all.h), and the locks are let go without waiting.
  ShardGroups g = GroupByShard(keys, db, shard_count, false, c->txn_owner);
  parts.resize(g.shards.size());
  auto step = [&](Worker& w, size_t gi) { read(g, keys, 0, 0, w, gi); };
  if (co_await TryLockAll(g, step)) {
    ReleaseAll(g);
  } else if (run == nullptr) {
    for (size_t i = 0; i < g.shards.size(); i++) co_await LockOn(g.shards[i], &g.locks[i]);
    co_await RunOn(g.shards, [&](Worker& w) {
      size_t gi = g.IndexOf(w.index());
      step(w, gi);
      w.locks().Release(g.locks[gi].keys, false);
    });
  } else {
    for (size_t i = 0, from = 0; i < ncalls; from = ends[i], i++) {
      std::vector<std::string_view> sub(keys.begin() + from, keys.begin() + ends[i]);
      ShardGroups gc = GroupByShard(sub, db, shard_count, false, c->txn_owner);
      size_t part0 = parts.size();
      parts.resize(part0 + gc.shards.size());
      auto call_step = [&](Worker& w, size_t gi) { read(gc, sub, from, part0, w, gi); };
      if (co_await TryLockAll(gc, call_step)) {
        ReleaseAll(gc);
        continue;
      }
      for (size_t k = 0; k < gc.shards.size(); k++) co_await LockOn(gc.shards[k], &gc.locks[k]);
      co_await RunOn(gc.shards, [&](Worker& w) {
        size_t gi = gc.IndexOf(w.index());
        call_step(w, gi);
        w.locks().Release(gc.locks[gi].keys, false);
      });
    }
  }
  std::vector<std::string> replies(ncalls);
  size_t from = 0;
  for (size_t i = 0; i < ncalls; i++) {
    std::string& out = replies[i];
    size_t total = 16;  // the array's header
    for (size_t k = from; k < ends[i]; k++) total += pieces[k].len;
    out.reserve(total);
    ReplyBuilder rb(&out, resp);
    rb.Array(ends[i] - from);
    for (size_t k = from; k < ends[i]; k++)
      out.append(parts[pieces[k].part], pieces[k].off, pieces[k].len);
    from = ends[i];
  }
  if (run == nullptr) {
    c->FinishFiber(std::move(replies[0]));
  } else {
    c->FinishFiberRun(std::move(replies));
  }
}

Fiber MGetFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  return MGetCalls(c, std::move(owned), nullptr);
}

Fiber MGetRunFiber(Client* c, std::shared_ptr<FiberRun> run) {
  return MGetCalls(c, nullptr, std::move(run));
}

// MSET's or MSETNX's calls over several shards: one call (`one`), or a pipelined run of
// MSET calls (`run`, FiberRun). Every key of every call is locked at once; each shard
// then writes its keys in the order the calls gave them (so a key set twice keeps the
// later value) and lets its locks go. A call whose arguments do not pair up is answered
// with its error and writes nothing. A run whose locks are not all free at once writes
// call by call instead, each call as its own fiber would: a run never waits for more
// locks at a time than one call, so contended keys cost no more than without runs.
Fiber MSetCalls(Client* c, std::shared_ptr<OwnedArgs> one, std::shared_ptr<FiberRun> run) {
  const size_t ncalls = run != nullptr ? run->calls.size() : 1;
  auto call = [&](size_t i) { return run != nullptr ? run->calls[i]->span() : one->span(); };
  std::vector<std::string> replies(ncalls);
  bool nx = EqualsIgnoreCase(call(0)[0], "msetnx");  // a run is of MSET only
  uint32_t db = c->db;
  const uint32_t shard_count = c->worker().engine().shard_count();
  // The pairs of all the calls, one after another; ends[i]: where call i's pairs end.
  std::vector<std::string_view> keys;
  std::vector<std::string_view> vals;
  std::vector<size_t> ends(ncalls);
  size_t pairs = 0;
  for (size_t i = 0; i < ncalls; i++) pairs += call(i).size() / 2;
  keys.reserve(pairs);
  vals.reserve(pairs);
  for (size_t i = 0; i < ncalls; i++) {
    CmdArgs args = call(i);
    if (args.size() % 2 == 0) {
      ReplyBuilder(&replies[i], c->resp).Error(WrongArityError(args[0]));
    } else {
      for (size_t k = 1; k + 1 < args.size(); k += 2) {
        keys.push_back(args[k]);
        vals.push_back(args[k + 1]);
      }
    }
    ends[i] = keys.size();
  }
  bool any_exists = false;
  // On each shard of g: writes its keys (positions index sub_keys and sub_vals) unless an
  // MSETNX found one, then lets the locks go.
  auto write = [&](const ShardGroups& g, const std::vector<std::string_view>& sub_keys,
                   const std::vector<std::string_view>& sub_vals) -> RunOn {
    return RunOn(g.shards, [&](Worker& w) {
      size_t gi = g.IndexOf(w.index());
      if (!any_exists) {
        // Positions are in argument order, so a key given twice keeps its last value.
        const std::vector<size_t>& positions = g.positions[gi];
        for (size_t j = 0; j < positions.size(); j++) {
          if (j % Table::kLookaheadMax == 0)
            PrefetchGroupRun(w.keyspace(), db, sub_keys, positions, j);
          size_t p = positions[j];
          w.keyspace().SetString(db, sub_keys[p], sub_vals[p], Entry::kNoExpire);
          NotifyKeyspaceEvent(kNotifyString, "set", sub_keys[p], db);
        }
      }
      w.locks().Release(g.locks[gi].keys, true);
    });
  };
  if (!keys.empty()) {
    ShardGroups g = GroupByShard(keys, db, shard_count, true, c->txn_owner);
    if (co_await TryLockAll(g)) {
      // Held: written below.
    } else if (run == nullptr) {
      for (size_t i = 0; i < g.shards.size(); i++) co_await LockOn(g.shards[i], &g.locks[i]);
    } else {
      // Contended: call by call, each locked, written and let go before the next.
      for (size_t i = 0, from = 0; i < ncalls; from = ends[i], i++) {
        if (from == ends[i]) continue;  // its error
        std::vector<std::string_view> sub_keys(keys.begin() + from, keys.begin() + ends[i]);
        std::vector<std::string_view> sub_vals(vals.begin() + from, vals.begin() + ends[i]);
        ShardGroups gc = GroupByShard(sub_keys, db, shard_count, true, c->txn_owner);
        if (!co_await TryLockAll(gc)) {
          for (size_t k = 0; k < gc.shards.size(); k++) co_await LockOn(gc.shards[k], &gc.locks[k]);
        }
        co_await write(gc, sub_keys, sub_vals);
      }
      g.shards.clear();  // nothing of g is held
    }
    if (nx) {
      std::vector<char> exists(g.shards.size(), 0);
      co_await RunOn(g.shards, [&](Worker& w) {
        size_t gi = g.IndexOf(w.index());
        for (size_t p : g.positions[gi]) {
          if (w.keyspace().FindMeta(db, keys[p], w.now_ms()) != nullptr) exists[gi] = 1;
        }
      });
      for (char e : exists) any_exists |= e != 0;
      if (any_exists) FiberChangesNothing();
    }
    if (!g.shards.empty()) co_await write(g, keys, vals);
  }
  for (std::string& reply : replies) {
    if (!reply.empty()) continue;  // its error
    ReplyBuilder rb(&reply, c->resp);
    if (nx) {
      rb.Integer(any_exists ? 0 : 1);
    } else {
      rb.Ok();
    }
  }
  if (run == nullptr) {
    c->FinishFiber(std::move(replies[0]));
  } else {
    c->FinishFiberRun(std::move(replies));
  }
}

Fiber MSetFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  return MSetCalls(c, std::move(owned), nullptr);
}

Fiber MSetRunFiber(Client* c, std::shared_ptr<FiberRun> run) {
  return MSetCalls(c, nullptr, std::move(run));
}

}  // namespace

void RegisterStringFamily(CommandRegistry& r) {
  constexpr uint32_t kW = kCmdWrite | kCmdDenyOom | kCmdString;
  constexpr uint32_t kR = kCmdReadOnly | kCmdString;
  auto add = [&](const char* name, int arity, uint32_t flags, int first, int last, int step,
                 ShardFn fn, FiberFn fiber = nullptr, const char* summary = "") {
    CommandSpec s{name, arity, flags, first, last, step};
    s.shard_fn = fn;
    s.fiber_fn = fiber;
    s.group = "string";
    s.summary = summary;
    r.Add(std::move(s));
  };
  add("get", 2, kR | kCmdFast, 1, 1, 1, CmdGet, nullptr, "Returns the string value of a key.");
  add("set", -3, kW, 1, 1, 1, CmdSet, nullptr, "Sets the string value of a key.");
  add("setnx", 3, kW | kCmdFast, 1, 1, 1, CmdSetNx);
  add("setex", 4, kW, 1, 1, 1, CmdSetEx);
  add("psetex", 4, kW, 1, 1, 1, CmdPSetEx);
  add("getset", 3, kW | kCmdFast, 1, 1, 1, CmdGetSet);
  add("getdel", 2, kCmdWrite | kCmdFast | kCmdString, 1, 1, 1, CmdGetDel);
  add("getex", -2, kCmdWrite | kCmdFast | kCmdString, 1, 1, 1, CmdGetEx);
  add("strlen", 2, kR | kCmdFast, 1, 1, 1, CmdStrlen);
  add("append", 3, kW | kCmdFast, 1, 1, 1, CmdAppend);
  add("incr", 2, kW | kCmdFast, 1, 1, 1, CmdIncr);
  add("decr", 2, kW | kCmdFast, 1, 1, 1, CmdDecr);
  add("incrby", 3, kW | kCmdFast, 1, 1, 1, CmdIncrBy);
  add("decrby", 3, kW | kCmdFast, 1, 1, 1, CmdDecrBy);
  add("incrbyfloat", 3, kW | kCmdFast, 1, 1, 1, CmdIncrByFloat);
  add("getrange", 4, kR, 1, 1, 1, CmdGetRange);
  add("substr", 4, kR, 1, 1, 1, CmdGetRange);
  add("setrange", 4, kW, 1, 1, 1, CmdSetRange);
  add("mget", -2, kR | kCmdFast, 1, -1, 1, CmdMGet, MGetFiber);
  add("mset", -3, kW, 1, -1, 2, CmdMSet, MSetFiber);
  add("msetnx", -3, kW, 1, -1, 2, CmdMSetNx, MSetFiber);
  // Pipelined calls over several shards run together (FiberRun; not MSETNX, whose calls
  // each decide from their own keys whether to write).
  r.FindMutable("mget")->fiber_run_fn = MGetRunFiber;
  r.FindMutable("mset")->fiber_run_fn = MSetRunFiber;
}

}  // namespace strata
