// BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP: one fiber for all of them (engine/blocking.h has
// the design). The fiber locks the keys, tries once, and otherwise registers and waits
// for a shard to serve it, for its timeout, or for its client to leave.
#include <cmath>
#include <string>
#include <vector>

#include "core/hash.h"
#include "core/string_util.h"
#include "server/commands/arg_parsers.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/commands/list_ops.h"
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

enum class Kind { kPop, kMove, kMPop };

// Replicas get a blocking command's effects, never the command (engine/repl_feed.h): its
// pop as LPOP/RPOP (with the count it took), its push as LPUSH/RPUSH. `after`: the pop
// was served inside another command's call (the push that woke the client), so it goes
// after that command.
void PropagatePop(Worker& w, uint32_t db, std::string_view key, bool left, size_t n, bool counted,
                  bool after) {
  if (!w.repl_on()) return;
  std::string count = std::to_string(n);
  std::string_view v[3] = {left ? "LPOP" : "RPOP", key, count};
  CmdArgs args(v, counted ? 3 : 2);
  after ? w.repl_feed().EffectAfterCommand(db, args) : w.repl_feed().Effect(db, args);
}

void PropagatePush(Worker& w, uint32_t db, std::string_view key, bool left,
                   std::string_view value) {
  if (!w.repl_on()) return;
  std::string_view v[3] = {left ? "LPUSH" : "RPUSH", key, value};
  w.repl_feed().Effect(db, CmdArgs(v, 3));
}

// A client waiting in a blocking list pop (server/engine/blocking.h), served on the key's shard.
struct ListWaiter final : BlockedClient {
  Kind kind = Kind::kPop;
  bool left = true;         // pop end
  bool to_left = true;      // BLMOVE push end
  std::string destination;  // BLMOVE
  size_t count = 1;         // BLMPOP COUNT

  // Filled in by the serving shard.
  std::vector<std::string> values;
  bool pushed = false;      // BLMOVE: already pushed to the destination (same shard)
  bool wrong_type = false;  // BLMOVE: the destination holds another type

  Readiness Check(Worker& w, std::string_view key) override {
    bool wrong = false;
    int64_t len = OpLength(w.keyspace(), db, key, w.now_ms(), &wrong);
    if (wrong) return Readiness::kOtherType;
    return len == 0 ? Readiness::kEmpty : Readiness::kReady;
  }

  void Take(Worker& w, std::string_view key) override {
    Keyspace& ks = w.keyspace();
    bool wrong = false;
    size_t n = kind == Kind::kMPop ? count : 1;
    bool local_move =
        kind == Kind::kMove && ShardOfKey(destination, w.engine().shard_count()) == w.index();
    bool emptied = false;
    // A move publishes its push before its pop, as Redis: the pop's event waits.
    values = OpPop(ks, db, key, left, n, w.now_ms(), &wrong, !local_move, &emptied);
    if (!local_move) {
      if (!values.empty()) PropagatePop(w, db, key, left, values.size(), kind == Kind::kMPop, true);
      return;
    }
    // Both lists on this shard: the move is completed here, atomically.
    OpLength(ks, db, destination, w.now_ms(), &wrong);
    std::string_view v = values[0];
    if (wrong) {
      // Destination changed type since the client blocked: put the element back.
      bool unused = false;
      OpPush(ks, db, key, left, std::span<const std::string_view>(&v, 1), false, w.now_ms(),
             &unused, false);
      wrong_type = true;
    } else {
      OpPush(ks, db, destination, to_left, std::span<const std::string_view>(&v, 1), false,
             w.now_ms(), &wrong);
      if (w.repl_on()) {
        std::string_view m[5] = {"LMOVE", key, destination, left ? "LEFT" : "RIGHT",
                                 to_left ? "LEFT" : "RIGHT"};
        w.repl_feed().EffectAfterCommand(db, CmdArgs(m, 5));
      }
      NotifyPopped(db, key, left, emptied && key != destination);
      w.SignalKeyReady(db, destination);  // queued: served after this key
    }
    pushed = true;
  }
};

struct BlockingArgs {
  Kind kind = Kind::kPop;
  std::vector<std::string_view> keys;
  bool left = true;
  bool to_left = true;
  std::string_view destination;
  size_t count = 1;
  int64_t timeout_ms = 0;
};

bool ParseEnd(std::string_view s, bool* left) {
  if (EqualsIgnoreCase(s, "left")) {
    *left = true;
    return true;
  }
  if (EqualsIgnoreCase(s, "right")) {
    *left = false;
    return true;
  }
  return false;
}

bool ParseArgs(CmdArgs args, ReplyBuilder& rb, BlockingArgs* a) {
  std::string cmd = Lowercase(args[0]);
  if (cmd == "blpop" || cmd == "brpop") {
    a->left = cmd == "blpop";
    for (size_t i = 1; i + 1 < args.size(); i++) a->keys.push_back(args[i]);
    return ParseBlockingTimeout(args.back(), rb, &a->timeout_ms);
  }
  if (cmd == "brpoplpush" || cmd == "blmove") {
    a->kind = Kind::kMove;
    a->keys.push_back(args[1]);
    a->destination = args[2];
    a->left = false;
    a->to_left = true;
    if (cmd == "blmove" && (!ParseEnd(args[3], &a->left) || !ParseEnd(args[4], &a->to_left))) {
      rb.Error(errors::kSyntax);
      return false;
    }
    return ParseBlockingTimeout(args.back(), rb, &a->timeout_ms);
  }
  // BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
  a->kind = Kind::kMPop;
  if (!ParseBlockingTimeout(args[1], rb, &a->timeout_ms)) return false;
  int64_t numkeys = 0;
  if (!ParseInt64(args[2], &numkeys) || numkeys <= 0) {
    rb.Error("ERR numkeys should be greater than 0");
    return false;
  }
  if (static_cast<size_t>(numkeys) > args.size() - 3) {
    rb.Error(errors::kSyntax);
    return false;
  }
  size_t i = 3;
  for (int64_t k = 0; k < numkeys; k++) a->keys.push_back(args[i++]);
  if (i >= args.size() || !ParseEnd(args[i], &a->left)) {
    rb.Error(errors::kSyntax);
    return false;
  }
  i++;
  bool seen_count = false;
  while (i < args.size()) {
    int64_t n = 0;
    if (EqualsIgnoreCase(args[i], "count") && i + 1 < args.size() && !seen_count) {
      if (!ParseInt64(args[i + 1], &n) || n <= 0) {
        rb.Error("ERR count should be greater than 0");
        return false;
      }
      a->count = static_cast<size_t>(n);
      seen_count = true;
      i += 2;
    } else {
      rb.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

void ReplyServed(ReplyBuilder& rb, const BlockingArgs& a, std::string_view key,
                 const std::vector<std::string>& values) {
  switch (a.kind) {
    case Kind::kPop:
      rb.Array(2);
      rb.Bulk(key);
      rb.Bulk(values[0]);
      break;
    case Kind::kMove:
      rb.Bulk(values[0]);
      break;
    case Kind::kMPop:
      rb.Array(2);
      rb.Bulk(key);
      rb.Array(values.size());
      for (const auto& v : values) rb.Bulk(v);
      break;
  }
}

void ReplyTimeout(ReplyBuilder& rb, const BlockingArgs& a) {
  if (a.kind == Kind::kMove) {
    rb.Null();
  } else {
    rb.NullArray();
  }
}

Fiber BlockingFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  BlockingArgs a;
  if (!ParseArgs(args, rb, &a)) {
    c->FinishFiber(std::move(out));
    co_return;
  }
  Worker& home = c->worker();
  uint32_t db = c->db;
  uint32_t n = home.engine().shard_count();
  std::vector<std::string_view> lock_keys = a.keys;
  if (a.kind == Kind::kMove) lock_keys.push_back(a.destination);
  ShardGroups g = GroupByShard(lock_keys, db, n, true, c->txn_owner);
  if (!co_await TryLockAll(g)) {
    for (size_t i = 0; i < g.shards.size(); i++) co_await LockOn(g.shards[i], &g.locks[i]);
  }

  // One try, as the non-blocking form. BLMOVE checks the destination's type first.
  bool wrong = false;
  std::vector<std::string> got;
  std::string_view from;
  if (a.kind == Kind::kMove) {
    co_await RunOn(std::vector<uint32_t>(1, ShardOfKey(a.destination, n)), [&](Worker& w) {
      OpLength(w.keyspace(), db, a.destination, w.now_ms(), &wrong);
    });
  }
  bool emptied = false;
  bool is_move = a.kind == Kind::kMove;
  for (size_t i = 0; i < a.keys.size() && !wrong && got.empty(); i++) {
    co_await RunOn(std::vector<uint32_t>(1, ShardOfKey(a.keys[i], n)), [&](Worker& w) {
      got = OpPop(w.keyspace(), db, a.keys[i], a.left, a.count, w.now_ms(), &wrong, !is_move,
                  &emptied);
      if (!got.empty())
        PropagatePop(w, db, a.keys[i], a.left, got.size(), a.kind == Kind::kMPop, false);
    });
    from = a.keys[i];
  }
  if (!wrong && !got.empty() && a.kind == Kind::kMove) {
    co_await RunOn(std::vector<uint32_t>(1, ShardOfKey(a.destination, n)), [&](Worker& w) {
      bool unused = false;
      std::string_view v = got[0];
      OpPush(w.keyspace(), db, a.destination, a.to_left, std::span<const std::string_view>(&v, 1),
             false, w.now_ms(), &unused);
      PropagatePush(w, db, a.destination, a.to_left, v);
      w.SignalKeyReady(db, a.destination);
    });
  }
  std::shared_ptr<ListWaiter> blocked;
  // Inside EXEC nothing blocks: an empty try answers as a timeout would.
  if (!wrong && got.empty() && !c->in_exec()) {
    // Nothing to take: wait in every key's queue, registered while the locks are held.
    blocked = std::make_shared<ListWaiter>();
    blocked->origin = home.index();
    blocked->db = db;
    for (std::string_view k : a.keys) blocked->keys.emplace_back(k);
    blocked->kind = a.kind;
    blocked->left = a.left;
    blocked->to_left = a.to_left;
    blocked->destination.assign(a.destination);
    blocked->count = a.count;
    blocked->deadline_ms = a.timeout_ms == 0 ? 0 : home.now_ms() + a.timeout_ms;
    c->set_blocked(blocked);  // before it is queued: a disconnect from here on cancels it
    std::shared_ptr<BlockedClient> waiter = blocked;
    co_await RunOn(g.shards, [&](Worker& w) { JoinQueues(w, waiter, n); });
  }
  co_await RunOn(g.shards, [&](Worker& w) {
    // A move's pop is published after its push, as Redis does.
    if (is_move && !got.empty() && w.index() == ShardOfKey(from, n))
      NotifyPopped(db, from, a.left, emptied && from != a.destination);
    w.locks().Release(g.locks[g.IndexOf(w.index())].keys, true);
  });
  if (blocked == nullptr) {
    if (wrong) {
      rb.Error(errors::kWrongType);
    } else if (got.empty()) {
      ReplyTimeout(rb, a);
    } else {
      ReplyServed(rb, a, from, got);
    }
    c->FinishFiber(std::move(out));
    co_return;
  }

  home.TrackBlocked(blocked);
  co_await BlockAwait(blocked.get());
  c->set_blocked(nullptr);
  co_await RunOn(KeyShards(*blocked, n), [&](Worker& w) { LeaveQueues(w, *blocked, n); });

  if (blocked->state.load() != BlockedClient::kServed) {
    blocked->unblock_error ? rb.Error(kUnblockedError) : ReplyTimeout(rb, a);
  } else if (blocked->wrong_type) {
    rb.Error(errors::kWrongType);
  } else if (a.kind == Kind::kMove && !blocked->pushed) {
    // The destination is on another shard: push under its lock.
    uint32_t dst = ShardOfKey(a.destination, n);
    LockTable::Request dst_lock{{LockTable::LockKey(db, a.destination)},
                                true,
                                true,
                                {},
                                db,
                                {a.destination},
                                false,
                                c->txn_owner};
    co_await LockOn(dst, &dst_lock);
    bool dst_wrong = false;
    co_await RunOn(std::vector<uint32_t>(1, dst), [&](Worker& w) {
      OpLength(w.keyspace(), db, a.destination, w.now_ms(), &dst_wrong);
      if (!dst_wrong) {
        std::string_view v = blocked->values[0];
        OpPush(w.keyspace(), db, a.destination, a.to_left, std::span<const std::string_view>(&v, 1),
               false, w.now_ms(), &dst_wrong);
        if (!dst_wrong) PropagatePush(w, db, a.destination, a.to_left, v);
        w.SignalKeyReady(db, a.destination);
      }
      w.locks().Release(dst_lock.keys, true);
    });
    if (dst_wrong) {
      // Put the element back where it came from.
      std::string src = blocked->served_key;
      co_await RunOn(std::vector<uint32_t>(1, ShardOfKey(src, n)), [&](Worker& w) {
        bool unused = false;
        std::string_view v = blocked->values[0];
        OpPush(w.keyspace(), db, src, a.left, std::span<const std::string_view>(&v, 1), false,
               w.now_ms(), &unused);
        PropagatePush(w, db, src, a.left, v);
        w.SignalKeyReady(db, src);
      });
      rb.Error(errors::kWrongType);
    } else {
      ReplyServed(rb, a, blocked->served_key, blocked->values);
    }
  } else {
    ReplyServed(rb, a, blocked->served_key, blocked->values);
  }
  c->FinishFiber(std::move(out));
}

}  // namespace

void RegisterBlockingFamily(CommandRegistry& r) {
  auto add = [&](const char* name, int arity, int first, int last, const char* since,
                 const char* summary) {
    CommandSpec s{name, arity, kCmdWrite | kCmdList | kCmdBlocking, first, last, 1};
    s.fiber_fn = BlockingFiber;
    s.group = "list";
    s.since = since;
    s.summary = summary;
    r.Add(std::move(s));
  };
  add("blpop", -3, 1, -2, "2.0.0",
      "Removes and returns the first element in a list, or blocks until one is available.");
  add("brpop", -3, 1, -2, "2.0.0",
      "Removes and returns the last element in a list, or blocks until one is available.");
  add("brpoplpush", 4, 1, 2, "2.2.0",
      "Pops an element from a list, pushes it to another list and returns it; blocks until an "
      "element is available.");
  add("blmove", 6, 1, 2, "6.2.0",
      "Pops an element from a list, pushes it to another list and returns it; blocks until an "
      "element is available.");
  add("blmpop", -5, 3, -2, "7.0.0",
      "Pops the first elements from one of multiple lists; blocks until an element is available.");
}

}  // namespace strata
