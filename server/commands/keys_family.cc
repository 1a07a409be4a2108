// Generic key commands. Single-key ones and same-shard multi-key calls run on the
// owning shard; DEL/UNLINK/EXISTS/TOUCH/RENAME/RENAMENX/COPY have fibers for keys on
// several shards; KEYS, SCAN, RANDOMKEY, DBSIZE, FLUSHDB, FLUSHALL and SWAPDB visit
// every shard.
//
// SCAN cursor: the high bits name the shard, the low Table::kCursorBits bits are a
// position in that shard's hash space (see core/table.h). A shard is scanned to its
// end before the cursor moves to the next shard, so every key present for the whole
// scan is returned, however much the tables grow in between.
#include <algorithm>
#include <optional>

#include "core/glob.h"
#include "core/hash.h"
#include "core/string_util.h"
#include "server/base/config.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
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

// UNLINK, and DEL with lazyfree-lazy-user-del, free big collections a slice at a time.
bool LazyDelete(std::string_view cmd, Worker& w) {
  return EqualsIgnoreCase(cmd, "unlink") || w.engine().config().Int("lazyfree-lazy-user-del") != 0;
}

void CmdDel(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  int64_t n = 0;
  bool lazy = LazyDelete(args[0], ctx.worker);
  for (size_t i = 1; i < args.size(); i++) {
    if ((i - 1) % Table::kLookaheadMax == 0)  // the next run's lookups together
      ctx.ks.PrefetchKeys(ctx.db, &args[i], std::min(Table::kLookaheadMax, args.size() - i));
    // Expired keys count as absent; a cold value is not read back to be deleted.
    if (ctx.ks.FindMeta(ctx.db, args[i], ctx.now_ms) != nullptr &&
        ctx.ks.Delete(ctx.db, args[i], lazy)) {
      n++;
      NotifyKeyspaceEvent(kNotifyGeneric, "del", args[i], ctx.db);
    }
  }
  rb.Integer(n);
}

void CmdExists(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  int64_t n = 0;
  bool touch = EqualsIgnoreCase(args[0], "touch");  // TOUCH counts as an access
  for (size_t i = 1; i < args.size(); i++) {
    if ((i - 1) % Table::kLookaheadMax == 0)  // the next run's lookups together
      ctx.ks.PrefetchKeys(ctx.db, &args[i], std::min(Table::kLookaheadMax, args.size() - i));
    if (ctx.ks.FindMeta(ctx.db, args[i], ctx.now_ms, false, touch) != nullptr) n++;
  }
  rb.Integer(n);
}

void CmdType(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e = ctx.ks.FindMeta(ctx.db, args[1], ctx.now_ms);
  rb.Simple(e == nullptr ? "none" : ValueTypeName(e->Type()));
}

// OBJECT ENCODING/REFCOUNT/IDLETIME/FREQ key, on the key's shard.
void CmdObject(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  std::string sub = Lowercase(args[1]);
  // IDLETIME and FREQ need only the access state: a cold value stays on disk.
  bool meta = sub == "idletime" || sub == "freq";
  Entry* e = meta ? ctx.ks.FindMeta(ctx.db, args[2], ctx.now_ms)
                  : ctx.ks.FindNoTouch(ctx.db, args[2], ctx.now_ms);
  if (e == nullptr) {
    rb.Null();
    return;
  }
  if (sub == "encoding") {
    rb.Bulk(EncodingOf(e));
  } else if (sub == "refcount") {
    std::string scratch;
    int64_t n = -1;
    bool shared = e->Type() == ValueType::kString && !e->IsExternal() &&
                  ParseInt64(e->Value(&scratch), &n) && n >= 0 && n < 10000;
    rb.Integer(shared ? INT32_MAX : 1);  // Redis shares the integers 0..9999
  } else {
    const access::Clock& clock = ctx.ks.access_clock();
    bool lfu = clock.mode == access::Mode::kLfu;
    if (sub == "idletime" && lfu) {
      rb.Error(
          "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that "
          "when switching between policies at runtime LRU and LFU data will take some time "
          "to adjust.");
    } else if (sub == "freq" && !lfu) {
      rb.Error(
          "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please "
          "note that when switching between policies at runtime LRU and LFU data will take "
          "some time to adjust.");
    } else if (sub == "idletime") {
      rb.Integer(static_cast<int64_t>(access::LruIdleMs(access::LruClock(ctx.now_ms), e->Access()) /
                                      1000));
    } else {
      rb.Integer(
          access::LfuDecayed(e->Access(), access::LfuMinutes(ctx.now_ms), clock.lfu_decay_time));
    }
  }
}

const std::vector<std::string> kObjectSubcommands = {"encoding", "refcount", "idletime", "freq",
                                                     "help"};

bool ObjectNeedsShard(CmdArgs args) {
  std::string sub = Lowercase(args[1]);
  return sub != "help" && args.size() == 3 &&
         (sub == "encoding" || sub == "refcount" || sub == "idletime" || sub == "freq");
}

void ObjectConn(Client& c, CmdArgs args, ReplyBuilder& rb) {
  std::string sub = Lowercase(args[1]);
  if (sub == "help" && args.size() == 2) {
    const char* lines[] = {
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        "HELP",
        "    Prints this help."};
    rb.Array(sizeof(lines) / sizeof(lines[0]));
    for (const char* l : lines) rb.Simple(l);
  } else if (sub == "encoding" || sub == "refcount" || sub == "idletime" || sub == "freq" ||
             sub == "help") {
    rb.Error(WrongArityError("object|" + sub));
  } else {
    rb.Error("ERR unknown subcommand '" + std::string(args[1]) + "'. Try OBJECT HELP.");
  }
}

struct Payload {
  std::string value;
  ValueType type;
  int64_t expire_ms;
};

// The source of COPY and MOVE: read (MOVE deletes it afterwards).
std::optional<Payload> Take(Keyspace& ks, uint32_t db, std::string_view key, int64_t now) {
  Entry* e = ks.FindRead(db, key, now);
  if (e == nullptr) return std::nullopt;
  return Payload{Keyspace::Serialize(e), e->Type(), e->ExpireMs()};
}

void RenameImpl(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb, bool nx) {
  Entry* src = ctx.ks.Find(ctx.db, args[1], ctx.now_ms);
  if (src == nullptr) {
    rb.Error(errors::kNoSuchKey);
    return;
  }
  if (args[1] == args[2] || (nx && ctx.ks.FindMeta(ctx.db, args[2], ctx.now_ms) != nullptr)) {
    ctx.ks.NoChange(ctx.db, args[1]);  // nothing moves
    nx ? rb.Integer(0) : rb.Ok();
    return;
  }
  Payload p{Keyspace::Serialize(src), src->Type(), src->ExpireMs()};
  // The old destination goes first, so that the renamed key is a new key (Redis's "new").
  ctx.ks.Delete(ctx.db, args[2]);
  ctx.ks.SetRaw(ctx.db, args[2], p.value, p.type, p.expire_ms);
  ctx.ks.Delete(ctx.db, args[1]);
  NotifyKeyspaceEvent(kNotifyGeneric, "rename_from", args[1], ctx.db);
  NotifyKeyspaceEvent(kNotifyGeneric, "rename_to", args[2], ctx.db);
  nx ? rb.Integer(1) : rb.Ok();
}

void CmdRename(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) { RenameImpl(args, ctx, rb, false); }
void CmdRenameNx(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) { RenameImpl(args, ctx, rb, true); }

bool ParseDbIndex(std::string_view arg, uint32_t db_count, ReplyBuilder& rb, uint32_t* out) {
  int64_t v = 0;
  if (!ParseInt64(arg, &v) || v < INT32_MIN || v > INT32_MAX) {
    rb.Error(errors::kNotInteger);
    return false;
  }
  if (v < 0 || v >= db_count) {
    rb.Error(errors::kDbIndexOutOfRange);
    return false;
  }
  *out = static_cast<uint32_t>(v);
  return true;
}

struct CopyOptions {
  uint32_t dst_db;
  bool replace = false;
};

// cluster: cluster mode is on, where only database 0 exists (as in Redis Cluster).
bool ParseCopy(CmdArgs args, uint32_t db, uint32_t db_count, bool cluster, ReplyBuilder& rb,
               CopyOptions* o) {
  o->dst_db = db;
  for (size_t i = 3; i < args.size(); i++) {
    if (EqualsIgnoreCase(args[i], "replace")) {
      o->replace = true;
    } else if (EqualsIgnoreCase(args[i], "db") && i + 1 < args.size()) {
      int64_t v = 0;
      if (!ParseInt64(args[++i], &v)) {
        rb.Error(errors::kNotInteger);
        return false;
      }
      if (v < 0 || v >= db_count) {
        rb.Error(errors::kDbIndexOutOfRange);
        return false;
      }
      o->dst_db = static_cast<uint32_t>(v);
    } else {
      rb.Error(errors::kSyntax);
      return false;
    }
  }
  if (cluster && (db != 0 || o->dst_db != 0)) {
    rb.Error("ERR Copying to another database is not allowed in cluster mode");
    return false;
  }
  if (o->dst_db == db && args[1] == args[2]) {
    rb.Error(errors::kSameObject);
    return false;
  }
  return true;
}

void CmdCopy(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  CopyOptions o;
  if (!ParseCopy(args, ctx.db, ctx.ks.db_count(), ctx.worker.engine().process().cluster_mode(), rb,
                 &o))
    return;
  auto p = Take(ctx.ks, ctx.db, args[1], ctx.now_ms);
  if (!p) {
    rb.Integer(0);
    return;
  }
  bool exists = ctx.ks.FindMeta(o.dst_db, args[2], ctx.now_ms) != nullptr;
  if (!o.replace && exists) {
    rb.Integer(0);
    return;
  }
  if (exists) ctx.ks.Delete(o.dst_db, args[2]);  // the copy is a new key (Redis's "new")
  ctx.ks.SetRaw(o.dst_db, args[2], p->value, p->type, p->expire_ms);
  NotifyKeyspaceEvent(kNotifyGeneric, "copy_to", args[2], o.dst_db);
  rb.Integer(1);
}

void CmdMove(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  if (ctx.worker.engine().process().cluster_mode()) {
    rb.Error("ERR MOVE is not allowed in cluster mode");
    return;
  }
  uint32_t dst = 0;
  if (!ParseDbIndex(args[2], ctx.ks.db_count(), rb, &dst)) return;
  if (dst == ctx.db) {
    rb.Error(errors::kSameObject);
    return;
  }
  auto p = Take(ctx.ks, ctx.db, args[1], ctx.now_ms);
  if (!p || ctx.ks.FindMeta(dst, args[1], ctx.now_ms) != nullptr) {
    rb.Integer(0);
    return;
  }
  ctx.ks.SetRaw(dst, args[1], p->value, p->type, p->expire_ms);
  ctx.ks.Delete(ctx.db, args[1]);
  NotifyKeyspaceEvent(kNotifyGeneric, "move_from", args[1], ctx.db);
  NotifyKeyspaceEvent(kNotifyGeneric, "move_to", args[1], dst);
  rb.Integer(1);
}

// DEL, UNLINK, EXISTS and TOUCH over several shards: lock, count, release.
Fiber CountKeysFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  bool del = EqualsIgnoreCase(args[0], "del") || EqualsIgnoreCase(args[0], "unlink");
  bool touch = EqualsIgnoreCase(args[0], "touch");
  uint32_t db = c->db;
  std::vector<std::string_view> keys(args.begin() + 1, args.end());
  ShardGroups g = GroupByShard(keys, db, c->worker().engine().shard_count(), del, c->txn_owner);
  for (auto& l : g.locks) l.names.clear();  // metadata only: cold values stay on disk
  std::vector<int64_t> counts(g.shards.size(), 0);
  auto count = [&](Worker& w, size_t gi) {
    counts[gi] = 0;
    const std::vector<size_t>& positions = g.positions[gi];
    for (size_t j = 0; j < positions.size(); j++) {
      if (j % Table::kLookaheadMax == 0) PrefetchGroupRun(w.keyspace(), db, keys, positions, j);
      size_t p = positions[j];
      // Metadata only: a cold value stays on disk. TOUCH counts as an access.
      bool present = w.keyspace().FindMeta(db, keys[p], w.now_ms(), false, touch) != nullptr;
      if (present && (!del || w.keyspace().Delete(db, keys[p], LazyDelete(args[0], w)))) {
        counts[gi]++;
        if (del) NotifyKeyspaceEvent(kNotifyGeneric, "del", keys[p], db);
      }
    }
  };
  // EXISTS and TOUCH count in the round trip that takes their locks (try_lock_all.h) and
  // let them go without waiting; DEL and UNLINK take the locks, then delete.
  bool counted = false;
  bool locked = false;
  if (!del) {
    counted = co_await TryLockAll(g, count);
    if (counted) ReleaseAll(g);
  } else {
    locked = co_await TryLockAll(g);
  }
  if (!counted) {
    if (!locked) {
      for (size_t i = 0; i < g.shards.size(); i++) co_await LockOn(g.shards[i], &g.locks[i]);
    }
    co_await RunOn(g.shards, [&](Worker& w) {
      size_t gi = g.IndexOf(w.index());
      count(w, gi);
      w.locks().Release(g.locks[gi].keys, del);
    });
  }
  int64_t total = 0;
  for (int64_t n : counts) total += n;
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  rb.Integer(total);
  c->FinishFiber(std::move(out));
}

// RENAME, RENAMENX and COPY between two shards.
Fiber MoveBetweenShardsFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  bool copy = EqualsIgnoreCase(args[0], "copy");
  bool nx = EqualsIgnoreCase(args[0], "renamenx");
  uint32_t db = c->db;
  CopyOptions o{db, false};
  if (copy && !ParseCopy(args, db, c->worker().engine().config().Int("databases"),
                         c->worker().engine().process().cluster_mode(), rb, &o)) {
    c->FinishFiber(std::move(out));
    co_return;
  }
  uint32_t n = c->worker().engine().shard_count();
  uint32_t src_shard = ShardOfKey(args[1], n);
  uint32_t dst_shard = ShardOfKey(args[2], n);
  LockTable::Request src_lock{
      {LockTable::LockKey(db, args[1])}, !copy, true, {}, db, {args[1]}, false, c->txn_owner};
  LockTable::Request dst_lock{{LockTable::LockKey(o.dst_db, args[2])},
                              true,
                              true,
                              {},
                              o.dst_db,
                              {args[2]},
                              false,
                              c->txn_owner};
  // Lock in increasing shard order.
  if (src_shard < dst_shard) {
    co_await LockOn(src_shard, &src_lock);
    co_await LockOn(dst_shard, &dst_lock);
  } else {
    co_await LockOn(dst_shard, &dst_lock);
    co_await LockOn(src_shard, &src_lock);
  }
  std::optional<Payload> p;
  co_await RunOn(std::vector<uint32_t>(1, src_shard),
                 [&](Worker& w) { p = Take(w.keyspace(), db, args[1], w.now_ms()); });
  bool done = false;
  if (p) {
    co_await RunOn(std::vector<uint32_t>(1, dst_shard), [&](Worker& w) {
      bool exists = w.keyspace().FindMeta(o.dst_db, args[2], w.now_ms()) != nullptr;
      if (exists && (nx || (copy && !o.replace))) return;
      if (exists) w.keyspace().Delete(o.dst_db, args[2]);  // the copy is a new key
      w.keyspace().SetRaw(o.dst_db, args[2], p->value, p->type, p->expire_ms);
      done = true;
    });
  }
  if (!done) FiberChangesNothing();
  co_await RunOn(std::vector<uint32_t>(1, src_shard), [&](Worker& w) {
    if (done && !copy) {
      w.keyspace().Delete(db, args[1]);
      NotifyKeyspaceEvent(kNotifyGeneric, "rename_from", args[1], db);
    }
    w.locks().Release(src_lock.keys, src_lock.exclusive);
  });
  co_await RunOn(std::vector<uint32_t>(1, dst_shard), [&](Worker& w) {
    // After the source's event (rename_from, then rename_to, as Redis publishes them).
    if (done)
      NotifyKeyspaceEvent(kNotifyGeneric, copy ? "copy_to" : "rename_to", args[2], o.dst_db);
    w.locks().Release(dst_lock.keys, true);
  });
  if (!p) {
    copy ? rb.Integer(0) : rb.Error(errors::kNoSuchKey);
  } else if (copy || nx) {
    rb.Integer(done ? 1 : 0);
  } else {
    rb.Ok();
  }
  c->FinishFiber(std::move(out));
}

Fiber KeysFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  uint32_t db = c->db;
  std::string_view pattern = args[1];
  bool all = pattern == "*";
  std::vector<uint32_t> shards = c->worker().engine().AllShards();
  std::vector<std::vector<std::string>> found(shards.size());
  std::vector<LockTable::Request> holds = WholeShardRequests(shards.size(), c->txn_owner);
  for (uint32_t s : shards) co_await LockOn(s, &holds[s]);
  co_await RunOn(shards, [&](Worker& w) {
    auto& mine = found[w.index()];
    int64_t now = w.now_ms();
    w.keyspace().table(db).ForEach([&](Entry* e) {
      if (e->IsExpired(now)) return;
      if (all || GlobMatch(pattern, e->Key())) mine.emplace_back(e->Key());
    });
    w.locks().ReleaseWhole();
  });
  size_t total = 0;
  for (auto& f : found) total += f.size();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  rb.Array(total);
  for (auto& f : found) {
    for (auto& k : f) rb.Bulk(k);
  }
  c->FinishFiber(std::move(out));
}

Fiber ScanFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  uint64_t cursor = 0;
  if (!ParseUint64(args[1], &cursor)) {
    rb.Error("ERR invalid cursor");
    c->FinishFiber(std::move(out));
    co_return;
  }
  std::string_view pattern;
  bool has_pattern = false;
  std::string type;
  int64_t count = 10;
  for (size_t i = 2; i < args.size(); i++) {
    bool has_next = i + 1 < args.size();
    if (EqualsIgnoreCase(args[i], "match") && has_next) {
      pattern = args[++i];
      has_pattern = !(pattern.size() == 1 && pattern[0] == '*');
    } else if (EqualsIgnoreCase(args[i], "count") && has_next) {
      if (!ParseInt64(args[++i], &count)) {
        rb.Error(errors::kNotInteger);
        c->FinishFiber(std::move(out));
        co_return;
      }
      if (count < 1) {
        rb.Error(errors::kSyntax);
        c->FinishFiber(std::move(out));
        co_return;
      }
    } else if (EqualsIgnoreCase(args[i], "type") && has_next) {
      type = Lowercase(args[++i]);
    } else {
      rb.Error(errors::kSyntax);
      c->FinishFiber(std::move(out));
      co_return;
    }
  }
  uint32_t n = c->worker().engine().shard_count();
  uint32_t shard = static_cast<uint32_t>(cursor >> Table::kCursorBits);
  uint64_t pos = cursor & (Table::kCursorEnd - 1);
  std::vector<std::string> keys;
  uint64_t next = 0;
  uint32_t db = c->db;
  // Scan the cursor's shard; when it is exhausted before COUNT keys were found, go on
  // with the next shard in the same call, so an empty or small keyspace ends in one call.
  while (shard < n) {
    uint64_t p = pos;
    co_await RunOn(std::vector<uint32_t>(1, shard), [&](Worker& w) {
      if (w.keyspace().DbSize(db) == 0) {
        p = 0;
        return;
      }
      int64_t budget = count * 10;
      int64_t now = w.now_ms();
      do {
        p = w.keyspace().ScanBucket(db, p, now, [&](Entry* e) {
          if (has_pattern && !GlobMatch(pattern, e->Key())) return;
          if (!type.empty() && type != ValueTypeName(e->Type())) return;
          keys.emplace_back(e->Key());
        });
      } while (p != 0 && static_cast<int64_t>(keys.size()) < count && --budget > 0);
    });
    if (p != 0) {
      next = p | (static_cast<uint64_t>(shard) << Table::kCursorBits);
      break;
    }
    shard++;
    pos = 0;
    if (static_cast<int64_t>(keys.size()) >= count) {
      next = shard < n ? static_cast<uint64_t>(shard) << Table::kCursorBits : 0;
      break;
    }
  }
  rb.Array(2);
  rb.Bulk(std::to_string(next));
  rb.Array(keys.size());
  for (auto& k : keys) rb.Bulk(k);
  c->FinishFiber(std::move(out));
}

Fiber RandomKeyFiber(Client* c, std::shared_ptr<OwnedArgs>) {
  uint32_t db = c->db;
  std::vector<uint32_t> shards = c->worker().engine().AllShards();
  std::vector<std::optional<std::string>> picks(shards.size());
  std::vector<size_t> sizes(shards.size(), 0);
  std::vector<LockTable::Request> holds = WholeShardRequests(shards.size(), c->txn_owner);
  for (uint32_t s : shards) co_await LockOn(s, &holds[s]);
  co_await RunOn(shards, [&](Worker& w) {
    Entry* e = w.keyspace().RandomKey(db, w.now_ms(), w.next_random());
    if (e != nullptr) picks[w.index()] = std::string(e->Key());
    sizes[w.index()] = w.keyspace().DbSize(db);
    w.locks().ReleaseWhole();
  });
  size_t total = 0;
  for (size_t i = 0; i < shards.size(); i++) {
    if (picks[i]) total += sizes[i];
  }
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  if (total == 0) {
    rb.Null();
  } else {
    uint64_t r = c->worker().next_random() % total;
    for (size_t i = 0; i < shards.size(); i++) {
      if (!picks[i]) continue;
      if (r < sizes[i]) {
        rb.Bulk(*picks[i]);
        break;
      }
      r -= sizes[i];
    }
  }
  c->FinishFiber(std::move(out));
}

Fiber DbSizeFiber(Client* c, std::shared_ptr<OwnedArgs>) {
  uint32_t db = c->db;
  std::vector<uint32_t> shards = c->worker().engine().AllShards();
  std::vector<size_t> sizes(shards.size(), 0);
  std::vector<LockTable::Request> holds = WholeShardRequests(shards.size(), c->txn_owner);
  for (uint32_t s : shards) co_await LockOn(s, &holds[s]);
  co_await RunOn(shards, [&](Worker& w) {
    sizes[w.index()] = w.keyspace().DbSize(db);
    w.locks().ReleaseWhole();
  });
  size_t total = 0;
  for (size_t s : sizes) total += s;
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  rb.Integer(static_cast<int64_t>(total));
  c->FinishFiber(std::move(out));
}

Fiber FlushFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  bool all = EqualsIgnoreCase(args[0], "flushall");
  if (args.size() > 2 || (args.size() == 2 && !EqualsIgnoreCase(args[1], "async") &&
                          !EqualsIgnoreCase(args[1], "sync"))) {
    rb.Error(errors::kSyntax);
    c->FinishFiber(std::move(out));
    co_return;
  }
  uint32_t db = c->db;
  // ASYNC (or lazyfree-lazy-user-flush without SYNC) detaches big tables and frees
  // them a slice per loop turn; the databases are empty at once either way.
  bool lazy = args.size() == 2 ? EqualsIgnoreCase(args[1], "async")
                               : c->worker().engine().config().Int("lazyfree-lazy-user-flush") != 0;
  std::vector<uint32_t> shards = c->worker().engine().AllShards();
  std::vector<LockTable::Request> holds = WholeShardRequests(shards.size(), c->txn_owner);
  for (uint32_t s : shards) co_await LockOn(s, &holds[s]);
  co_await RunOn(shards, [&](Worker& w) {
    all ? w.keyspace().FlushAll(lazy) : w.keyspace().FlushDb(db, lazy);
    // Client-side caches: the null invalidation to this worker's tracking clients.
    if (w.engine().tracking_gate_refs.load(std::memory_order_relaxed) > 0) w.tracking().OnFlush();
    w.locks().ReleaseWhole();
  });
  rb.Ok();
  // Queued behind this fiber's reply slot, so it still comes after the reply (and the
  // client may be gone once FinishFiber returns).
  TrackingFlushNotice(*c);
  c->FinishFiber(std::move(out));
}

Fiber SwapDbFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  int64_t a = 0, b = 0;
  int64_t dbs = c->worker().engine().config().Int("databases");
  if (c->worker().engine().process().cluster_mode()) {
    rb.Error("ERR SWAPDB is not allowed in cluster mode");
  } else if (!ParseInt64(args[1], &a)) {
    rb.Error("ERR invalid first DB index");
  } else if (!ParseInt64(args[2], &b)) {
    rb.Error("ERR invalid second DB index");
  } else if (a < 0 || a >= dbs || b < 0 || b >= dbs) {
    rb.Error(errors::kDbIndexOutOfRange);
  } else {
    std::vector<uint32_t> shards = c->worker().engine().AllShards();
    std::vector<LockTable::Request> holds = WholeShardRequests(shards.size(), c->txn_owner);
    for (uint32_t s : shards) co_await LockOn(s, &holds[s]);
    co_await RunOn(shards, [&](Worker& w) {
      w.keyspace().SwapDb(static_cast<uint32_t>(a), static_cast<uint32_t>(b));
      w.locks().ReleaseWhole();
    });
    rb.Ok();
  }
  c->FinishFiber(std::move(out));
}

}  // namespace

void RegisterKeysFamily(CommandRegistry& r) {
  auto add = [&](const char* name, int arity, uint32_t flags, int first, int last, int step,
                 ShardFn fn, FiberFn fiber) {
    CommandSpec s{name, arity, flags | kCmdKeyspace, first, last, step};
    s.shard_fn = fn;
    s.fiber_fn = fiber;
    s.group = "generic";
    r.Add(std::move(s));
  };
  constexpr uint32_t kW = kCmdWrite;
  constexpr uint32_t kR = kCmdReadOnly;
  add("del", -2, kW, 1, -1, 1, CmdDel, CountKeysFiber);
  add("unlink", -2, kW | kCmdFast, 1, -1, 1, CmdDel, CountKeysFiber);
  add("exists", -2, kR | kCmdFast, 1, -1, 1, CmdExists, CountKeysFiber);
  add("touch", -2, kR | kCmdFast, 1, -1, 1, CmdExists, CountKeysFiber);
  add("type", 2, kR | kCmdFast, 1, 1, 1, CmdType, nullptr);
  add("rename", 3, kW, 1, 2, 1, CmdRename, MoveBetweenShardsFiber);
  add("renamenx", 3, kW | kCmdFast, 1, 2, 1, CmdRenameNx, MoveBetweenShardsFiber);
  add("copy", -3, kW | kCmdDenyOom, 1, 2, 1, CmdCopy, MoveBetweenShardsFiber);
  add("move", 3, kW | kCmdFast, 1, 1, 1, CmdMove, nullptr);
  add("keys", 2, kR, 0, 0, 0, nullptr, KeysFiber);
  add("scan", -2, kR, 0, 0, 0, nullptr, ScanFiber);
  add("randomkey", 1, kR, 0, 0, 0, nullptr, RandomKeyFiber);
  add("dbsize", 1, kR | kCmdFast, 0, 0, 0, nullptr, DbSizeFiber);
  add("flushdb", -1, kW, 0, 0, 0, nullptr, FlushFiber);
  add("flushall", -1, kW, 0, 0, 0, nullptr, FlushFiber);
  add("swapdb", 3, kW | kCmdFast, 0, 0, 0, nullptr, SwapDbFiber);
  for (const char* n : {"dbsize", "flushdb", "flushall", "swapdb"})
    r.FindMutable(n)->group = "server";
  {
    CommandSpec s{"object", -2, kR | kCmdKeyspace, 2, 2, 1};
    s.shard_fn = CmdObject;
    s.conn_fn = ObjectConn;
    s.needs_fiber = ObjectNeedsShard;  // true: dispatch to the key's shard
    s.subcommands = &kObjectSubcommands;
    s.group = "generic";
    s.since = "2.2.3";
    r.Add(std::move(s));
  }
}

}  // namespace strata
