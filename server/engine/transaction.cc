// MULTI/EXEC/DISCARD/WATCH/UNWATCH: the client's queue, and EXEC atomic across shards.
//
// The design (docs/ARCHITECTURE.md "Transactions" has the whole essay):
//   - MULTI starts a queue on the connection. Each command is checked as it arrives
//     (unknown, arity, authentication, loading, OOM: an error then marks the transaction
//     failed and EXEC answers EXECABORT) and its arguments are copied into the queue.
//   - EXEC plans the calls: which run on the client's thread (connection commands), which
//     on one shard (their keys hash to it), and which are themselves multi-shard
//     commands (MSET over shards, BLPOP, SORT...) run as nested fibers. The keys of every
//     call, plus the WATCHed ones, are the transaction's lock set.
//   - One shard (every key on it, no nested fiber): the transaction runs as one step on
//     that shard once its keys are free there - inline when that is this worker's shard,
//     else one hop there and back (RunLocked). No lock is taken: a shard runs one step at
//     a time, so nothing interleaves.
//   - Several shards: the fiber takes exclusive locks on every key, shard by shard in
//     increasing order, as the owner `txn_owner` (lock_table.h). A transaction with a
//     whole-keyspace command (FLUSHDB, KEYS, DBSIZE, SCAN, SWAPDB, SORT with patterns...)
//     takes every shard's whole-shard lock instead. Then it checks the WATCHed keys on
//     their shards, runs the calls in order - runs of single-shard calls as one parallel
//     hop (their keys differ across shards, so only each shard's order matters), each
//     nested fiber alone, its lock requests granted under the owner's locks - and
//     releases everything in one last hop. No client sees a state in the middle.
// Thread-safety: the connection's own worker; shard steps run on their shards and write
// only their calls' reply slots.
#include <algorithm>
#include <coroutine>
#include <iterator>
#include <memory>
#include <optional>
#include <unordered_set>

#include "core/hash.h"
#include "core/string_util.h"
#include "server/base/config.h"
#include "server/base/cycle_clock.h"
#include "server/engine/client_connection.h"
#include "server/engine/cluster_routing.h"
#include "server/engine/engine.h"
#include "server/engine/hops.h"
#include "server/engine/pubsub.h"
#include "server/engine/worker.h"

namespace strata {

struct ClientConnection::ExecPlan {
  enum Kind : uint8_t { kConn, kShard, kFiber, kUnwatch };
  struct Call {
    const CommandSpec* spec;
    std::shared_ptr<OwnedArgs> args;
    uint32_t db;
    uint32_t shard;
    Kind kind;
    uint8_t track = 0;  // TrackMode for the client (tracking.h)
  };
  std::vector<Call> calls;
  std::vector<std::string> replies;
  std::vector<uint32_t> shards;           // increasing; one lock request each
  std::vector<LockTable::Request> locks;  // per shard
  std::vector<uint32_t> watch_shards;     // increasing
  bool whole = false;
  bool single = false;  // at most one shard and no nested fiber
  uint64_t owner = 0;
  // Keys in a slot open for migration (cluster_routing.h): where they are decides, once
  // the transaction holds them, whether it runs here or is redirected.
  uint8_t open_slot = 0;                    // OpenSlotBits
  std::vector<std::string_view> open_keys;  // every call's keys (into calls' args)
  bool open_write = false;
  std::string redirect;  // the reply instead of running (the transaction is discarded)
  // The keys its calls gave elements to, per shard: their blocked clients are served
  // once it is done (blocking.h), on each shard as its locks go.
  std::shared_ptr<ReadyHolds> holds;
};

namespace {

constexpr const char* kExecAbort = "EXECABORT Transaction discarded because of previous errors.";

// A transaction's calls on one shard, run by `calls` on w: its writes reach replicas as
// one MULTI/EXEC record (repl_feed.h), and the clients blocked on keys it gave elements
// to are served after it (blocking.h).
template <class Calls>
void RunAsOneUnit(Worker& w, ReadyHolds& holds, Calls calls) {
  bool group = w.repl_on();
  if (group) w.repl_feed().BeginGroup();
  {
    HoldReadyScope hold(&holds);
    calls();
  }
  if (group) w.repl_feed().EndGroup();
  w.ServeHeldReady(holds);
}

}  // namespace

KeyPresence ClientConnection::PresenceOn(Worker& w, const ExecPlan& p, uint32_t shard_count) {
  KeyPresence out;
  for (std::string_view k : p.open_keys) {
    if (ShardOfKey(k, shard_count) != w.index()) continue;
    if (w.keyspace().FindMeta(0, k, w.now_ms()) != nullptr) {
      out.existing++;
    } else {
      out.missing++;
    }
  }
  return out;
}

std::string ClientConnection::OpenSlotRedirect(const SlotRouting* r, const ExecPlan& p,
                                               const KeyPresence& presence) {
  if (r == nullptr) return {};
  RouteQuery q{p.open_write, (p.open_slot & kOpenSlotReadonly) != 0,
               (p.open_slot & kOpenSlotAsking) != 0, &presence};
  RouteDecision d = Route(*r, p.open_keys, q);
  if (d.kind == RouteDecision::kHere) return {};
  return d.kind == RouteDecision::kRedirect ? std::move(d.error) : std::string(kTryAgainError);
}

namespace {

// Runs one single-shard call on the current (owning) worker, its reply into *out.
// who: whose call it is (a client of client_worker); track: its TrackMode (tracking.h).
void RunShardCall(Worker& w, const CommandSpec* spec, CmdArgs args, uint32_t db, int resp,
                  std::string* out, const Client* who, uint32_t client_worker, uint8_t track) {
  uint64_t client = who->id();
  ReplyBuilder rb(out, resp);
  ShardCtx ctx{w, w.keyspace(), db, w.now_ms(), who->is_master()};
  Keyspace::MasterCallScope master_call(ctx.ks, ctx.from_master);
  if (w.eviction().active() && (spec->flags & kCmdDenyOom)) [[unlikely]]
    w.eviction().BeforeWrite(args);
  size_t start = out->size();
  ExecScope exec(client, static_cast<TrackMode>(track), client_worker);
  uint64_t t0 = CycleClock::Now();
  w.BeforeShardCall();
  spec->shard_fn(args, ctx, rb);
  if (w.repl_on()) [[unlikely]]
    w.Propagate(spec, args, db, std::string_view(*out).substr(start));
  if (track == static_cast<uint8_t>(TrackMode::kRead)) [[unlikely]]
    w.tracking().RememberKeys(spec, args, client, client_worker);
  w.CountCall(spec, CycleClock::Now() - t0, out->size() > start && (*out)[start] == '-', args, db,
              who, client_worker != w.index());
}

// Waits for a nested fiber's FinishFiber.
struct AwaitNested {
  Client::NestedReply* n;
  bool await_ready() const { return n->done; }
  void await_suspend(std::coroutine_handle<> h) { n->waiter = h; }
  void await_resume() const {}
};

}  // namespace

void ClientConnection::FlagTransaction() {
  if (multi_ != nullptr) multi_->failed = true;
}

void ClientConnection::Refuse(const CommandSpec* spec, std::string_view error) {
  if (spec != nullptr && (spec->flags & kCmdTransaction) && spec->name == "exec") {
    // EXEC itself refused (EXEC with arguments): the transaction is discarded, as Redis
    // does, naming why.
    multi_.reset();
    UnwatchAll();
    if (error.substr(0, 4) == "ERR ") error.remove_prefix(4);
    ReplyError("EXECABORT Transaction discarded because of: " + std::string(error));
    return;
  }
  FlagTransaction();
  if (cluster_asking) UseAsking(spec);  // a refused command uses ASKING up too (Redis)
  if (is_master_) [[unlikely]]
    NoteErrorToMaster(spec, error);
  ReplyError(error);
}

bool ClientConnection::DispatchTransaction(const CommandSpec* spec, CmdArgs args) {
  std::string_view name = spec->name;
  if (name == "multi") {
    if (multi_ != nullptr) {
      ReplyError("ERR MULTI calls can not be nested");
    } else {
      multi_ = std::make_unique<MultiState>();
      ReplyOk();
    }
    return true;
  }
  if (name == "discard") {
    if (multi_ == nullptr) {
      ReplyError("ERR DISCARD without MULTI");
    } else {
      multi_.reset();
      UnwatchAll();
      ReplyOk();
    }
    return true;
  }
  if (name == "unwatch") {
    UnwatchAll();
    ReplyOk();
    return true;
  }
  if (name == "watch") {
    if (multi_ != nullptr) {
      ReplyError("ERR WATCH inside MULTI is not allowed");
      return true;
    }
    return Watch(args);
  }
  // exec
  if (multi_ == nullptr) {
    ReplyError("ERR EXEC without MULTI");
    return true;
  }
  if (multi_->failed) {
    multi_.reset();
    UnwatchAll();
    ReplyError(kExecAbort);
    return true;
  }
  return Exec(spec);
}

void ClientConnection::ReplyOk() {
  bool suppress = TakeSuppress();
  std::string* t = ReplyTarget(suppress);
  size_t start = t->size();
  t->append("+OK\r\n");
  CommitReply(t, suppress, start);
}

void ClientConnection::Queue(const CommandSpec* spec, CmdArgs args) {
  auto owned = OwnedArgs::Copy(args);
  multi_->bytes += owned->storage.capacity() + owned->views.capacity() * sizeof(std::string_view) +
                   sizeof(OwnedArgs) + sizeof(QueuedCall);
  multi_->calls.push_back(QueuedCall{spec, std::move(owned)});
  bool suppress = TakeSuppress();
  std::string* t = ReplyTarget(suppress);
  size_t start = t->size();
  t->append("+QUEUED\r\n");
  CommitReply(t, suppress, start);
}

uint64_t ClientConnection::TxnOwner() const { return id_ | (uint64_t{1} << 63); }

// ---- WATCH ---------------------------------------------------------------------------

void ClientConnection::NoteWatched(uint32_t db_index, uint32_t shard, std::string_view key) {
  std::string name = std::to_string(db_index);
  name.push_back(':');
  name.append(key);
  if (watched_names_.insert(std::move(name)).second) {
    watched_.push_back(WatchedKey{db_index, shard, std::string(key)});
  }
}

bool ClientConnection::Watch(CmdArgs args) {
  uint32_t n = worker_->engine().shard_count();
  uint32_t here = worker_->index();
  bool remote = false;
  for (size_t i = 1; i < args.size() && !remote; i++) remote = ShardOfKey(args[i], n) != here;
  if (!remote) {
    for (size_t i = 1; i < args.size(); i++) {
      worker_->watches().Watch(TxnOwner(), db, args[i], worker_->now_ms());
      NoteWatched(db, here, args[i]);
    }
    ReplyOk();
    return true;
  }
  fiber_slot_ = ReserveSlot(TakeSuppress());
  fiber_running_ = true;
  inflight_++;
  WatchFiber(this, OwnedArgs::Copy(args));
  return !fiber_running_;
}

Fiber ClientConnection::WatchFiber(ClientConnection* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  uint32_t n = c->worker_->engine().shard_count();
  uint32_t db = c->db;
  uint64_t owner = c->TxnOwner();
  std::vector<uint32_t> shards;
  for (size_t i = 1; i < args.size(); i++) shards.push_back(ShardOfKey(args[i], n));
  std::sort(shards.begin(), shards.end());
  shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
  co_await RunOn(shards, [&](Worker& w) {
    for (size_t i = 1; i < args.size(); i++) {
      if (ShardOfKey(args[i], n) == w.index()) w.watches().Watch(owner, db, args[i], w.now_ms());
    }
  });
  for (size_t i = 1; i < args.size(); i++) c->NoteWatched(db, ShardOfKey(args[i], n), args[i]);
  // Gone meanwhile: OnClosing already dropped what it knew of; drop the rest.
  if (c->closing()) c->UnwatchAll();
  c->FinishFiber("+OK\r\n");
}

void ClientConnection::UnwatchAll() {
  if (watched_.empty()) return;
  std::vector<uint32_t> shards;
  for (const WatchedKey& w : watched_) shards.push_back(w.shard);
  std::sort(shards.begin(), shards.end());
  shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
  uint64_t owner = TxnOwner();
  for (uint32_t s : shards) {
    if (s == worker_->index()) {
      worker_->watches().Unwatch(owner);
    } else {
      worker_->Post(s, MakeTask([owner] { Worker::Current()->watches().Unwatch(owner); }));
    }
  }
  ForgetWatched();
}

void ClientConnection::ForgetWatched() {
  watched_.clear();
  watched_names_.clear();
}

// ---- EXEC ----------------------------------------------------------------------------

std::shared_ptr<ClientConnection::ExecPlan> ClientConnection::Plan() {
  auto plan = std::make_shared<ExecPlan>();
  ExecPlan& p = *plan;
  uint32_t n = worker_->engine().shard_count();
  uint32_t here = worker_->index();
  p.holds = std::make_shared<ReadyHolds>(n);
  int64_t databases = worker_->engine().config().Int("databases");
  uint32_t cur_db = db;
  std::vector<std::vector<LockTable::Key>> keys_by_shard(n);
  std::vector<char> used(n, 0);
  std::vector<std::string_view> keys;
  bool fiber_calls = false;
  p.calls.reserve(multi_->calls.size());
  // CLIENT CACHING yes/no before MULTI holds for every call; one inside the transaction
  // holds for the calls after it (tracking.h).
  ClientTracking saved_tracking = tracking;
  for (QueuedCall& q : multi_->calls) {
    const CommandSpec* spec = q.spec;
    CmdArgs args = q.args->span();
    ExecPlan::Call call{spec, std::move(q.args), cur_db, here, ExecPlan::kConn};
    if (tracking.on) [[unlikely]] {
      call.track = static_cast<uint8_t>(TrackModeFor(spec));
      if (spec->name == "client" && args.size() == 3 && EqualsIgnoreCase(args[1], "caching")) {
        tracking.caching_yes = EqualsIgnoreCase(args[2], "yes") && tracking.optin;
        tracking.caching_no = EqualsIgnoreCase(args[2], "no") && tracking.optout;
      }
    }
    if (spec->flags & kCmdTransaction) {
      call.kind = ExecPlan::kUnwatch;  // the only one queued
    } else if (spec->conn_fn != nullptr && !(spec->needs_fiber && spec->needs_fiber(args))) {
      call.kind = ExecPlan::kConn;
      // SELECT changes the database of the calls after it.
      int64_t index = 0;
      if (spec->name == "select" && args.size() == 2 && ParseInt64(args[1], &index) && index >= 0 &&
          index < databases) {
        cur_db = static_cast<uint32_t>(index);
      }
    } else {
      keys.clear();
      spec->Keys(args, &keys);
      bool multi = false;
      uint32_t shard = here;
      if (!keys.empty()) {
        shard = ShardOfKey(keys[0], n);
        for (size_t i = 1; i < keys.size() && !multi; i++) multi = ShardOfKey(keys[i], n) != shard;
      }
      if (!multi && n > 1 && spec->spans_shards != nullptr && spec->spans_shards(args))
        multi = true;
      // A script of a restricted ACL user runs as its fiber, which checks its calls
      // against the user (ScriptCall::user), as outside a transaction.
      if (!multi && (spec->flags & kCmdScript) && acl_restricted()) [[unlikely]]
        multi = true;
      if (spec->shard_fn != nullptr && !multi &&
          !(keys.empty() && spec->fiber_fn != nullptr && spec->keys_fn == nullptr)) {
        call.kind = ExecPlan::kShard;
        call.shard = shard;
        used[shard] = 1;
      } else {
        call.kind = ExecPlan::kFiber;
        fiber_calls = true;
        // A fiber-only command with no declared keys, or with keys it may reach past
        // (SORT's patterns), needs the whole keyspace held; blocking ones name theirs.
        if (spec->shard_fn == nullptr && !(spec->flags & kCmdBlocking)) p.whole = true;
        // A script over several shards holds its shards whole (sync_hop.h): nested under
        // the transaction's own whole holds.
        if (spec->flags & kCmdScript) p.whole = true;
      }
      for (std::string_view k : keys) {
        uint32_t s = ShardOfKey(k, n);
        keys_by_shard[s].push_back(LockTable::LockKey(cur_db, k));
        used[s] = 1;
      }
    }
    p.calls.push_back(std::move(call));
  }
  if (tracking.on) [[unlikely]] {
    tracking.caching_yes = saved_tracking.caching_yes;
    tracking.caching_no = saved_tracking.caching_no;
  }
  multi_.reset();
  std::vector<char> watch_used(n, 0);
  for (const WatchedKey& w : watched_) {
    keys_by_shard[w.shard].push_back(LockTable::LockKey(w.db, w.key));
    used[w.shard] = 1;
    watch_used[w.shard] = 1;
  }
  p.owner = TxnOwner();
  for (uint32_t s = 0; s < n; s++) {
    if (watch_used[s]) p.watch_shards.push_back(s);
    if (!used[s] && !p.whole) continue;
    LockTable::Request r;
    r.owner = p.owner;
    r.exclusive = true;
    if (p.whole) {
      r.whole = true;
    } else {
      std::vector<LockTable::Key>& ks = keys_by_shard[s];
      std::sort(ks.begin(), ks.end());
      ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
      r.keys = std::move(ks);
    }
    p.shards.push_back(s);
    p.locks.push_back(std::move(r));
  }
  p.single = !p.whole && !fiber_calls && p.shards.size() <= 1;
  p.replies.resize(p.calls.size());
  return plan;
}

bool ClientConnection::Exec(const CommandSpec* exec_spec) {
  std::shared_ptr<ExecPlan> plan = Plan();
  ExecPlan& p = *plan;
  Worker& w = *worker_;
  CommandStat& st = w.stats().commands[exec_spec->id];
  st.calls++;
  w.stats().total_commands_processed++;
  if (exec_open_slot_ != 0) [[unlikely]] {
    p.open_slot = exec_open_slot_;
    exec_open_slot_ = 0;
    for (const ExecPlan::Call& call : p.calls) {
      if (call.spec->first_key <= 0 && call.spec->keys_fn == nullptr) continue;
      call.spec->Keys(call.args->span(), &p.open_keys);
      p.open_write |= call.spec->is_write();
    }
  }
  bool local = p.shards.empty() || p.shards[0] == w.index();
  if (p.single && local && p.open_slot == 0 && (p.locks.empty() || w.locks().CanRun(p.locks[0]))) {
    // The fast path: every key on this worker's shard, free now. Run it here.
    uint64_t t0 = CycleClock::Now();
    bool suppress = TakeSuppress();
    std::string* t = ReplyTarget(suppress);
    size_t start = t->size();
    bool changed = false;
    if (!watched_.empty()) {
      changed = w.watches().Changed(p.owner, w.now_ms());
      w.watches().Unwatch(p.owner);
      ForgetWatched();
    }
    ReplyBuilder rb(t, resp);
    if (changed) {
      rb.NullArray();
    } else {
      rb.Array(p.calls.size());
      RunAsOneUnit(w, *p.holds, [&] {
        for (size_t i = 0; i < p.calls.size(); i++) RunOnClient(p, i, t);
      });
    }
    st.usec_ticks += CycleClock::Now() - t0;
    CommitReply(t, suppress, start);
    if (IsLarge(t)) [[unlikely]]
      OnLargeReply(t);
    return true;
  }
  fiber_slot_ = ReserveSlot(TakeSuppress());
  fiber_running_ = true;
  inflight_++;
  w.stats().multi_shard_commands++;
  ExecFiber(this, std::move(plan));
  return !fiber_running_;
}

// A call that runs on the client's thread: a connection command, UNWATCH, or (in the fast
// path) a call on this worker's own shard.
void ClientConnection::RunOnClient(ExecPlan& plan, size_t index, std::string* out) {
  ExecPlan::Call& call = plan.calls[index];
  CmdArgs args = call.args->span();
  switch (call.kind) {
    case ExecPlan::kUnwatch:
      out->append("+OK\r\n");
      return;
    case ExecPlan::kShard:
      RunShardCall(*worker_, call.spec, args, call.db, resp, out, this, worker_->index(),
                   call.track);
      return;
    case ExecPlan::kConn: {
      ReplyBuilder rb(out, resp);
      size_t start = out->size();
      uint64_t t0 = CycleClock::Now();
      call.spec->conn_fn(*this, args, rb);
      worker_->CountCall(call.spec, CycleClock::Now() - t0,
                         out->size() > start && (*out)[start] == '-', args, call.db, this, false);
      return;
    }
    case ExecPlan::kFiber:
      break;
  }
  ReplyBuilder(out, resp).Error("ERR internal error: a nested command ran on the wrong path");
}

// On one of a cross-shard transaction's shards: the clients blocked on keys it gave
// elements to are served (after its record: this step follows it), then its locks and
// the watches go.
void ClientConnection::ReleaseOn(Worker& w, ExecPlan& p, bool watching) {
  w.ServeHeldReady(*p.holds);
  size_t gi = static_cast<size_t>(std::lower_bound(p.shards.begin(), p.shards.end(), w.index()) -
                                  p.shards.begin());
  if (p.whole) {
    w.locks().ReleaseWhole();
  } else {
    w.locks().Release(p.locks[gi].keys, true);
  }
  if (watching) w.watches().Unwatch(p.owner);
}

Fiber ClientConnection::ExecFiber(ClientConnection* c, std::shared_ptr<ExecPlan> plan) {
  ExecPlan& p = *plan;
  int resp = c->resp;
  uint32_t n = c->worker_->engine().shard_count();
  bool changed = false;
  bool watching = !p.watch_shards.empty();
  if (p.single) {
    // One step on the one shard, once its keys are free there.
    co_await RunLocked(p.shards[0], &p.locks[0], [&](Worker& w) {
      if (p.open_slot != 0) [[unlikely]] {
        p.redirect = OpenSlotRedirect(w.routing(), p, PresenceOn(w, p, n));
        if (!p.redirect.empty()) {
          if (watching) w.watches().Unwatch(p.owner);
          return;
        }
      }
      if (watching) {
        changed = w.watches().Changed(p.owner, w.now_ms());
        w.watches().Unwatch(p.owner);
      }
      if (changed) return;
      RunAsOneUnit(w, *p.holds, [&] {
        for (size_t i = 0; i < p.calls.size(); i++) {
          ExecPlan::Call& call = p.calls[i];
          if (call.kind == ExecPlan::kShard) {
            RunShardCall(w, call.spec, call.args->span(), call.db, resp, &p.replies[i], c,
                         c->worker_->index(), call.track);
          }
        }
      });
    });
    if (!changed && p.redirect.empty()) {
      for (size_t i = 0; i < p.calls.size(); i++) {
        if (p.calls[i].kind != ExecPlan::kShard) c->RunOnClient(p, i, &p.replies[i]);
      }
    }
  } else {
    for (size_t i = 0; i < p.shards.size(); i++) co_await LockOn(p.shards[i], &p.locks[i]);
    if (p.open_slot != 0) [[unlikely]] {
      // Its keys are held: count them where they are, then decide here.
      std::vector<KeyPresence> per(n);
      co_await RunOn(p.shards, [&](Worker& w) { per[w.index()] = PresenceOn(w, p, n); });
      KeyPresence total;
      for (const KeyPresence& x : per) {
        total.existing += x.existing;
        total.missing += x.missing;
      }
      p.redirect = OpenSlotRedirect(c->worker_->routing(), p, total);
    }
    std::vector<uint32_t> released;  // shards whose locks went with the last run of calls
    // With replicas, the transaction reaches them as one record (repl_feed.h): each
    // call's effects are captured on its shard into a group of its own, and the groups
    // are joined here in call order and appended before any lock is released (the
    // last run then keeps its locks, and the release is a hop of its own). A nested
    // multi-shard call runs its steps on several shards at once: its records are
    // captured per shard and joined after it (FiberCaptures, repl_feed.h). A script
    // inside has a record of its own, so a transaction with one keeps one record per
    // shard and run of calls.
    std::vector<ReplGroup> effects;
    if (c->worker_->repl_on() &&
        std::none_of(p.calls.begin(), p.calls.end(), [](const ExecPlan::Call& x) {
          return x.kind == ExecPlan::kFiber && (x.spec->flags & kCmdScript);
        })) {
      effects.resize(p.calls.size());
    }
    const bool one_record = !effects.empty();
    if (watching && p.redirect.empty()) {
      std::vector<char> dirty(n, 0);
      co_await RunOn(p.watch_shards, [&](Worker& w) {
        dirty[w.index()] = w.watches().Changed(p.owner, w.now_ms()) ? 1 : 0;
      });
      changed = std::find(dirty.begin(), dirty.end(), 1) != dirty.end();
    }
    if (!changed && p.redirect.empty()) {
      c->txn_owner = p.owner;
      size_t i = 0;
      while (i < p.calls.size()) {
        ExecPlan::Call& call = p.calls[i];
        if (call.kind == ExecPlan::kFiber) {
          // A multi-shard command, as its own fiber under the transaction's locks.
          NestedReply nested;
          c->nested = &nested;
          c->db = call.db;
          CommandStat& st = c->worker_->stats().commands[call.spec->stat_id];
          st.calls++;
          c->worker_->stats().total_commands_processed++;
          if (call.track != 0) [[unlikely]]
            c->PrepareFiberOrigin(call.spec, call.args->span(), static_cast<TrackMode>(call.track));
          if (c->worker_->repl_on()) [[unlikely]]
            c->worker_->ArmFiberPropagation(c, call.spec, call.args, call.db);
          std::shared_ptr<FiberCaptures> caps;
          if (one_record) {
            // Its records, and its command, go into the call's group (one that is not
            // propagated as itself, a pop say, only captures).
            caps = std::make_shared<FiberCaptures>(n);
            std::shared_ptr<FiberRepl>& r = c->next_fiber_origin.repl;
            if (r == nullptr) {
              r = std::make_shared<FiberRepl>();
              r->claimed.store(true, std::memory_order_relaxed);
            }
            r->captures = caps;
          }
          c->next_fiber_origin.ready_holds = p.holds;
          call.spec->fiber_fn(c, call.args);
          co_await AwaitNested{&nested};
          if (caps != nullptr) caps->JoinInto(&effects[i]);
          if (!nested.reply.empty() && nested.reply[0] == '-') st.failed_calls++;
          p.replies[i] = std::move(nested.reply);
          i++;
          continue;
        }
        // A run of calls up to the next nested one: the shard calls of each shard in
        // order, all shards in parallel (they touch different keys); then the
        // connection calls here, in order.
        size_t j = i;
        std::vector<uint32_t> seg;
        while (j < p.calls.size() && p.calls[j].kind != ExecPlan::kFiber) {
          if (p.calls[j].kind == ExecPlan::kShard) seg.push_back(p.calls[j].shard);
          j++;
        }
        std::sort(seg.begin(), seg.end());
        seg.erase(std::unique(seg.begin(), seg.end()), seg.end());
        // The last run also releases its shards' locks in the same step (one hop fewer).
        bool last = j == p.calls.size() && !one_record;
        co_await RunOn(seg, [&](Worker& w) {
          // Each shard's writes of the run are one record there (repl_feed.h), or each
          // call's go into its own group (above).
          bool group = w.repl_on() && !one_record;
          if (group) w.repl_feed().BeginGroup();
          HoldReadyScope hold(p.holds.get());
          for (size_t k = i; k < j; k++) {
            ExecPlan::Call& x = p.calls[k];
            if (x.kind == ExecPlan::kShard && x.shard == w.index()) {
              SetCaptureTag(k);  // its messages are published in call order
              std::optional<ReplFeed::CaptureScope> capture;
              if (one_record) capture.emplace(w.repl_feed(), &effects[k]);
              RunShardCall(w, x.spec, x.args->span(), x.db, resp, &p.replies[k], c,
                           c->worker_->index(), x.track);
            }
          }
          if (group) w.repl_feed().EndGroup();
          if (last) ReleaseOn(w, p, watching);
        });
        if (last) released = std::move(seg);
        for (size_t k = i; k < j; k++) {
          if (p.calls[k].kind != ExecPlan::kShard) c->RunOnClient(p, k, &p.replies[k]);
        }
        i = j;
      }
      c->txn_owner = 0;
      if (one_record && c->worker_->repl_on()) {
        ReplGroup all;
        for (const ReplGroup& g : effects) all.Add(g);
        uint32_t db = ReplLog::kNoDb;
        std::string record = all.Finish(&db);
        if (!record.empty()) c->worker_->repl_feed().Record(db, record);
      }
    }
    std::vector<uint32_t> rest;
    std::set_difference(p.shards.begin(), p.shards.end(), released.begin(), released.end(),
                        std::back_inserter(rest));
    // Its calls write only keys it locks (every shard when whole): each shard's held
    // keys are served by its release.
    co_await RunOn(rest, [&](Worker& w) { ReleaseOn(w, p, watching); });
  }
  c->ForgetWatched();
  std::string out;
  ReplyBuilder rb(&out, resp);
  if (!p.redirect.empty()) {
    rb.Error(p.redirect);
  } else if (changed) {
    rb.NullArray();
  } else {
    size_t total = 0;
    for (const std::string& r : p.replies) total += r.size();
    out.reserve(total + 16);
    rb.Array(p.replies.size());
    for (const std::string& r : p.replies) out.append(r);
  }
  c->FinishFiber(std::move(out));
}

}  // namespace strata
