// List commands. Single-key commands run on the key's shard through the Op* functions of
// list_ops.h. LMOVE/RPOPLPUSH and LMPOP touch several keys: on one shard they run there
// directly; across shards a fiber locks the keys (as every multi-key command does) and
// hops to each shard in turn, so the move is atomic. The blocking forms live in
// blocking_family.cc.
#include <string>
#include <vector>

#include "core/hash.h"
#include "core/list_type.h"
#include "core/string_util.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/commands/list_ops.h"
#include "server/commands/lookup.h"
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

bool LookupList(ShardCtx& ctx, std::string_view key, ReplyBuilder& rb, Entry** out,
                bool read = true) {
  return LookupTyped(ctx, key, ValueType::kList, rb, out, read);
}

void Push(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb, bool left, bool only_if_exists) {
  bool wrong = false;
  int64_t n =
      OpPush(ctx.ks, ctx.db, args[1], left, args.subspan(2), only_if_exists, ctx.now_ms, &wrong);
  if (wrong) {
    rb.Error(errors::kWrongType);
    return;
  }
  rb.Integer(n);
  if (n > 0) ctx.worker.SignalKeyReady(ctx.db, args[1]);
}

void CmdLPush(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) { Push(args, ctx, rb, true, false); }
void CmdRPush(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) { Push(args, ctx, rb, false, false); }
void CmdLPushX(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) { Push(args, ctx, rb, true, true); }
void CmdRPushX(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) { Push(args, ctx, rb, false, true); }

void Pop(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb, bool left) {
  bool with_count = args.size() == 3;
  int64_t count = 1;
  if (args.size() > 3) {
    rb.Error(WrongArityError(args[0]));
    return;
  }
  if (with_count && (!ParseInt64(args[2], &count) || count < 0)) {
    rb.Error("ERR value is out of range, must be positive");
    return;
  }
  bool wrong = false;
  Entry* e = ctx.ks.FindRead(ctx.db, args[1], ctx.now_ms);
  if (e != nullptr && e->Type() != ValueType::kList) {
    rb.Error(errors::kWrongType);
    return;
  }
  if (e == nullptr) {
    with_count ? rb.NullArray() : rb.Null();
    return;
  }
  std::vector<std::string> got =
      OpPop(ctx.ks, ctx.db, args[1], left, static_cast<size_t>(count), ctx.now_ms, &wrong);
  if (!with_count) {
    rb.Bulk(got[0]);
    return;
  }
  rb.Array(got.size());
  for (auto& s : got) rb.Bulk(s);
}

void CmdLPop(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) { Pop(args, ctx, rb, true); }
void CmdRPop(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) { Pop(args, ctx, rb, false); }

void CmdLLen(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!LookupList(ctx, args[1], rb, &e)) return;
  rb.Integer(e == nullptr ? 0 : static_cast<int64_t>(list_access::Length(e)));
}

// Normalizes [start, stop] against len like Redis; false when the range is empty.
bool NormalizeRange(int64_t* start, int64_t* stop, int64_t len) {
  if (*start < 0) *start += len;
  if (*stop < 0) *stop += len;
  if (*start < 0) *start = 0;
  if (*start > *stop || *start >= len) return false;
  if (*stop >= len) *stop = len - 1;
  return true;
}

// Elements [start, stop] (inclusive, normalized) of list e.
void RangeOf(const Entry* e, int64_t start, int64_t stop, std::vector<std::string>* out) {
  size_t n = static_cast<size_t>(stop - start + 1);
  if (e->IsExternal()) {
    static_cast<ListObject*>(e->Object())
        ->Walk(static_cast<size_t>(start), false, [&](std::string_view v) {
          out->emplace_back(v);
          return out->size() < n;
        });
    return;
  }
  std::vector<std::string> all = list_access::Elements(e);
  for (int64_t i = start; i <= stop; i++) out->push_back(std::move(all[static_cast<size_t>(i)]));
}

void CmdLRange(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  int64_t start = 0, stop = 0;
  if (!ParseInt64(args[2], &start) || !ParseInt64(args[3], &stop)) {
    rb.Error(errors::kNotInteger);
    return;
  }
  Entry* e;
  if (!LookupList(ctx, args[1], rb, &e)) return;
  if (e == nullptr ||
      !NormalizeRange(&start, &stop, static_cast<int64_t>(list_access::Length(e)))) {
    rb.Array(0);
    return;
  }
  std::vector<std::string> out;
  RangeOf(e, start, stop, &out);
  rb.Array(out.size());
  for (auto& s : out) rb.Bulk(s);
}

void CmdLIndex(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  int64_t index = 0;
  if (!ParseInt64(args[2], &index)) {
    rb.Error(errors::kNotInteger);
    return;
  }
  Entry* e;
  if (!LookupList(ctx, args[1], rb, &e)) return;
  int64_t len = e == nullptr ? 0 : static_cast<int64_t>(list_access::Length(e));
  if (index < 0) index += len;
  if (e == nullptr || index < 0 || index >= len) {
    rb.Null();
    return;
  }
  std::vector<std::string> out;
  RangeOf(e, index, index, &out);
  rb.Bulk(out[0]);
}

void CmdLSet(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  int64_t index = 0;
  if (!ParseInt64(args[2], &index)) {
    rb.Error(errors::kNotInteger);
    return;
  }
  Entry* e;
  if (!LookupList(ctx, args[1], rb, &e, false)) return;
  if (e == nullptr) {
    rb.Error(errors::kNoSuchKey);
    return;
  }
  int64_t len = static_cast<int64_t>(list_access::Length(e));
  if (index < 0) index += len;
  if (index < 0 || index >= len) {
    rb.Error("ERR index out of range");
    return;
  }
  if (e->IsExternal()) {
    auto* l = static_cast<ListObject*>(e->Object());
    size_t before = l->Bytes();
    l->Set(static_cast<size_t>(index), args[3]);
    ctx.ks.Recharge(e, before);
  } else {
    OpRewrite(ctx.ks, ctx.db, args[1], e, [&](std::vector<std::string>& v) {
      v[static_cast<size_t>(index)].assign(args[3]);
      return true;
    });
  }
  NotifyKeyspaceEvent(kNotifyList, "lset", args[1], ctx.db);
  rb.Ok();
}

void CmdLInsert(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  bool before;
  if (EqualsIgnoreCase(args[2], "before")) {
    before = true;
  } else if (EqualsIgnoreCase(args[2], "after")) {
    before = false;
  } else {
    rb.Error(errors::kSyntax);
    return;
  }
  Entry* e;
  if (!LookupList(ctx, args[1], rb, &e, false)) return;
  if (e == nullptr) {
    rb.Integer(0);
    return;
  }
  int64_t result = -1;
  OpRewrite(ctx.ks, ctx.db, args[1], e, [&](std::vector<std::string>& v) {
    for (size_t i = 0; i < v.size(); i++) {
      if (v[i] == args[3]) {
        v.insert(v.begin() + static_cast<std::ptrdiff_t>(before ? i : i + 1), std::string(args[4]));
        result = static_cast<int64_t>(v.size());
        return true;
      }
    }
    return false;
  });
  rb.Integer(result);
  if (result > 0) {
    NotifyKeyspaceEvent(kNotifyList, "linsert", args[1], ctx.db);
    ctx.worker.SignalKeyReady(ctx.db, args[1]);
  } else {
    ctx.ks.NoChange(ctx.db, args[1]);  // no pivot (WATCH)
  }
}

void CmdLRem(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  int64_t count = 0;
  if (!ParseInt64(args[2], &count)) {
    rb.Error(errors::kNotInteger);
    return;
  }
  Entry* e;
  if (!LookupList(ctx, args[1], rb, &e, false)) return;
  if (e == nullptr) {
    rb.Integer(0);
    return;
  }
  if (e->IsExternal()) {
    // Looked for in place first: a list without the element is not copied to find that.
    bool found = false;
    static_cast<ListObject*>(e->Object())->Walk(0, false, [&](std::string_view v) {
      found = v == args[3];
      return !found;
    });
    if (!found) {
      ctx.ks.NoChange(ctx.db, args[1]);
      rb.Integer(0);
      return;
    }
  }
  int64_t removed = 0;
  OpRewrite(ctx.ks, ctx.db, args[1], e, [&](std::vector<std::string>& v) {
    uint64_t limit =
        count == 0 ? UINT64_MAX
                   : (count < 0 ? 0 - static_cast<uint64_t>(count) : static_cast<uint64_t>(count));
    std::vector<bool> drop(v.size(), false);
    if (count >= 0) {
      for (size_t i = 0; i < v.size() && static_cast<uint64_t>(removed) < limit; i++) {
        if (v[i] == args[3]) drop[i] = true, removed++;
      }
    } else {
      for (size_t i = v.size(); i-- > 0 && static_cast<uint64_t>(removed) < limit;) {
        if (v[i] == args[3]) drop[i] = true, removed++;
      }
    }
    if (removed == 0) return false;
    std::vector<std::string> keep;
    keep.reserve(v.size() - static_cast<size_t>(removed));
    for (size_t i = 0; i < v.size(); i++) {
      if (!drop[i]) keep.push_back(std::move(v[i]));
    }
    v.swap(keep);
    return true;
  });
  if (removed == 0) {
    ctx.ks.NoChange(ctx.db, args[1]);
  } else {
    NotifyKeyspaceEvent(kNotifyList, "lrem", args[1], ctx.db);
    if (ctx.ks.FindMeta(ctx.db, args[1], ctx.now_ms, false) == nullptr)
      NotifyKeyspaceEvent(kNotifyGeneric, "del", args[1], ctx.db);
  }
  rb.Integer(removed);
}

void CmdLTrim(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  int64_t start = 0, stop = 0;
  if (!ParseInt64(args[2], &start) || !ParseInt64(args[3], &stop)) {
    rb.Error(errors::kNotInteger);
    return;
  }
  Entry* e;
  if (!LookupList(ctx, args[1], rb, &e, false)) return;
  if (e != nullptr) {
    int64_t len = static_cast<int64_t>(list_access::Length(e));
    bool keep = NormalizeRange(&start, &stop, len);
    // Redis publishes ltrim even when nothing was trimmed.
    NotifyKeyspaceEvent(kNotifyList, "ltrim", args[1], ctx.db);
    if (!keep) {
      ctx.ks.Delete(ctx.db, args[1]);
      NotifyKeyspaceEvent(kNotifyGeneric, "del", args[1], ctx.db);
    } else if (start > 0 || stop < len - 1) {
      if (e->IsExternal()) {
        // Pop from both ends: no rebuild of the untouched middle.
        auto* l = static_cast<ListObject*>(e->Object());
        size_t before = l->Bytes();
        for (int64_t i = 0; i < start; i++) l->PopFront();
        for (int64_t i = stop + 1; i < len; i++) l->PopBack();
        ctx.ks.Recharge(e, before);
      } else {
        OpRewrite(ctx.ks, ctx.db, args[1], e, [&](std::vector<std::string>& v) {
          v.erase(v.begin() + stop + 1, v.end());
          v.erase(v.begin(), v.begin() + start);
          return true;
        });
      }
    }
  }
  rb.Ok();
}

void CmdLPos(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  int64_t rank = 1, count = -1, maxlen = 0;
  for (size_t i = 3; i < args.size(); i++) {
    bool has_next = i + 1 < args.size();
    int64_t* target = nullptr;
    if (EqualsIgnoreCase(args[i], "rank") && has_next) {
      target = &rank;
    } else if (EqualsIgnoreCase(args[i], "count") && has_next) {
      target = &count;
    } else if (EqualsIgnoreCase(args[i], "maxlen") && has_next) {
      target = &maxlen;
    } else {
      rb.Error(errors::kSyntax);
      return;
    }
    if (!ParseInt64(args[++i], target)) {
      // Redis answers a bad COUNT/MAXLEN with the "negative" text too.
      if (target == &count) {
        rb.Error("ERR COUNT can't be negative");
      } else if (target == &maxlen) {
        rb.Error("ERR MAXLEN can't be negative");
      } else {
        rb.Error(errors::kNotInteger);
      }
      return;
    }
    if (target == &rank && rank == 0) {
      rb.Error(
          "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or "
          "use negative to start from the end of the list");
      return;
    }
    if (target == &rank && rank == INT64_MIN) {
      rb.Error(
          "ERR value is out of range, value must between -9223372036854775807 and "
          "9223372036854775807");
      return;
    }
    if (target == &count && count < 0) {
      rb.Error("ERR COUNT can't be negative");
      return;
    }
    if (target == &maxlen && maxlen < 0) {
      rb.Error("ERR MAXLEN can't be negative");
      return;
    }
  }
  bool with_count = count >= 0;
  Entry* e;
  if (!LookupList(ctx, args[1], rb, &e)) return;
  if (e == nullptr) {
    with_count ? rb.Array(0) : rb.Null();
    return;
  }
  int64_t len = static_cast<int64_t>(list_access::Length(e));
  std::vector<int64_t> found;
  int64_t want = with_count ? (count == 0 ? INT64_MAX : count) : 1;
  int64_t skip = (rank > 0 ? rank : -rank) - 1;
  int64_t scanned = 0;
  int64_t step = rank > 0 ? 1 : -1;
  int64_t i = rank > 0 ? 0 : len - 1;
  // Visits elements from the chosen end until MAXLEN, COUNT or the end: the cost follows
  // what is scanned, not the list's length.
  auto visit = [&](std::string_view v) {
    if (maxlen != 0 && scanned >= maxlen) return false;
    scanned++;
    int64_t at = i;
    i += step;
    if (v != args[2]) return true;
    if (skip > 0) {
      skip--;
      return true;
    }
    found.push_back(at);
    return static_cast<int64_t>(found.size()) < want;
  };
  if (e->IsExternal()) {
    static_cast<ListObject*>(e->Object())->Walk(static_cast<size_t>(i), rank < 0, visit);
  } else {
    std::vector<std::string> all = list_access::Elements(e);  // a small list: one node
    for (int64_t k = 0; k < len; k++) {
      if (!visit(all[static_cast<size_t>(rank > 0 ? k : len - 1 - k)])) break;
    }
  }
  if (!with_count) {
    found.empty() ? rb.Null() : rb.Integer(found[0]);
    return;
  }
  rb.Array(found.size());
  for (int64_t i : found) rb.Integer(i);
}

// ---- LMOVE / RPOPLPUSH ----

bool ParseEnd(std::string_view s, bool* left) {
  if (EqualsIgnoreCase(s, "left")) {
    *left = true;
  } else if (EqualsIgnoreCase(s, "right")) {
    *left = false;
  } else {
    return false;
  }
  return true;
}

// Both keys on this shard.
void CmdLMove(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  bool rpoplpush = EqualsIgnoreCase(args[0], "rpoplpush");
  bool from_left = false, to_left = true;
  if (!rpoplpush && (!ParseEnd(args[3], &from_left) || !ParseEnd(args[4], &to_left))) {
    rb.Error(errors::kSyntax);
    return;
  }
  bool wrong = false;
  // As Redis: the source first (a missing source answers nil whatever the destination),
  // then the destination's type, before anything is popped.
  if (OpLength(ctx.ks, ctx.db, args[1], ctx.now_ms, &wrong) == 0 && !wrong) {
    rb.Null();
    return;
  }
  if (!wrong) OpLength(ctx.ks, ctx.db, args[2], ctx.now_ms, &wrong);
  if (wrong) {
    rb.Error(errors::kWrongType);
    return;
  }
  bool emptied = false;
  std::vector<std::string> got =
      OpPop(ctx.ks, ctx.db, args[1], from_left, 1, ctx.now_ms, &wrong, false, &emptied);
  if (wrong) {
    rb.Error(errors::kWrongType);
    return;
  }
  if (got.empty()) {
    rb.Null();
    return;
  }
  std::string_view v = got[0];
  OpPush(ctx.ks, ctx.db, args[2], to_left, std::span<const std::string_view>(&v, 1), false,
         ctx.now_ms, &wrong);
  // As Redis: the push's event first, then the pop's.
  NotifyPopped(ctx.db, args[1], from_left, emptied && args[1] != args[2]);
  ctx.worker.SignalKeyReady(ctx.db, args[2]);
  rb.Bulk(got[0]);
}

Fiber LMoveFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  bool rpoplpush = EqualsIgnoreCase(args[0], "rpoplpush");
  bool from_left = false, to_left = true;
  if (!rpoplpush && (!ParseEnd(args[3], &from_left) || !ParseEnd(args[4], &to_left))) {
    rb.Error(errors::kSyntax);
    c->FinishFiber(std::move(out));
    co_return;
  }
  uint32_t db = c->db;
  std::vector<std::string_view> keys = {args[1], args[2]};
  ShardGroups g = GroupByShard(keys, db, c->worker().engine().shard_count(), true, c->txn_owner);
  if (!co_await TryLockAll(g)) {
    for (size_t i = 0; i < g.shards.size(); i++) co_await LockOn(g.shards[i], &g.locks[i]);
  }
  uint32_t src = ShardOfKey(args[1], c->worker().engine().shard_count());
  uint32_t dst = ShardOfKey(args[2], c->worker().engine().shard_count());
  bool wrong = false;
  std::vector<std::string> got;
  int64_t src_len = 0;
  co_await RunOn(std::vector<uint32_t>(1, src), [&](Worker& w) {
    src_len = OpLength(w.keyspace(), db, args[1], w.now_ms(), &wrong);
  });
  if (!wrong && src_len > 0) {
    co_await RunOn(std::vector<uint32_t>(1, dst),
                   [&](Worker& w) { OpLength(w.keyspace(), db, args[2], w.now_ms(), &wrong); });
  }
  bool emptied = false;
  if (!wrong && src_len > 0) {
    co_await RunOn(std::vector<uint32_t>(1, src), [&](Worker& w) {
      got = OpPop(w.keyspace(), db, args[1], from_left, 1, w.now_ms(), &wrong, false, &emptied);
    });
  }
  if (!wrong && !got.empty()) {
    co_await RunOn(std::vector<uint32_t>(1, dst), [&](Worker& w) {
      bool unused = false;
      std::string_view v = got[0];
      OpPush(w.keyspace(), db, args[2], to_left, std::span<const std::string_view>(&v, 1), false,
             w.now_ms(), &unused);
      w.SignalKeyReady(db, args[2]);
    });
  }
  if (wrong || got.empty()) FiberChangesNothing();
  co_await RunOn(g.shards, [&](Worker& w) {
    // The pop's event after the push's (the destination's step came first).
    if (w.index() == src && !wrong && !got.empty()) NotifyPopped(db, args[1], from_left, emptied);
    w.locks().Release(g.locks[g.IndexOf(w.index())].keys, true);
  });
  if (wrong) {
    rb.Error(errors::kWrongType);
  } else if (got.empty()) {
    rb.Null();
  } else {
    rb.Bulk(got[0]);
  }
  c->FinishFiber(std::move(out));
}

// ---- LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count] ----

struct MPopArgs {
  std::vector<std::string_view> keys;
  bool left = true;
  int64_t count = 1;
};

// Parses LMPOP's arguments from args[first] (numkeys) on; false with rb set on error.
bool ParseMPop(CmdArgs args, size_t first, ReplyBuilder& rb, MPopArgs* m) {
  int64_t numkeys = 0;
  if (!ParseInt64(args[first], &numkeys) || numkeys <= 0) {
    rb.Error("ERR numkeys should be greater than 0");
    return false;
  }
  if (static_cast<size_t>(numkeys) > args.size() - first - 1) {
    rb.Error(errors::kSyntax);
    return false;
  }
  size_t i = first + 1;
  for (int64_t k = 0; k < numkeys; k++) m->keys.push_back(args[i++]);
  if (i >= args.size() || !ParseEnd(args[i], &m->left)) {
    rb.Error(errors::kSyntax);
    return false;
  }
  i++;
  bool seen_count = false;
  while (i < args.size()) {
    if (EqualsIgnoreCase(args[i], "count") && i + 1 < args.size() && !seen_count) {
      if (!ParseInt64(args[i + 1], &m->count) || m->count <= 0) {
        rb.Error("ERR count should be greater than 0");
        return false;
      }
      seen_count = true;
      i += 2;
    } else {
      rb.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

void ReplyMPop(ReplyBuilder& rb, std::string_view key, const std::vector<std::string>& got) {
  rb.Array(2);
  rb.Bulk(key);
  rb.Array(got.size());
  for (auto& s : got) rb.Bulk(s);
}

void CmdLMPop(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  MPopArgs m;
  if (!ParseMPop(args, 1, rb, &m)) return;
  for (std::string_view key : m.keys) {
    bool wrong = false;
    std::vector<std::string> got =
        OpPop(ctx.ks, ctx.db, key, m.left, static_cast<size_t>(m.count), ctx.now_ms, &wrong);
    if (wrong) {
      rb.Error(errors::kWrongType);
      return;
    }
    if (!got.empty()) {
      ReplyMPop(rb, key, got);
      return;
    }
  }
  rb.NullArray();
}

Fiber LMPopFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  MPopArgs m;
  if (!ParseMPop(args, 1, rb, &m)) {
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
  std::vector<std::string> got;
  std::string_view from;
  for (std::string_view key : m.keys) {
    co_await RunOn(std::vector<uint32_t>(1, ShardOfKey(key, n)), [&](Worker& w) {
      got = OpPop(w.keyspace(), db, key, m.left, static_cast<size_t>(m.count), w.now_ms(), &wrong);
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
    ReplyMPop(rb, from, got);
  }
  c->FinishFiber(std::move(out));
}

}  // namespace

void RegisterListFamily(CommandRegistry& r) {
  constexpr uint32_t kW = kCmdWrite | kCmdDenyOom | kCmdList;
  constexpr uint32_t kD = kCmdWrite | kCmdList;  // writes that only remove
  constexpr uint32_t kR = kCmdReadOnly | kCmdList;
  auto add = [&](const char* name, int arity, uint32_t flags, int first, int last, int step,
                 ShardFn fn, FiberFn fiber, const char* since, const char* summary) {
    CommandSpec s{name, arity, flags, first, last, step};
    s.shard_fn = fn;
    s.fiber_fn = fiber;
    s.group = "list";
    s.since = since;
    s.summary = summary;
    r.Add(std::move(s));
  };
  add("lpush", -3, kW | kCmdFast, 1, 1, 1, CmdLPush, nullptr, "1.0.0",
      "Prepends one or more elements to a list.");
  add("rpush", -3, kW | kCmdFast, 1, 1, 1, CmdRPush, nullptr, "1.0.0",
      "Appends one or more elements to a list.");
  add("lpushx", -3, kW | kCmdFast, 1, 1, 1, CmdLPushX, nullptr, "2.2.0",
      "Prepends elements to a list only when the list exists.");
  add("rpushx", -3, kW | kCmdFast, 1, 1, 1, CmdRPushX, nullptr, "2.2.0",
      "Appends elements to a list only when the list exists.");
  add("lpop", -2, kD | kCmdFast, 1, 1, 1, CmdLPop, nullptr, "1.0.0",
      "Returns the first elements in a list after removing it.");
  add("rpop", -2, kD | kCmdFast, 1, 1, 1, CmdRPop, nullptr, "1.0.0",
      "Returns and removes the last elements of a list.");
  add("llen", 2, kR | kCmdFast, 1, 1, 1, CmdLLen, nullptr, "1.0.0",
      "Returns the length of a list.");
  add("lrange", 4, kR, 1, 1, 1, CmdLRange, nullptr, "1.0.0",
      "Returns a range of elements from a list.");
  add("lindex", 3, kR, 1, 1, 1, CmdLIndex, nullptr, "1.0.0",
      "Returns an element from a list by its index.");
  add("lset", 4, kW, 1, 1, 1, CmdLSet, nullptr, "1.0.0",
      "Sets the value of an element in a list by its index.");
  add("linsert", 5, kW, 1, 1, 1, CmdLInsert, nullptr, "2.2.0",
      "Inserts an element before or after another element in a list.");
  add("lrem", 4, kD, 1, 1, 1, CmdLRem, nullptr, "1.0.0", "Removes elements from a list.");
  add("ltrim", 4, kD, 1, 1, 1, CmdLTrim, nullptr, "1.0.0",
      "Removes elements from both ends a list.");
  add("lpos", -3, kR, 1, 1, 1, CmdLPos, nullptr, "6.0.6",
      "Returns the index of matching elements in a list.");
  add("lmove", 5, kW, 1, 2, 1, CmdLMove, LMoveFiber, "6.2.0",
      "Returns an element after popping it from one list and pushing it to another.");
  add("rpoplpush", 3, kW, 1, 2, 1, CmdLMove, LMoveFiber, "1.2.0",
      "Returns the last element of a list after removing and pushing it to another list.");
  add("lmpop", -4, kD, 2, -1, 1, CmdLMPop, LMPopFiber, "7.0.0",
      "Returns multiple elements from a list after removing them.");
}

}  // namespace strata
