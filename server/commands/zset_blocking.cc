// BZPOPMIN, BZPOPMAX and BZMPOP: the blocking sorted-set pops, on the machinery of
// blocking.h. The fiber locks the keys, tries once as ZPOPMIN/ZMPOP would, and otherwise
// registers one ZSetWaiter in every key's queue and waits until
// a shard serves it (a ZADD, ZINCRBY or STORE signals the key), its timeout passes, or its
// client leaves.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/hash.h"
#include "core/string_util.h"
#include "server/commands/arg_parsers.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/commands/zset_args.h"
#include "server/commands/zset_ops.h"
#include "server/engine/blocking.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/hops.h"
#include "server/engine/shard_groups.h"
#include "server/engine/try_lock_all.h"
#include "server/engine/worker.h"

namespace strata {
namespace {

// Replicas get the pop, never the blocking command (engine/repl_feed.h): ZPOPMIN/ZPOPMAX
// key count. `after`: served inside the write that woke the client, so after it.
void PropagateZPop(Worker& w, uint32_t db, std::string_view key, bool max, size_t n, bool after) {
  if (!w.repl_on()) return;
  std::string count = std::to_string(n);
  std::string_view v[3] = {max ? "ZPOPMAX" : "ZPOPMIN", key, count};
  after ? w.repl_feed().EffectAfterCommand(db, CmdArgs(v, 3))
        : w.repl_feed().Effect(db, CmdArgs(v, 3));
}

// A client waiting in a blocking sorted-set pop (server/engine/blocking.h), served on the key's
// shard.
struct ZSetWaiter final : BlockedClient {
  bool max = false;  // pop the highest scores
  size_t count = 1;  // BZMPOP COUNT

  // Filled in by the serving shard.
  std::vector<std::string> values;
  std::vector<double> scores;

  Readiness Check(Worker& w, std::string_view key) override {
    bool wrong = false;
    int64_t len = OpZCard(w.keyspace(), db, key, w.now_ms(), &wrong);
    if (wrong) return Readiness::kOtherType;
    return len == 0 ? Readiness::kEmpty : Readiness::kReady;
  }

  void Take(Worker& w, std::string_view key) override {
    bool wrong = false;
    ZPopped got = OpZPop(w.keyspace(), db, key, max, count, w.now_ms(), &wrong);
    if (!got.empty()) PropagateZPop(w, db, key, max, got.size(), true);
    for (auto& [m, s] : got) {
      values.push_back(std::move(m));
      scores.push_back(s);
    }
  }
};

struct ZBlockingArgs {
  bool mpop = false;  // BZMPOP
  bool max = false;
  std::vector<std::string_view> keys;
  size_t count = 1;
  int64_t timeout_ms = 0;
};

bool ParseArgs(CmdArgs args, ReplyBuilder& rb, ZBlockingArgs* a) {
  std::string cmd = Lowercase(args[0]);
  if (cmd != "bzmpop") {
    // BZPOPMIN/BZPOPMAX key [key ...] timeout
    a->max = cmd == "bzpopmax";
    if (!ParseBlockingTimeout(args.back(), rb, &a->timeout_ms)) return false;
    for (size_t i = 1; i + 1 < args.size(); i++) a->keys.push_back(args[i]);
    return true;
  }
  // BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
  a->mpop = true;
  if (!ParseBlockingTimeout(args[1], rb, &a->timeout_ms)) return false;
  int64_t numkeys = 0;
  if (!ParseInt64(args[2], &numkeys) || numkeys <= 0) {
    rb.Error("ERR numkeys should be greater than 0");
    return false;
  }
  if (static_cast<uint64_t>(numkeys) >= args.size() - 3) {
    rb.Error(errors::kSyntax);
    return false;
  }
  size_t i = 3;
  for (int64_t k = 0; k < numkeys; k++) a->keys.push_back(args[i++]);
  if (EqualsIgnoreCase(args[i], "min")) {
    a->max = false;
  } else if (EqualsIgnoreCase(args[i], "max")) {
    a->max = true;
  } else {
    rb.Error(errors::kSyntax);
    return false;
  }
  bool seen_count = false;
  for (i++; i < args.size(); i++) {
    int64_t n = 0;
    if (!seen_count && EqualsIgnoreCase(args[i], "count") && i + 1 < args.size()) {
      if (!ParseInt64(args[++i], &n) || n <= 0) {
        rb.Error("ERR count should be greater than 0");
        return false;
      }
      a->count = static_cast<size_t>(n);
      seen_count = true;
    } else {
      rb.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

void ReplyServed(ReplyBuilder& rb, const ZBlockingArgs& a, std::string_view key,
                 const std::vector<std::string>& members, const std::vector<double>& scores) {
  if (!a.mpop) {
    rb.Array(3);
    rb.Bulk(key);
    rb.Bulk(members[0]);
    rb.Double(scores[0]);
    return;
  }
  rb.Array(2);
  rb.Bulk(key);
  rb.Array(members.size());
  for (size_t i = 0; i < members.size(); i++) {
    rb.Array(2);
    rb.Bulk(members[i]);
    rb.Double(scores[i]);
  }
}

Fiber ZBlockingFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  ZBlockingArgs a;
  if (!ParseArgs(args, rb, &a)) {
    c->FinishFiber(std::move(out));
    co_return;
  }
  Worker& home = c->worker();
  uint32_t db = c->db;
  uint32_t n = home.engine().shard_count();
  ShardGroups g = GroupByShard(a.keys, db, n, true, c->txn_owner);
  if (!co_await TryLockAll(g)) {
    for (size_t i = 0; i < g.shards.size(); i++) co_await LockOn(g.shards[i], &g.locks[i]);
  }

  // One try, as ZPOPMIN/ZMPOP would.
  bool wrong = false;
  ZPopped got;
  std::string_view from;
  for (size_t i = 0; i < a.keys.size() && !wrong && got.empty(); i++) {
    co_await RunOn(std::vector<uint32_t>(1, ShardOfKey(a.keys[i], n)), [&](Worker& w) {
      got = OpZPop(w.keyspace(), db, a.keys[i], a.max, a.count, w.now_ms(), &wrong);
      if (!got.empty()) PropagateZPop(w, db, a.keys[i], a.max, got.size(), false);
    });
    from = a.keys[i];
  }
  std::shared_ptr<ZSetWaiter> blocked;
  // Inside EXEC nothing blocks: an empty try answers as a timeout would.
  if (!wrong && got.empty() && !c->in_exec()) {
    // Nothing to take: wait in every key's queue, registered while the locks are held.
    blocked = std::make_shared<ZSetWaiter>();
    blocked->origin = home.index();
    blocked->db = db;
    for (std::string_view k : a.keys) blocked->keys.emplace_back(k);
    blocked->max = a.max;
    blocked->count = a.count;
    blocked->deadline_ms = a.timeout_ms == 0 ? 0 : home.now_ms() + a.timeout_ms;
    c->set_blocked(blocked);  // before it is queued: a disconnect from here on cancels it
    std::shared_ptr<BlockedClient> waiter = blocked;
    co_await RunOn(g.shards, [&](Worker& w) { JoinQueues(w, waiter, n); });
  }
  co_await RunOn(g.shards,
                 [&](Worker& w) { w.locks().Release(g.locks[g.IndexOf(w.index())].keys, true); });
  if (blocked == nullptr) {
    if (wrong) {
      rb.Error(errors::kWrongType);
    } else if (got.empty()) {
      rb.NullArray();
    } else {
      std::vector<std::string> members;
      std::vector<double> scores;
      for (auto& [m, s] : got) {
        members.push_back(std::move(m));
        scores.push_back(s);
      }
      ReplyServed(rb, a, from, members, scores);
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
  } else if (blocked->state.load() != BlockedClient::kServed || blocked->values.empty()) {
    rb.NullArray();
  } else {
    ReplyServed(rb, a, blocked->served_key, blocked->values, blocked->scores);
  }
  c->FinishFiber(std::move(out));
}

}  // namespace

void RegisterZSetBlockingCommands(CommandRegistry& r) {
  auto add = [&](const char* name, int arity, uint32_t fast, int first, int last, const char* since,
                 const char* summary) {
    CommandSpec s{name, arity, kCmdWrite | kCmdSortedSet | kCmdBlocking | fast, first, last, 1};
    s.fiber_fn = ZBlockingFiber;
    s.group = "sorted-set";
    s.since = since;
    s.summary = summary;
    r.Add(std::move(s));
  };
  add("bzpopmin", -3, kCmdFast, 1, -2, "5.0.0",
      "Removes and returns the member with the lowest score from one or more sorted sets. Blocks "
      "until a member is available otherwise. Deletes the sorted set if the last element was "
      "popped.");
  add("bzpopmax", -3, kCmdFast, 1, -2, "5.0.0",
      "Removes and returns the member with the highest score from one or more sorted sets. "
      "Blocks until a member available otherwise. Deletes the sorted set if the last element "
      "was popped.");
  add("bzmpop", -5, 0, 3, -2, "7.0.0",
      "Removes and returns a member by score from one or more sorted sets. Blocks until a member "
      "is available otherwise. Deletes the sorted set if the last element was popped.");
}

}  // namespace strata
