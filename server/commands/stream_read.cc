// XREAD and XREADGROUP: reads of one or more streams that may block.
//
// Routing: the keys follow STREAMS (keys_fn). A call whose keys sit on one shard and that
// does not block runs there as a shard command (the fast path); any other call runs as
// a fiber (StreamReadFiber) that locks the keys' shards, reads each key on its shard and,
// when nothing is there and BLOCK was given, waits in every key's queue of the blocking
// machinery (server/engine/blocking.h) as the blocking list pops do. XADD signals its
// key; the first waiter in FIFO order whose stream now holds entries after its position
// is served on the key's shard: an XREAD waiter reads (the key stays ready for the next
// waiter), an XREADGROUP waiter takes the new entries for its consumer (the group's
// position moves, so the next waiter of that group keeps waiting).
//
// "$" is resolved to the stream's last ID while the keys are locked, before the wait;
// a history read of XREADGROUP (an ID other than ">") never blocks, as in Redis. Inside
// EXEC nothing blocks; in a script BLOCK is refused (lua_vm.cc).
#include <string>
#include <vector>

#include "core/hash.h"
#include "core/string_util.h"
#include "server/commands/arg_parsers.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/commands/stream_repl.h"
#include "server/commands/stream_util.h"
#include "server/engine/blocking.h"
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

constexpr std::string_view kUnbalanced =
    "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.";

struct ReadArgs {
  bool group_read = false;
  std::string_view group, consumer;
  bool noack = false;
  size_t count = 0;  // 0: no limit
  bool block = false;
  int64_t timeout_ms = 0;  // with block: 0 waits forever
  std::vector<std::string_view> keys;
  std::vector<std::string_view> ids;
};

// The index of the first key (after STREAMS), 0 when there is none.
size_t StreamsPos(CmdArgs args, bool group_read) {
  for (size_t i = 1; i < args.size(); i++) {
    if (EqualsIgnoreCase(args[i], "streams")) return i + 1;
    if (EqualsIgnoreCase(args[i], "block") || EqualsIgnoreCase(args[i], "count")) {
      i++;
    } else if (group_read && EqualsIgnoreCase(args[i], "group")) {
      i += 2;
    }
  }
  return 0;
}

void ReadKeys(CmdArgs args, std::vector<std::string_view>* out) {
  bool group_read = EqualsIgnoreCase(args[0], "xreadgroup");
  size_t pos = StreamsPos(args, group_read);
  if (pos == 0 || pos >= args.size() || (args.size() - pos) % 2 != 0) return;
  size_t n = (args.size() - pos) / 2;
  for (size_t i = 0; i < n; i++) out->push_back(args[pos + i]);
}

bool ParseRead(CmdArgs args, ReplyBuilder& rb, ReadArgs* a) {
  a->group_read = EqualsIgnoreCase(args[0], "xreadgroup");
  size_t streams = 0;
  for (size_t i = 1; i < args.size(); i++) {
    std::string_view o = args[i];
    size_t more = args.size() - i - 1;
    if (EqualsIgnoreCase(o, "block") && more >= 1) {
      int64_t ms = 0;
      if (!ParseInt64(args[++i], &ms)) {
        rb.Error("ERR timeout is not an integer or out of range");
        return false;
      }
      if (ms < 0) {
        rb.Error("ERR timeout is negative");
        return false;
      }
      if (ms > (int64_t{1} << 50)) {  // past any clock: now + ms would overflow
        rb.Error("ERR timeout is out of range");
        return false;
      }
      a->block = true;
      a->timeout_ms = ms;
    } else if (EqualsIgnoreCase(o, "count") && more >= 1) {
      int64_t n = 0;
      if (!ParseInt64(args[++i], &n)) {
        rb.Error(errors::kNotInteger);
        return false;
      }
      a->count = n > 0 ? static_cast<size_t>(n) : 0;
    } else if (EqualsIgnoreCase(o, "streams") && more >= 1) {
      streams = i + 1;
      break;
    } else if (EqualsIgnoreCase(o, "group") && more >= 2) {
      if (!a->group_read) {
        rb.Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
        return false;
      }
      a->group = args[i + 1];
      a->consumer = args[i + 2];
      i += 2;
    } else if (EqualsIgnoreCase(o, "noack")) {
      if (!a->group_read) {
        rb.Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
        return false;
      }
      a->noack = true;
    } else {
      rb.Error(errors::kSyntax);
      return false;
    }
  }
  if (streams == 0) {
    rb.Error(errors::kSyntax);
    return false;
  }
  if ((args.size() - streams) % 2 != 0) {
    rb.Error(kUnbalanced);
    return false;
  }
  if (a->group_read && a->group.empty() && a->consumer.empty()) {
    rb.Error("ERR Missing GROUP option for XREADGROUP");
    return false;
  }
  size_t n = (args.size() - streams) / 2;
  for (size_t i = 0; i < n; i++) {
    a->keys.push_back(args[streams + i]);
    std::string_view id = args[streams + n + i];
    a->ids.push_back(id);
    if (id == ">") {
      if (!a->group_read) {
        rb.Error(
            "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
            "<consumer> option.");
        return false;
      }
    } else if (id == "$") {
      if (a->group_read) {
        rb.Error(
            "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
            "history of this consumer by specifying a proper ID, or use the > ID to get new "
            "messages. The $ ID would just return an empty result set.");
        return false;
      }
    } else {
      StreamId unused;
      if (!ParseStreamId(id, 0, true, &unused, nullptr)) {
        rb.Error(kInvalidStreamId);
        return false;
      }
    }
  }
  return true;
}

// One key's part of the reply: its entries (RESP, the array of entries) and whether the
// key appears in the reply at all.
struct KeyPart {
  bool include = false;
  std::string entries;
  StreamId after;  // XREAD: the position read after ("$" resolved)
};

// Reads key i on its shard. False with *error set when the key cannot be read
// (WRONGTYPE, NOGROUP).
bool ReadKey(Worker& w, uint32_t db, int resp, const ReadArgs& a, size_t i, KeyPart* part,
             std::string* error, EffectPlace place = EffectPlace::kNow) {
  ShardCtx ctx{w, w.keyspace(), db, w.now_ms()};
  std::string err;
  ReplyBuilder erb(&err, resp);
  Entry* e;
  StreamObject* s;
  if (!LookupStream(ctx, a.keys[i], erb, !a.group_read, &e, &s)) {
    *error = err;
    return false;
  }
  std::string_view id = a.ids[i];
  ReplyBuilder rb(&part->entries, resp);
  size_t n = 0;
  std::string body;
  ReplyBuilder b(&body, resp);
  if (!a.group_read) {
    if (id == "$") {
      part->after = s != nullptr ? s->last_id() : StreamId{};
    } else {
      ParseStreamId(id, 0, true, &part->after, nullptr);
    }
    if (s == nullptr) return true;
    StreamId start = part->after;
    if (!start.Increment()) return true;
    for (StreamIterator it = s->Range(start, StreamId::Max()); it.Valid(); it.Next()) {
      if (a.count > 0 && n == a.count) break;
      ReplyStreamEntry(b, it.entry());
      n++;
    }
    if (n == 0) return true;
    part->include = true;
    rb.Array(n);
    part->entries.append(body);
    return true;
  }
  StreamGroup* g = s != nullptr ? s->FindGroup(a.group) : nullptr;
  if (g == nullptr) {
    *error = "-" + NoGroupError(a.keys[i], a.group) + " in XREADGROUP with GROUP option\r\n";
    return false;
  }
  size_t before = s->Bytes();
  // As Redis 7.0: a consumer that does not exist yet is created only when there is
  // something new to give it (or for a history read), with its keyspace event.
  bool has_new = g->last_id < s->last_entry_id();
  StreamConsumer* c = s->FindConsumer(g, a.consumer);
  // Replicas get the read's effects (stream_repl.h), collected only when one listens.
  StreamEffects fx(w, db, a.keys[i], *g, place);
  std::vector<StreamId> delivered;
  if (c != nullptr || id != ">" || has_new) {
    bool created = false;
    c = s->TouchConsumer(g, a.consumer, w.now_ms(), &created);  // an attempt is "seen"
    if (created) {
      NotifyKeyspaceEvent(kNotifyStream, "xgroup-createconsumer", a.keys[i], db);
      fx.ConsumerCreated(a.consumer);
    }
  }
  if (c == nullptr) {
    part->include = false;
    ctx.ks.Recharge(e, before);
    return true;
  }
  if (id == ">") {
    StreamId last_before = g->last_id;
    n = s->ReadGroupNew(g, c, a.count, a.noack, w.now_ms(), [&](const StreamEntry& entry) {
      ReplyStreamEntry(b, entry);
      if (fx.on() && !a.noack) delivered.push_back(entry.id);
    });
    part->include = n > 0;
    fx.Claimed(delivered);
    if (g->last_id != last_before) fx.GroupPosition();
  } else {
    // The consumer's pending entries after the ID (exclusive, as Redis reads them).
    StreamId start;
    ParseStreamId(id, 0, true, &start, nullptr);
    if (!start.Increment()) start = StreamId::Max();
    n = s->ReadGroupHistory(g, c, start, a.count, w.now_ms(),
                            [&](StreamId eid, const StreamEntry* entry) {
                              if (entry != nullptr) {
                                ReplyStreamEntry(b, *entry);
                                // Delivered again: a new time and count.
                                if (fx.on()) delivered.push_back(eid);
                              } else {
                                b.Array(2);
                                ReplyStreamId(b, eid);
                                b.NullArray();
                              }
                            });
    part->include = true;  // a history read is always in the reply, even empty
    fx.Claimed(delivered);
  }
  ctx.ks.Recharge(e, before);
  rb.Array(n);
  part->entries.append(body);
  return true;
}

void ReplyParts(ReplyBuilder& rb, const ReadArgs& a, const std::vector<KeyPart>& parts) {
  size_t n = 0;
  for (const KeyPart& p : parts) n += p.include ? 1 : 0;
  if (n == 0) {
    rb.NullArray();
    return;
  }
  rb.resp() == 3 ? rb.Map(n) : rb.Array(n);
  for (size_t i = 0; i < parts.size(); i++) {
    if (!parts[i].include) continue;
    if (rb.resp() != 3) rb.Array(2);
    rb.Bulk(a.keys[i]);
    rb.buffer()->append(parts[i].entries);
  }
}

// The fast path: every key on this shard, no BLOCK (or inside EXEC or a script, where
// nothing blocks).
void CmdXRead(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  ReadArgs a;
  if (!ParseRead(args, rb, &a)) return;
  std::vector<KeyPart> parts(a.keys.size());
  // Every key is checked before any group read moves a position (as Redis checks
  // groups first).
  if (a.group_read) {
    for (size_t i = 0; i < a.keys.size(); i++) {
      Entry* e;
      StreamObject* s;
      if (!LookupStream(ctx, a.keys[i], rb, false, &e, &s)) return;
      if (s == nullptr || s->FindGroup(a.group) == nullptr) {
        rb.Error(NoGroupError(a.keys[i], a.group) + " in XREADGROUP with GROUP option");
        return;
      }
    }
  }
  for (size_t i = 0; i < a.keys.size(); i++) {
    std::string error;
    if (!ReadKey(ctx.worker, ctx.db, rb.resp(), a, i, &parts[i], &error)) {
      rb.buffer()->append(error);
      return;
    }
  }
  ReplyParts(rb, a, parts);
}

// A client blocked in XREAD or XREADGROUP (server/engine/blocking.h).
struct StreamWaiter final : BlockedClient {
  ReadArgs args;  // views into the fiber's arguments, alive while it waits
  int resp = 2;
  std::vector<StreamId> after;  // XREAD: per key

  // Filled in by the serving shard.
  KeyPart part;
  size_t served_index = 0;

  size_t IndexOf(std::string_view key) const {
    for (size_t i = 0; i < keys.size(); i++) {
      if (keys[i] == key) return i;
    }
    return 0;
  }

  // kEmpty stops the key's queue from being served further, so it is returned only when
  // nothing there can be read at all; a stream with nothing for this waiter (another
  // group, a position ahead) answers kOtherType, which passes over the waiter and goes on
  // to the next one.
  Readiness Check(Worker& w, std::string_view key) override {
    Entry* e = w.keyspace().FindMeta(db, key, w.now_ms(), false);
    if (e == nullptr) return Readiness::kEmpty;
    if (e->Type() != ValueType::kStream) return Readiness::kOtherType;
    const auto* s = static_cast<const StreamObject*>(e->Object());
    if (s->Length() == 0) return Readiness::kEmpty;
    if (args.group_read) {
      const StreamGroup* g = s->FindGroup(args.group);
      if (g == nullptr) return Readiness::kOtherType;
      return g->last_id < s->last_entry_id() ? Readiness::kReady : Readiness::kOtherType;
    }
    return after[IndexOf(key)] < s->last_entry_id() ? Readiness::kReady : Readiness::kOtherType;
  }

  void Take(Worker& w, std::string_view key) override {
    served_index = IndexOf(key);
    ReadArgs one = args;
    std::string error;
    if (!args.group_read) {
      // Read after the position the client had ("$" already resolved).
      std::string id = after[served_index].ToString();
      one.ids[served_index] = id;
      ReadKey(w, db, resp, one, served_index, &part, &error);
      return;
    }
    // Served inside the XADD that woke it: its effects follow the XADD's record.
    ReadKey(w, db, resp, one, served_index, &part, &error, EffectPlace::kAfterCommand);
  }
};

Fiber StreamReadFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  ReadArgs a;
  if (!ParseRead(args, rb, &a)) {
    c->FinishFiber(std::move(out));
    co_return;
  }
  Worker& home = c->worker();
  uint32_t db = c->db;
  uint32_t n = home.engine().shard_count();
  int resp = c->resp;
  ShardGroups g = GroupByShard(a.keys, db, n, a.group_read, c->txn_owner);
  if (!co_await TryLockAll(g)) {
    for (size_t i = 0; i < g.shards.size(); i++) co_await LockOn(g.shards[i], &g.locks[i]);
  }

  std::vector<KeyPart> parts(a.keys.size());
  std::vector<std::string> errors(a.keys.size());
  if (a.group_read) {
    // Every key's group is checked before any position moves.
    co_await RunOn(g.shards, [&](Worker& w) {
      for (size_t p : g.positions[g.IndexOf(w.index())]) {
        Entry* e = w.keyspace().FindMeta(db, a.keys[p], w.now_ms(), false);
        if (e == nullptr || e->Type() != ValueType::kStream) {
          if (e != nullptr)
            errors[p] = "-" + std::string(errors::kWrongType) + "\r\n";
          else
            errors[p] =
                "-" + NoGroupError(a.keys[p], a.group) + " in XREADGROUP with GROUP option\r\n";
          continue;
        }
        if (static_cast<const StreamObject*>(e->Object())->FindGroup(a.group) == nullptr)
          errors[p] =
              "-" + NoGroupError(a.keys[p], a.group) + " in XREADGROUP with GROUP option\r\n";
      }
    });
  }
  std::string error;
  for (const std::string& e : errors) {
    if (!e.empty()) {
      error = e;
      break;
    }
  }
  if (error.empty()) {
    co_await RunOn(g.shards, [&](Worker& w) {
      for (size_t p : g.positions[g.IndexOf(w.index())]) {
        ReadKey(w, db, resp, a, p, &parts[p], &errors[p]);
      }
    });
    for (const std::string& e : errors) {
      if (!e.empty()) {
        error = e;
        break;
      }
    }
  }
  bool any = false;
  bool history = false;
  for (size_t i = 0; i < parts.size(); i++) {
    any |= parts[i].include;
    history |= a.group_read && a.ids[i] != ">";
  }
  std::shared_ptr<StreamWaiter> blocked;
  if (error.empty() && !any && !history && a.block && !c->in_exec()) {
    blocked = std::make_shared<StreamWaiter>();
    blocked->origin = home.index();
    blocked->db = db;
    for (std::string_view k : a.keys) blocked->keys.emplace_back(k);
    blocked->args = a;
    blocked->resp = resp;
    for (const KeyPart& p : parts) blocked->after.push_back(p.after);
    blocked->deadline_ms = a.timeout_ms == 0 ? 0 : home.now_ms() + a.timeout_ms;
    // Known to the connection before it joins the queues: a disconnect from here on
    // cancels it (else a waiter of a gone client could be served later).
    c->set_blocked(blocked);
    std::shared_ptr<BlockedClient> waiter = blocked;
    co_await RunOn(g.shards, [&](Worker& w) { JoinQueues(w, waiter, n); });
  }
  co_await RunOn(g.shards, [&](Worker& w) {
    w.locks().Release(g.locks[g.IndexOf(w.index())].keys, a.group_read);
  });
  if (blocked == nullptr) {
    if (!error.empty()) {
      out.append(error);
    } else {
      ReplyParts(rb, a, parts);
    }
    c->FinishFiber(std::move(out));
    co_return;
  }
  home.TrackBlocked(blocked);
  co_await BlockAwait(blocked.get());
  c->set_blocked(nullptr);
  co_await RunOn(KeyShards(*blocked, n), [&](Worker& w) { LeaveQueues(w, *blocked, n); });
  if (blocked->unblock_error) {
    rb.Error(kUnblockedError);
  } else if (blocked->state.load() != BlockedClient::kServed || !blocked->part.include) {
    rb.NullArray();
  } else {
    std::vector<KeyPart> served(a.keys.size());
    served[blocked->served_index] = std::move(blocked->part);
    ReplyParts(rb, a, served);
  }
  c->FinishFiber(std::move(out));
}

// A call that blocks needs the fiber even when its keys share a shard.
bool ReadMayBlock(CmdArgs args) {
  size_t streams = StreamsPos(args, EqualsIgnoreCase(args[0], "xreadgroup"));
  for (size_t i = 1; i + 1 < args.size() && (streams == 0 || i < streams); i++) {
    if (EqualsIgnoreCase(args[i], "block")) return true;
  }
  return false;
}

}  // namespace

void RegisterStreamReadCommands(CommandRegistry& r) {
  auto add = [&](const char* name, int arity, uint32_t flags, const char* summary) {
    // Not kCmdBlocking: scripts may call them without BLOCK (lua_vm.cc refuses BLOCK).
    CommandSpec s{name, arity, flags | kCmdStream, 1, 1, 1};
    s.shard_fn = CmdXRead;
    s.fiber_fn = StreamReadFiber;
    s.keys_fn = ReadKeys;
    s.may_block = ReadMayBlock;
    s.group = "stream";
    s.since = "5.0.0";
    s.summary = summary;
    r.Add(std::move(s));
  };
  add("xread", -4, kCmdReadOnly,
      "Returns messages from multiple streams with IDs greater than the ones requested. Blocks "
      "until a message is available otherwise.");
  add("xreadgroup", -7, kCmdWrite,
      "Returns new or historical messages from a stream for a consumer in a group. Blocks until "
      "a message is available otherwise.");
}

}  // namespace strata
