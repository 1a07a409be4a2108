#include "server/commands/set_algebra.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <unordered_map>

#include "core/hash.h"
#include "core/string_util.h"
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

// ---- sources ----

void EntrySetSource::ForEach(const std::function<bool(std::string_view)>& fn) const {
  bool go = true;
  set_access::ForEach(e_, [&](std::string_view m) {
    if (go) go = fn(m);
  });
}

SetSnapshot SetSnapshot::Read(Keyspace& ks, uint32_t db, std::string_view key, int64_t now_ms) {
  SetSnapshot s;
  Entry* e = ks.FindRead(db, key, now_ms);
  if (e == nullptr) return s;
  if (e->Type() != ValueType::kSet) {
    s.state = State::kWrongType;
    return s;
  }
  s.state = State::kSet;
  s.encoding = set_access::Encoding(e);
  s.members = set_access::Members(e);
  return s;
}

bool SnapshotSetSource::Contains(std::string_view member) const {
  const std::vector<std::string>& m = s_->members;
  if (m.size() <= 8) return std::find(m.begin(), m.end(), member) != m.end();
  if (index_.empty()) index_.insert(m.begin(), m.end());
  return index_.count(member) != 0;
}

void SnapshotSetSource::ForEach(const std::function<bool(std::string_view)>& fn) const {
  for (const std::string& m : s_->members) {
    if (!fn(m)) return;
  }
}

// ---- parsing ----

bool SetAlgebraCall::Parse(CmdArgs args, ReplyBuilder& rb, SetAlgebraCall* out) {
  std::string name = Lowercase(args[0]);
  if (name == "sintercard") {
    out->op = Op::kInterCard;
    int64_t numkeys = 0;
    if (!ParseInt64(args[1], &numkeys) || numkeys < 1) {
      rb.Error("ERR numkeys should be greater than 0");
      return false;
    }
    if (static_cast<uint64_t>(numkeys) > args.size() - 2) {
      rb.Error("ERR Number of keys can't be greater than number of args");
      return false;
    }
    size_t end = 2 + static_cast<size_t>(numkeys);
    out->keys.assign(args.begin() + 2, args.begin() + static_cast<std::ptrdiff_t>(end));
    for (size_t i = end; i < args.size(); i++) {
      if (EqualsIgnoreCase(args[i], "limit") && i + 1 < args.size()) {
        int64_t limit = 0;
        if (!ParseInt64(args[++i], &limit) || limit < 0) {
          rb.Error("ERR LIMIT can't be negative");
          return false;
        }
        out->limit = static_cast<uint64_t>(limit);
      } else {
        rb.Error(errors::kSyntax);
        return false;
      }
    }
    return true;
  }
  if (name.starts_with("sinter")) {
    out->op = Op::kInter;
  } else if (name.starts_with("sunion")) {
    out->op = Op::kUnion;
  } else {
    out->op = Op::kDiff;
  }
  out->store = name.ends_with("store");
  size_t first = 1;
  if (out->store) {
    out->dst = args[1];
    first = 2;
  }
  out->keys.assign(args.begin() + static_cast<std::ptrdiff_t>(first), args.end());
  return true;
}

// ---- algorithms ----

namespace {

void ReplyMembers(ReplyBuilder& rb, const std::vector<std::string>& members) {
  rb.Set(members.size());
  for (const std::string& m : members) rb.Bulk(m);
}

// SINTER, SINTERCARD, SINTERSTORE (Redis's sinterGenericCommand).
void Intersect(const SetAlgebraCall& call, std::vector<const SetSource*> sets, ReplyBuilder& rb,
               SetBuilder* result) {
  bool any_missing = std::find(sets.begin(), sets.end(), nullptr) != sets.end();
  if (any_missing) {
    if (call.op == SetAlgebraCall::Op::kInterCard) {
      rb.Integer(0);
    } else if (!call.store) {
      rb.Set(0);
    }
    return;
  }
  // Smallest first: its members are the candidates.
  std::stable_sort(sets.begin(), sets.end(),
                   [](const SetSource* a, const SetSource* b) { return a->Size() < b->Size(); });
  if (call.store) {
    // As Redis: an intset result from an intset, else a listpack that may convert.
    *result = SetBuilder(sets[0]->Encoding() == SetEncoding::kIntSet ? SetEncoding::kIntSet
                                                                     : SetEncoding::kListpack);
  }
  uint64_t cardinality = 0;
  bool only_integers = true;
  std::vector<std::string> members;
  sets[0]->ForEach([&](std::string_view m) {
    for (size_t j = 1; j < sets.size(); j++) {
      if (sets[j] != sets[0] && !sets[j]->Contains(m)) return true;
    }
    cardinality++;
    if (call.op == SetAlgebraCall::Op::kInterCard) {
      return call.limit == 0 || cardinality < call.limit;
    }
    if (call.store) {
      int64_t unused;
      if (only_integers && !intset::ToInt(m, &unused)) only_integers = false;
      result->Add(m);
    } else {
      members.emplace_back(m);
    }
    return true;
  });
  if (call.op == SetAlgebraCall::Op::kInterCard) {
    rb.Integer(static_cast<int64_t>(cardinality));
  } else if (call.store) {
    if (only_integers) result->ConvertToIntSetIfFits();
  } else {
    ReplyMembers(rb, members);
  }
}

// SUNION, SDIFF and their STORE forms (Redis's sunionDiffGenericCommand).
void UnionOrDiff(const SetAlgebraCall& call, std::vector<const SetSource*> sets, ReplyBuilder& rb,
                 SetBuilder* result) {
  bool diff = call.op == SetAlgebraCall::Op::kDiff;
  // The same key given again after the first: the difference is empty.
  bool same_as_first = false;
  for (size_t j = 1; j < call.keys.size(); j++) same_as_first |= call.keys[j] == call.keys[0];
  int algo = 1;
  if (diff && sets[0] != nullptr && !same_as_first) {
    uint64_t one = 0, two = 0;
    for (const SetSource* s : sets) {
      if (s == nullptr) continue;
      one += sets[0]->Size();
      two += s->Size();
    }
    // Probing has better constants, and stops early on common members: favour it.
    one /= 2;
    algo = one <= two ? 1 : 2;
    if (algo == 1 && sets.size() > 1) {
      // Biggest first, where a member is most likely found.
      std::stable_sort(sets.begin() + 1, sets.end(), [](const SetSource* a, const SetSource* b) {
        return (a ? a->Size() : 0) > (b ? b->Size() : 0);
      });
    }
  }
  SetBuilder out;  // an empty intset, as Redis starts every union and difference
  if (!diff) {
    for (const SetSource* s : sets) {
      if (s == nullptr) continue;
      s->ForEach([&](std::string_view m) {
        out.Add(m);
        return true;
      });
    }
  } else if (sets[0] != nullptr && !same_as_first && algo == 1) {
    sets[0]->ForEach([&](std::string_view m) {
      for (size_t j = 1; j < sets.size(); j++) {
        if (sets[j] != nullptr && sets[j]->Contains(m)) return true;
      }
      out.Add(m);
      return true;
    });
  } else if (sets[0] != nullptr && !same_as_first) {
    for (size_t j = 0; j < sets.size(); j++) {
      if (sets[j] == nullptr) continue;
      sets[j]->ForEach([&](std::string_view m) {
        if (j == 0) {
          out.Add(m);
        } else {
          out.Remove(m);
        }
        return true;
      });
      if (out.empty()) break;
    }
  }
  if (call.store) {
    *result = std::move(out);
    return;
  }
  rb.Set(out.size());
  out.ForEach([&](std::string_view m) { rb.Bulk(m); });
}

}  // namespace

void ComputeSetAlgebra(const SetAlgebraCall& call, const std::vector<const SetSource*>& sets,
                       ReplyBuilder& rb, SetBuilder* result) {
  if (call.op == SetAlgebraCall::Op::kInter || call.op == SetAlgebraCall::Op::kInterCard) {
    Intersect(call, sets, rb, result);
  } else {
    UnionOrDiff(call, sets, rb, result);
  }
}

namespace {

// ---- single shard ----

// Stores a *STORE command's result and publishes its event (del when an empty result
// removed the destination).
void StoreResult(Keyspace& ks, uint32_t db, std::string_view cmd, std::string_view dst,
                 const SetBuilder& result, int64_t now_ms) {
  bool existed = result.empty() && ks.FindMeta(db, dst, now_ms, false) != nullptr;
  result.Store(ks, db, dst, Entry::kNoExpire);
  if (!result.empty()) {
    NotifyKeyspaceEvent(kNotifySet, Lowercase(cmd), dst, db);
  } else if (existed) {
    NotifyKeyspaceEvent(kNotifyGeneric, "del", dst, db);
  }
}

void CmdSetAlgebra(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  SetAlgebraCall call;
  if (!SetAlgebraCall::Parse(args, rb, &call)) return;
  std::vector<EntrySetSource> holders;
  holders.reserve(call.keys.size());
  std::vector<const SetSource*> sets(call.keys.size(), nullptr);
  // Every key is looked up (and type-checked) before anything is computed, as Redis does.
  std::vector<const Entry*> entries(call.keys.size(), nullptr);
  for (size_t i = 0; i < call.keys.size(); i++) {
    Entry* e = ctx.ks.FindRead(ctx.db, call.keys[i], ctx.now_ms);
    if (e != nullptr && e->Type() != ValueType::kSet) {
      rb.Error(errors::kWrongType);
      return;
    }
    entries[i] = e;
  }
  // The same key twice is the same set (the algorithms skip probing a set against
  // itself): one source per entry, found through a map so many keys cost linear time.
  std::unordered_map<const Entry*, const SetSource*> by_entry;
  for (size_t i = 0; i < call.keys.size(); i++) {
    if (entries[i] == nullptr) continue;
    auto [it, added] = by_entry.try_emplace(entries[i], nullptr);
    if (added) {
      holders.emplace_back(entries[i]);
      it->second = &holders.back();
    }
    sets[i] = it->second;
  }
  SetBuilder result;
  ComputeSetAlgebra(call, sets, rb, &result);
  if (!call.store) return;
  StoreResult(ctx.ks, ctx.db, args[0], call.dst, result, ctx.now_ms);
  rb.Integer(static_cast<int64_t>(result.size()));
}

// Adds member to the set at key (created when missing); false when it was there.
// REQUIRES: key holds no other type.
bool AddMember(Keyspace& ks, uint32_t db, std::string_view key, std::string_view member,
               int64_t now_ms) {
  Entry* e = ks.Find(db, key, now_ms);
  if (e == nullptr) {
    SetEditor ed(ks, db, key, member, 1);
    ed.Add(member);
    ed.Commit();
    return true;
  }
  SetEditor ed(ks, db, key, e);
  bool added = ed.Add(member);
  ed.Commit();
  return added;
}

// Removes member from the set at key (deleted when emptied); false when it was absent.
// Publishes srem (and del when emptied).
bool RemoveMember(Keyspace& ks, uint32_t db, std::string_view key, std::string_view member,
                  int64_t now_ms) {
  Entry* e = ks.Find(db, key, now_ms);
  SetEditor ed(ks, db, key, e);
  if (!ed.Remove(member)) return false;
  bool emptied = ed.size() == 0;
  ed.Commit();
  NotifyKeyspaceEvent(kNotifySet, "srem", key, db);
  if (emptied) NotifyKeyspaceEvent(kNotifyGeneric, "del", key, db);
  return true;
}

void CmdSMove(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  // The destination's type only (AddMember looks it up for writing); the source last, so
  // that a move that does nothing withdraws its WATCH notice.
  Entry* dst = ctx.ks.FindMeta(ctx.db, args[2], ctx.now_ms);
  Entry* src = ctx.ks.Find(ctx.db, args[1], ctx.now_ms);
  if (src == nullptr) {
    rb.Integer(0);
    return;
  }
  if (src->Type() != ValueType::kSet || (dst != nullptr && dst->Type() != ValueType::kSet)) {
    ctx.ks.NoChange(ctx.db, args[1]);
    rb.Error(errors::kWrongType);
    return;
  }
  if (args[1] == args[2]) {
    ctx.ks.NoChange(ctx.db, args[1]);
    rb.Integer(set_access::Contains(src, args[3]) ? 1 : 0);
    return;
  }
  if (!set_access::Contains(src, args[3]) ||
      !RemoveMember(ctx.ks, ctx.db, args[1], args[3], ctx.now_ms)) {
    ctx.ks.NoChange(ctx.db, args[1]);
    rb.Integer(0);
    return;
  }
  if (AddMember(ctx.ks, ctx.db, args[2], args[3], ctx.now_ms))
    NotifyKeyspaceEvent(kNotifySet, "sadd", args[2], ctx.db);
  rb.Integer(1);
}

// ---- several shards ----

Fiber SetAlgebraFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  SetAlgebraCall call;
  if (!SetAlgebraCall::Parse(args, rb, &call)) {
    c->FinishFiber(std::move(out));
    co_return;
  }
  uint32_t db = c->db;
  uint32_t n = c->worker().engine().shard_count();
  size_t nsrc = call.keys.size();
  std::vector<std::string_view> keys = call.keys;
  if (call.store) keys.push_back(call.dst);
  ShardGroups g = GroupByShard(keys, db, n, false, c->txn_owner);
  uint32_t dst_shard = call.store ? ShardOfKey(call.dst, n) : 0;
  if (call.store) g.locks[g.IndexOf(dst_shard)].exclusive = true;
  if (!co_await TryLockAll(g)) {
    for (size_t i = 0; i < g.shards.size(); i++) co_await LockOn(g.shards[i], &g.locks[i]);
  }

  // Read every source (a read-only call also releases its locks in the same step), and
  // whether the destination is there.
  std::vector<SetSnapshot> snaps(nsrc);
  bool dst_exists = false;
  co_await RunOn(g.shards, [&](Worker& w) {
    size_t gi = g.IndexOf(w.index());
    for (size_t p : g.positions[gi]) {
      if (p < nsrc) snaps[p] = SetSnapshot::Read(w.keyspace(), db, keys[p], w.now_ms());
    }
    if (!call.store) w.locks().Release(g.locks[gi].keys, false);
    if (call.store && w.index() == dst_shard)
      dst_exists = w.keyspace().FindMeta(db, call.dst, w.now_ms()) != nullptr;
  });

  bool wrong_type = false;
  for (const SetSnapshot& s : snaps) wrong_type |= s.state == SetSnapshot::State::kWrongType;
  SetBuilder result;
  if (wrong_type) {
    rb.Error(errors::kWrongType);
  } else {
    std::vector<SnapshotSetSource> holders;
    holders.reserve(nsrc);
    std::vector<const SetSource*> sets(nsrc, nullptr);
    std::unordered_map<std::string_view, const SetSource*> by_key;
    for (size_t i = 0; i < nsrc; i++) {
      if (snaps[i].state != SetSnapshot::State::kSet) continue;
      auto [it, added] = by_key.try_emplace(call.keys[i], nullptr);
      if (added) {
        holders.emplace_back(&snaps[i]);
        it->second = &holders.back();
      }
      sets[i] = it->second;
    }
    ComputeSetAlgebra(call, sets, rb, &result);
  }

  if (call.store) {
    // An error, or an empty result with no destination to delete, changes nothing.
    if (wrong_type || (result.size() == 0 && !dst_exists)) FiberChangesNothing();
    // The destination is written and every lock released in one step per shard: a
    // reader of the destination waits for its lock until the new value is there.
    co_await RunOn(g.shards, [&](Worker& w) {
      size_t gi = g.IndexOf(w.index());
      if (w.index() == dst_shard && !wrong_type)
        StoreResult(w.keyspace(), db, args[0], call.dst, result, w.now_ms());
      w.locks().Release(g.locks[gi].keys, g.locks[gi].exclusive);
    });
    if (!wrong_type) rb.Integer(static_cast<int64_t>(result.size()));
  }
  c->FinishFiber(std::move(out));
}

Fiber SMoveFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  uint32_t db = c->db;
  uint32_t n = c->worker().engine().shard_count();
  uint32_t src_shard = ShardOfKey(args[1], n);
  uint32_t dst_shard = ShardOfKey(args[2], n);
  LockTable::Request src_lock{
      {LockTable::LockKey(db, args[1])}, true, true, {}, db, {args[1]}, false, c->txn_owner};
  LockTable::Request dst_lock{
      {LockTable::LockKey(db, args[2])}, true, true, {}, db, {args[2]}, false, c->txn_owner};
  if (src_shard < dst_shard) {
    co_await LockOn(src_shard, &src_lock);
    co_await LockOn(dst_shard, &dst_lock);
  } else {
    co_await LockOn(dst_shard, &dst_lock);
    co_await LockOn(src_shard, &src_lock);
  }
  struct Info {
    bool exists = false;
    bool wrong_type = false;
    bool has_member = false;
  };
  Info src, dst;
  std::vector<uint32_t> both = {std::min(src_shard, dst_shard), std::max(src_shard, dst_shard)};
  co_await RunOn(both, [&](Worker& w) {
    bool is_src = w.index() == src_shard;
    Entry* e = w.keyspace().Find(db, is_src ? args[1] : args[2], w.now_ms());
    Info& info = is_src ? src : dst;
    info.exists = e != nullptr;
    info.wrong_type = e != nullptr && e->Type() != ValueType::kSet;
    info.has_member =
        is_src && e != nullptr && !info.wrong_type && set_access::Contains(e, args[3]);
  });
  bool move = false;
  if (!src.exists) {
    rb.Integer(0);
  } else if (src.wrong_type || dst.wrong_type) {
    rb.Error(errors::kWrongType);
  } else {
    move = src.has_member;
    rb.Integer(move ? 1 : 0);
  }
  if (!move) FiberChangesNothing();
  // Both sides change and release in one step each: a reader of either key waits for
  // its lock, so none sees the member in both sets or in neither.
  co_await RunOn(both, [&](Worker& w) {
    bool is_src = w.index() == src_shard;
    if (move && is_src) RemoveMember(w.keyspace(), db, args[1], args[3], w.now_ms());
    if (move && !is_src && AddMember(w.keyspace(), db, args[2], args[3], w.now_ms())) {
      // Published by the destination's shard in the same step as the source's srem: the
      // two come from different workers, so their relative order is not guaranteed.
      NotifyKeyspaceEvent(kNotifySet, "sadd", args[2], db);
    }
    w.locks().Release(is_src ? src_lock.keys : dst_lock.keys, true);
  });
  c->FinishFiber(std::move(out));
}

}  // namespace

void RegisterSetAlgebraCommands(CommandRegistry& r) {
  constexpr uint32_t kR = kCmdReadOnly | kCmdSet;
  constexpr uint32_t kStore = kCmdWrite | kCmdDenyOom | kCmdSet;
  auto add = [&](const char* name, int arity, uint32_t flags, int first, int last, ShardFn fn,
                 FiberFn fiber, const char* since, const char* summary) {
    CommandSpec s{name, arity, flags, first, last, 1};
    s.shard_fn = fn;
    s.fiber_fn = fiber;
    s.group = "set";
    s.since = since;
    s.summary = summary;
    r.Add(std::move(s));
  };
  add("smove", 4, kCmdWrite | kCmdFast | kCmdSet, 1, 2, CmdSMove, SMoveFiber, "1.0.0",
      "Moves a member from one set to another.");
  add("sinter", -2, kR, 1, -1, CmdSetAlgebra, SetAlgebraFiber, "1.0.0",
      "Returns the intersect of multiple sets.");
  // SINTERCARD's keys follow numkeys; routing takes every argument after it as a key
  // (LIMIT and its value included), which only ever sends a call to the fiber, where the
  // arguments are parsed properly.
  add("sintercard", -3, kR, 2, -1, CmdSetAlgebra, SetAlgebraFiber, "7.0.0",
      "Returns the number of members of the intersect of multiple sets.");
  add("sinterstore", -3, kStore, 1, -1, CmdSetAlgebra, SetAlgebraFiber, "1.0.0",
      "Stores the intersect of multiple sets in a key.");
  add("sunion", -2, kR, 1, -1, CmdSetAlgebra, SetAlgebraFiber, "1.0.0",
      "Returns the union of multiple sets.");
  add("sunionstore", -3, kStore, 1, -1, CmdSetAlgebra, SetAlgebraFiber, "1.0.0",
      "Stores the union of multiple sets in a key.");
  add("sdiff", -2, kR, 1, -1, CmdSetAlgebra, SetAlgebraFiber, "1.0.0",
      "Returns the difference of multiple sets.");
  add("sdiffstore", -3, kStore, 1, -1, CmdSetAlgebra, SetAlgebraFiber, "1.0.0",
      "Stores the difference of multiple sets in a key.");
}

}  // namespace strata
