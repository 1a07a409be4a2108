#include "server/engine/client_connection.h"

#include <cstdio>

#include "core/hash.h"
#include "core/string_util.h"
#include "server/base/config.h"
#include "server/base/cycle_clock.h"
#include "server/base/heap_bytes.h"
#include "server/base/log.h"
#include "server/engine/blocking.h"
#include "server/engine/engine.h"
#include "server/engine/open_slot_check.h"
#include "server/engine/remote_batch.h"
#include "server/engine/worker.h"
#include "server/net/resp_peek.h"

namespace strata {
namespace {

// Redis: "unknown command 'x', with args beginning with: 'a' 'b' " where the argument
// list is cut at 128 characters.
std::string UnknownCommandError(CmdArgs args) {
  std::string name(args[0].substr(0, 128));
  std::string list;
  for (size_t i = 1; i < args.size() && list.size() < 128; i++) {
    size_t room = 128 - list.size();
    list += "'";
    list.append(args[i].substr(0, room));
    list += "' ";
  }
  return "ERR unknown command '" + name + "', with args beginning with: " + list;
}

void DeliverReply(void* p) {
  auto* rc = static_cast<RemoteCommand*>(p);
  if (rc->conn->is_master() && !rc->reply.empty() && rc->reply[0] == '-') [[unlikely]]
    ClientConnection::NoteErrorToMaster(rc->spec, rc->reply);
  rc->conn->CompleteSlot(rc->seq, rc->reply);
  delete rc;
}

// Runs a shard command now, on the current (owning) worker, and sends the reply home.
void RunRemoteCommand(RemoteCommand* rc) {
  Worker* w = Worker::Current();
  ReplyBuilder rb(&rc->reply, rc->resp);
  ShardCtx ctx{*w, w->keyspace(), rc->db, w->now_ms(), rc->conn->is_master()};
  Keyspace::MasterCallScope master_call(ctx.ks, ctx.from_master);
  if (w->eviction().active() && (rc->spec->flags & kCmdDenyOom)) [[unlikely]]
    w->eviction().BeforeWrite(rc->args->span());
  uint64_t client = rc->conn->id();  // fixed at creation: readable from any thread
  ExecScope exec(client, static_cast<TrackMode>(rc->track), rc->origin);
  if (rc->open_slot != 0) [[unlikely]] {
    std::string error;
    if (OpenSlotRefuses(rc->spec, rc->args->span(), *w, rc->db, rc->open_slot, &error)) {
      rb.Error(error);
      w->Post(rc->origin, Task{DeliverReply, rc});
      return;
    }
  }
  uint64_t t0 = CycleClock::Now();
  w->BeforeShardCall();
  rc->spec->shard_fn(rc->args->span(), ctx, rb);
  if (w->repl_on()) [[unlikely]]
    w->Propagate(rc->spec, rc->args->span(), rc->db, rc->reply);
  if (rc->track == static_cast<uint8_t>(TrackMode::kRead)) [[unlikely]]
    w->tracking().RememberKeys(rc->spec, rc->args->span(), client, rc->origin);
  w->CountCall(rc->spec, CycleClock::Now() - t0, !rc->reply.empty() && rc->reply[0] == '-',
               rc->args->span(), rc->db, rc->conn, rc->origin != w->index());
  if (rc->origin != w->index()) w->stats().remote_commands++;
  w->Post(rc->origin, Task{DeliverReply, rc});
}

// A command the cold gate held: its values are back.
void RunHeld(void* p) { RunRemoteCommand(static_cast<RemoteCommand*>(p)); }

// A command the cold gate held: a disk read it needed failed.
void FailHeld(void* p, const std::string& error) {
  auto* rc = static_cast<RemoteCommand*>(p);
  Worker* w = Worker::Current();
  ReplyBuilder rb(&rc->reply, rc->resp);
  rb.Error(error);
  CommandStat& st = w->stats().commands[rc->spec->stat_id];
  st.calls++;
  st.failed_calls++;
  w->Post(rc->origin, Task{DeliverReply, rc});
}

// True when the gate took rc (a cold value it needs is being read).
bool HeldByColdGate(Worker* w, RemoteCommand* rc) {
  ColdGate* gate = w->cold_gate();
  if (gate == nullptr) return false;
  thread_local std::vector<std::string_view> keys;
  keys.clear();
  rc->spec->Keys(rc->args->span(), &keys);
  if (keys.empty() || !gate->MustWait(rc->db, keys, rc->spec->NeedsValues(rc->args->span()))) {
    return false;
  }
  gate->Hold(rc->db, keys, HeldCommand{RunHeld, FailHeld, rc});
  return true;
}

// A command admitted by the lock table: it may still wait for cold values.
void RunRemoteNow(void* p) {
  auto* rc = static_cast<RemoteCommand*>(p);
  Worker* w = Worker::Current();
  if (w->cold_gate() != nullptr && HeldByColdGate(w, rc)) [[unlikely]]
    return;
  RunRemoteCommand(rc);
}

}  // namespace

ClientConnection::ClientConnection(Worker* w, EventLoop* loop, int sock, uint64_t id,
                                   std::string addr, std::string laddr)
    : Connection(loop, sock), Client(w, id, std::move(addr), std::move(laddr)) {
  created_ms = w->now_ms();
  last_interaction_ms = created_ms;
  SetAuthenticated(AclRegistry::Get().DefaultNeedsNoAuth());
  if (authenticated()) SetAclUser(AclRegistry::Get().Default());
}

ClientConnection::~ClientConnection() {
  // A SUBSCRIBE queued in a transaction that ran after the client closed may have added
  // subscriptions since OnClosing: none may outlive the connection.
  worker_->pubsub().UnsubscribeAll(*this);
  worker_->ChargeClientBytes(0, charged_bytes_);
}

size_t ClientConnection::MemoryBytes() const {
  size_t n = HeapBytes(static_cast<const void*>(this)) + BufferBytes();
  n += HeapBytes(addr_) + HeapBytes(laddr_) + HeapBytes(name) + HeapBytes(lib_name) +
       HeapBytes(lib_ver);
  if (multi_ != nullptr) n += multi_->bytes;
  for (const WatchedKey& w : watched_) n += sizeof(w) + HeapBytes(w.key);
  if (subs != nullptr) n += subs->Bytes();
  n += HeapBytes(tracking.prefixes);
  for (const std::string& p : tracking.prefixes) n += HeapBytes(p);
  return n;
}

void ClientConnection::Recharge() {
  // A closing connection is uncharged when it is destroyed (or at once when evicted).
  if (closing() || !BuffersChanged()) return;
  size_t now = MemoryBytes();
  worker_->ChargeClientBytes(now, charged_bytes_);
  charged_bytes_ = now;
}

void ClientConnection::Start() {
  Connection::Start();
  Recharge();
}

void ClientConnection::StartWithInput(std::string_view early) {
  Connection::StartWithInput(early);
  Recharge();
}

void ClientConnection::OnInput(size_t n) {
  WorkerStats& stats = worker_->stats();
  stats.total_net_input_bytes += n;
  if (is_master_) [[unlikely]]
    stats.total_net_repl_input_bytes += n;
  stats.total_reads_processed++;
  last_interaction_ms = worker_->now_ms();
  uint64_t limit = static_cast<uint64_t>(
      worker_->engine().config().client_query_buffer_limit().load(std::memory_order_relaxed));
  if (Connection::query_buffer_bytes() > limit) {
    LogWarning("Closing client that reached max query buffer length: id=%llu addr=%s",
               static_cast<unsigned long long>(id_), addr_.c_str());
    worker_->stats().client_query_buffer_limit_disconnections++;
    Connection::Kill();
    return;
  }
  ProcessInput();
}

bool ClientConnection::WaitsForInflightSlow(const CommandSpec* spec, CmdArgs args) const {
  // Queued inside MULTI, not run: nothing to wait for.
  if (multi_ != nullptr && !(spec->flags & kCmdNoQueue)) return false;
  // EXEC and WATCH see this client's earlier commands done (their tasks could otherwise
  // reach a shard after the transaction's).
  if (spec->flags & kCmdTransaction) return true;
  // From here a command with a fiber (WaitsForInflight let no other through).
  // A whole-keyspace command waits for this client's earlier commands.
  if (spec->shard_fn == nullptr) return true;
  if (spec->spans_shards != nullptr && worker_->engine().shard_count() > 1 &&
      spec->spans_shards(args)) {
    return true;
  }
  if (spec->may_block != nullptr && spec->may_block(args)) return true;
  // A multi-key command that spans shards must also wait; single-shard ones need not.
  std::vector<std::string_view> keys;
  spec->Keys(args, &keys);
  uint32_t n = worker_->engine().shard_count();
  for (size_t i = 1; i < keys.size(); i++) {
    if (ShardOfKey(keys[i], n) != ShardOfKey(keys[0], n)) return true;
  }
  return false;
}

void ClientConnection::ProcessInput() {
  if (closing()) return;
  ResumeInput();
  in_input_ = true;
  struct Leave {
    bool* flag;
    ~Leave() { *flag = false; }
  } leave{&in_input_};
  worker_->RefreshClock();
  if (is_master_) [[unlikely]]
    worker_->engine().replication().NoteMasterIo(worker_->now_ms());
  // A subscriber reads the messages published before its command ahead of its reply
  // (not while a script is busy: the caller's reply may be being written).
  if (subs != nullptr && subs->total() > 0 && !worker_->serving_while_busy()) [[unlikely]] {
    worker_->DeliverPendingMessages();
    if (closing()) return;  // a message took it over its output limit
  }
  Engine& engine = worker_->engine();
  // With a memory limit, charge the bytes just read before commands are checked against
  // it, so that a big write is refused while its own request still sits in the buffer
  // (as Redis does).
  if (engine.config().maxmemory().load(std::memory_order_relaxed) > 0) {
    Recharge();
    worker_->UpdateMemoryState();
  }
  RespLimits limits;
  limits.bulk_len_max =
      static_cast<uint64_t>(engine.config().proto_max_bulk_len().load(std::memory_order_relaxed));
  // Before AUTH, Redis's small request limits: an unauthenticated client can make the
  // server hold or scan only a few kilobytes.
  if (!authenticated()) limits.unauthenticated = !AclRegistry::Get().DefaultNeedsNoAuth();
  // Requests after this one that the last lookahead covered; kept across a pause.
  size_t ahead = lookahead_left_;
  lookahead_left_ = 0;
  while (HasInput()) {
    if (fiber_running_ || inflight_ >= kInflightMax) {
      PauseInput();
      lookahead_left_ = ahead;
      break;
    }
    size_t consumed = 0;
    auto r = ParseNext(limits, &consumed);
    if (r == RespParser::Result::kNeedMore) break;
    if (ahead > 0) {
      ahead--;
    } else if (r == RespParser::Result::kOk && query_buffer_bytes() > consumed &&
               worker_->keyspace().table(db).size() >= kLookaheadMinKeys) {
      // The first request of a run, with more input behind it (never at pipeline 1), in
      // a database big enough to miss the caches. A look that finds nothing after it (an
      // inline request next, say) costs a few instructions; the next request looks again.
      ahead = PrefetchAhead(args(), consumed);
    }
    if (r == RespParser::Result::kError) {
      // A protocol error is replied even under CLIENT REPLY OFF (a reply slot behind
      // pending replies keeps the mode it was given).
      bool suppress = TakeSuppress();
      std::string* t = ReplyTarget(suppress);
      size_t start = t->size();
      ReplyBuilder rb(t, resp);
      rb.Error("ERR " + parse_error());
      CommitReply(t, false, start);
      LogVerbose("Protocol error (%s) from client: id=%llu addr=%s", parse_error().c_str(),
                 static_cast<unsigned long long>(id_), addr_.c_str());
      break;
    }
    std::vector<std::string_view>& argv = args();
    if (argv.empty()) {
      Consume(consumed);
      continue;
    }
    CmdArgs cmd_args(argv.data(), argv.size());
    const CommandSpec* spec = CommandRegistry::Get().Find(cmd_args[0]);
    if (inflight_ > 0) {
      if (run_open_) [[unlikely]] {
        // A pipelined run is open: a call of its command joins it (the replies in flight
        // are the run's own); anything else starts the run and waits, unread, until it
        // has finished (or goes on at once if the run did).
        if (!JoinsRun(spec, cmd_args)) {
          if (HoldForRun()) break;
          if (inflight_ > 0 && spec != nullptr && WaitsForInflight(spec, cmd_args)) {
            PauseInput();
            break;
          }
        }
      } else if (spec != nullptr && WaitsForInflight(spec, cmd_args)) {
        PauseInput();
        break;
      }
    }
    if (worker_->input_gated() && spec != nullptr) [[unlikely]] {
      // A gate's wait begins with no run open (the run first, then the gate's checks).
      if (run_open_ && HoldForRun()) break;
      if (worker_->serving_while_busy() && !RunsWhileBusy(spec, cmd_args)) {
        // Read while a script is busy on this worker: this command, and what the
        // client sent after it, run once the script has ended.
        PauseInput();
        inflight_++;  // keeps the connection alive until then
        DeferProcessInput();
        break;
      }
      if (worker_->pause_gate() && WaitsForPause(spec) && !RefusedBeforePause(spec, cmd_args)) {
        // CLIENT PAUSE: this command, and what the client sent after it, wait.
        PauseInput();
        inflight_++;  // keeps the connection alive while the worker holds it
        worker_->WaitForPause(this);
        break;
      }
      if (worker_->spill_wait() && (spec->flags & kCmdDenyOom) && !is_master_) {
        // Over maxmemory while values are being moved to disk: the write (and what this
        // client sent after it) waits for memory, at most Worker::kSpillWaitMs. Once a
        // wait ran out, the client's writes are refused at once until memory is under
        // the limit again (a pipeline does not wait once per write).
        int64_t now = worker_->now_ms();
        if (memory_wait_since_ms_ == 0) memory_wait_since_ms_ = now;
        if (!memory_wait_expired_ && now - memory_wait_since_ms_ < Worker::kSpillWaitMs) {
          PauseInput();
          if (!memory_waiting_) {
            memory_waiting_ = true;
            inflight_++;  // keeps the connection alive while the worker holds it
            worker_->WaitForMemory(this);
          }
          break;
        }
        memory_wait_expired_ = true;
      }
    }
    Consume(consumed);
    Dispatch(spec, cmd_args);
    // The master's stream: each command's bytes move the offset once it has run (REPLCONF
    // GETACK answers the offset before its own bytes, as Redis's replicas do).
    if (is_master_) [[unlikely]]
      engine.replication().AddOffset(static_cast<int64_t>(consumed));
    if (tracking.on && (tracking.caching_yes || tracking.caching_no)) [[unlikely]]
      AfterCachingCommand(spec);
    // Invalidations this command caused for this worker's clients go out now: right
    // after its reply, before the next command's (as Redis orders them).
    if (worker_->tracking().local_pending()) [[unlikely]] {
      // Not while a script is busy: the script's caller may be mid-reply.
      if (!worker_->serving_while_busy()) worker_->tracking().DeliverLocal();
    }
    if (memory_wait_since_ms_ != 0 && !worker_->spill_wait()) [[unlikely]] {
      memory_wait_since_ms_ = 0;  // memory is under the limit (or spill cannot help)
      memory_wait_expired_ = false;
    }
  }
  // Input is not paused here while a run is open (every pause above starts the run
  // first, HoldForRun), so a run that ends at once resumes nothing from inside this call.
  if (run_open_) [[unlikely]]
    LaunchRun();
  FinishInput();
  Recharge();
}

size_t ClientConnection::PrefetchAhead(const std::vector<std::string_view>& argv, size_t consumed) {
  static_assert(kLookaheadRequests <= Table::kLookaheadMax);
  std::string_view keys[kLookaheadRequests];
  keys[0] = argv.size() >= 2 ? argv[1] : std::string_view();
  std::string_view after = PendingInput().substr(consumed);
  size_t n = PeekSecondArgs(after.data(), after.size(), kLookaheadRequests - 1, keys + 1);
  if (n == 0) return 0;  // nothing after this request to overlap with
  uint64_t hashes[kLookaheadRequests];
  size_t m = 0;
  uint32_t shards = worker_->engine().shard_count();
  uint32_t self = worker_->index();
  for (size_t i = 0; i <= n; i++) {
    if (keys[i].empty() || keys[i].size() > kLookaheadKeyMax) continue;
    uint64_t h = TableHash(keys[i]);
    if (shards > 1 && ShardOf(ShardHashOf(keys[i], h), shards) != self) continue;
    hashes[m++] = h;
  }
  if (m > 0) worker_->keyspace().PrefetchLookups(db, hashes, m);
  return n;
}

bool ClientConnection::RunsWhileBusy(const CommandSpec* spec, CmdArgs args) const {
  if (is_master_) return false;  // as Redis's replica stops reading its master
  if (!(spec->flags & kCmdAllowBusy) && !(spec->allow_busy != nullptr && spec->allow_busy(args)))
    return true;  // refused: -BUSY, or an error found before it
  return spec->busy_now;
}

bool ClientConnection::WaitsForPause(const CommandSpec* spec) {
  // Replicas and the master's stream are never paused (Redis).
  if (is_master_ || is_replica()) return false;
  Engine::PauseMode mode = worker_->engine().PauseModeAt(worker_->now_ms());
  if (mode == Engine::kPauseNone) return false;
  if (mode == Engine::kPauseAll) return true;
  // WRITE: what may write or be propagated, EXEC of a transaction with such a call.
  constexpr uint32_t kWrites = kCmdWrite | kCmdMayReplicate;
  if (spec->flags & kWrites) return true;
  if (multi_ != nullptr && (spec->flags & kCmdTransaction) && spec->name == "exec") {
    for (const QueuedCall& q : multi_->calls) {
      if (q.spec->flags & kWrites) return true;
    }
  }
  return false;
}

bool ClientConnection::RefusedBeforePause(const CommandSpec* spec, CmdArgs args) const {
  if (!spec->CheckArity(args.size())) return true;
  Engine& engine = worker_->engine();
  if (!authenticated() && !(spec->flags & kCmdNoAuth) && !AclRegistry::Get().DefaultNeedsNoAuth()) {
    return true;
  }
  if (acl_restricted() && !(spec->flags & kCmdNoAuth) &&
      acl_user->Check(*spec, args).denied != AclUser::Denied::kNone) {
    return true;
  }
  const SlotRouting* r = worker_->routing();
  bool exec = multi_ != nullptr && (spec->flags & kCmdTransaction) && spec->name == "exec";
  if (r != nullptr && !exec &&
      RouteOf(*r, spec, args, cluster_asking).kind == RouteDecision::kRedirect)
    return true;
  uint8_t rf = engine.replication().dispatch_flags();
  if ((rf & ReplicationState::kRefuseMisconf) &&
      ((spec->is_write() && !(spec->flags & kCmdScript)) || spec->name == "ping"))
    return true;
  if ((rf & ReplicationState::kRefuseNoReplicas) && spec->is_write() && !(spec->flags & kCmdScript))
    return true;
  return (rf & ReplicationState::kRefuseWrites) && spec->is_write() && !(spec->flags & kCmdScript);
}

void ClientConnection::WakeFromPause() {
  ResumeLater();  // takes over the inflight_ count the wait held
}

void ClientConnection::WakeFromMemoryWait() {
  memory_waiting_ = false;
  ResumeLater();  // takes over the inflight_ count the wait held
}

void ClientConnection::ResumeLater() {
  ResumeInput();
  DeferProcessInput();
}

void ClientConnection::DeferProcessInput() {
  worker_->Defer(Task{[](void* p) {
                        auto* c = static_cast<ClientConnection*>(p);
                        c->inflight_--;
                        if (c->closing()) {
                          c->MaybeDestroy();
                          return;
                        }
                        c->ProcessInput();
                      },
                      this});
}

void ClientConnection::ReplyError(std::string_view msg) {
  bool suppress = TakeSuppress();
  std::string* t = ReplyTarget(suppress);
  size_t start = t->size();
  ReplyBuilder rb(t, resp);
  rb.Error(msg);
  CommitReply(t, suppress, start);
}

void ClientConnection::UseAsking(const CommandSpec* spec) {
  // Redis's rule: the flag goes after the command, unless a transaction is open (it
  // lasts until EXEC or DISCARD), or the command is ASKING or MULTI.
  bool keep =
      spec != nullptr && ((multi_ != nullptr && spec->name != "exec" && spec->name != "discard") ||
                          spec->name == "asking" || spec->name == "multi");
  if (!keep) cluster_asking = false;
}

// The refusals that come after the cluster's redirection, in Redis's order; true when
// the command was refused (the error is its reply). Inlined into Dispatch, the one-key
// path's caller; RoutedElsewhere's open-slot path calls it too.
__attribute__((always_inline)) inline bool ClientConnection::RefusedAfterRouting(
    const CommandSpec* spec, CmdArgs args) {
  Engine& engine = worker_->engine();
  if (!(spec->flags & kCmdLoading) && engine.loading()) [[unlikely]] {
    worker_->stats().commands[spec->stat_id].rejected_calls++;
    Refuse(spec, "LOADING Redis is loading the dataset in memory");
    return true;
  }
  if (uint8_t rf = engine.replication().dispatch_flags(); rf != 0 && !is_master_) [[unlikely]] {
    if ((rf & ReplicationState::kRefuseStale) && !(spec->flags & kCmdStale)) {
      worker_->stats().commands[spec->stat_id].rejected_calls++;
      Refuse(spec,
             "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.");
      return true;
    }
    // As Redis: a failed save (stop-writes-on-bgsave-error) refuses writes, and PING so
    // that a monitor notices; a script's writes are refused where it makes them.
    if ((rf & ReplicationState::kRefuseMisconf) &&
        ((spec->is_write() && !(spec->flags & kCmdScript)) || spec->name == "ping")) {
      worker_->stats().commands[spec->stat_id].rejected_calls++;
      Refuse(spec, ReplicationState::kMisconfError);
      return true;
    }
    // min-replicas-to-write, as Redis: too few good replicas refuse writes.
    if ((rf & ReplicationState::kRefuseNoReplicas) && spec->is_write() &&
        !(spec->flags & kCmdScript)) {
      worker_->stats().commands[spec->stat_id].rejected_calls++;
      Refuse(spec, ReplicationState::kNoReplicasError);
      return true;
    }
    // A script's own writes are refused where it makes them (lua_vm.cc), as in Redis.
    if ((rf & ReplicationState::kRefuseWrites) && spec->is_write() && !(spec->flags & kCmdScript)) {
      worker_->stats().commands[spec->stat_id].rejected_calls++;
      Refuse(spec, "READONLY You can't write against a read only replica.");
      return true;
    }
  }
  if ((spec->flags & kCmdDenyOom) && !is_master_ &&
      (worker_->over_memory_limit() && (!worker_->spill_wait() || memory_wait_expired_))) {
    worker_->stats().commands[spec->stat_id].rejected_calls++;
    Refuse(spec, "OOM command not allowed when used memory > 'maxmemory'.");
    return true;
  }
  if (resp == 2 && subs != nullptr && !(spec->flags & kCmdPubSubContext) && subscribed())
      [[unlikely]] {
    // Redis's rule for RESP2: a subscribed connection reads only messages and the few
    // commands that manage its subscriptions.
    worker_->stats().commands[spec->stat_id].rejected_calls++;
    std::string name = spec->name;
    if (spec->subcommands != nullptr && args.size() > 1) name += "|" + Lowercase(args[1]);
    Refuse(spec, "ERR Can't execute '" + name +
                     "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
                     "allowed in this context");
    return true;
  }
  if (engine.busy_scripts() != 0 && !is_master_) [[unlikely]] {
    // A script has run past busy-reply-threshold: only what Redis lets through then.
    // Not for the master's stream (a replica's read-only script): its commands are not
    // refused but wait where the script holds a shard - behind it in that worker's
    // inbox, or for its locks - as Redis's replica stops reading its master meanwhile;
    // refused, a write would be lost while the offset moved past it.
    if (!(spec->flags & kCmdAllowBusy) &&
        !(spec->allow_busy != nullptr && spec->allow_busy(args))) {
      worker_->stats().commands[spec->stat_id].rejected_calls++;
      Refuse(spec, engine.BusyScriptError());
      return true;
    }
  }
  return false;
}

bool ClientConnection::RefusedByAcl(const CommandSpec* spec, CmdArgs args) {
  AclUser::Verdict v = acl_user->Check(*spec, args);
  if (v.denied == AclUser::Denied::kNone) return false;
  worker_->stats().commands[spec->stat_id].rejected_calls++;
  AclRegistry::Get().LogRefusal(
      v, multi_ != nullptr ? "multi" : "toplevel", acl_user_name(), InfoLine(worker_->now_ms()),
      static_cast<size_t>(worker_->engine().config().Int("acllog-max-len")));
  Refuse(spec, AclDeniedError(v));
  return true;
}

bool ClientConnection::Dispatch(const CommandSpec* spec, CmdArgs args) {
  // A command refused here inside MULTI also fails the transaction (EXECABORT).
  if (spec == nullptr) {
    Refuse(nullptr, UnknownCommandError(args));
    return true;
  }
  // A container's call (CONFIG GET) runs as its subcommand's copy of the spec, which
  // counts it apart, refused or run (CommandSpec::sub_specs; out of line).
  if (spec->subcommands != nullptr && args.size() > 1) [[unlikely]]
    spec = spec->ForSubcommand(args[1]);
  Engine& engine = worker_->engine();
  if (!spec->CheckArity(args.size())) {
    worker_->stats().commands[spec->stat_id].rejected_calls++;
    Refuse(spec, WrongArityError(spec->name));
    return true;
  }
  if (access_gate() != 0 && !(spec->flags & kCmdNoAuth)) [[unlikely]] {
    if (!authenticated()) {
      // The default user may have lost its password since this client connected.
      AclRegistry& acl = AclRegistry::Get();
      if (acl.DefaultNeedsNoAuth()) {
        SetAuthenticated(true);
        SetAclUser(acl.Default());
      } else {
        worker_->stats().commands[spec->stat_id].rejected_calls++;
        Refuse(spec, "NOAUTH Authentication required.");
        return true;
      }
    }
    if (acl_restricted() && RefusedByAcl(spec, args)) return true;
  }
  if (const SlotRouting* routing = worker_->routing(); routing != nullptr && !is_master_)
      [[unlikely]] {
    // cluster-enabled yes: a key served elsewhere is redirected (cluster_routing.h),
    // before a transaction queues it, and before the refusals that follow (a replica
    // redirects a write to its master's slot rather than refuse it), as Redis does. The
    // master's stream obeys.
    // A command of one key served here passes in one slot lookup (and a look at the
    // client's ASKING, which it would use up).
    size_t at = spec->single_key;  // within args: the arity was checked above
    if (!(at != 0 && !cluster_asking && routing->owner[KeySlot(args[at])] == routing->serve_fast) &&
        RoutedElsewhere(*routing, spec, args))
      return true;
  }
  if (RefusedAfterRouting(spec, args)) return true;
  last_spec_ = spec;
  if (spec->flags & kCmdWrite) repl_wrote = true;
  if (multi_ != nullptr && !(spec->flags & kCmdNoQueue)) [[unlikely]] {
    if (spec->flags & kCmdNoMulti) {
      worker_->stats().commands[spec->stat_id].rejected_calls++;
      Refuse(spec, "ERR Command not allowed inside a transaction");
      return true;
    }
    Queue(spec, args);
    return true;
  }
  if (spec->flags & kCmdTransaction) [[unlikely]]
    return DispatchTransaction(spec, args);
  if (spec->conn_fn != nullptr && !(spec->needs_fiber && spec->needs_fiber(args))) {
    // Suppression is decided after the handler, so that CLIENT REPLY ON is answered and
    // CLIENT REPLY OFF/SKIP are not.
    bool skip_before = skip_next_reply;
    skip_next_reply = false;
    std::string* t = ReplyTarget(false);
    size_t start = t->size();
    ReplyBuilder rb(t, resp);
    uint64_t t0 = CycleClock::Now();
    spec->conn_fn(*this, args, rb);
    worker_->CountCall(spec, CycleClock::Now() - t0, t->size() > start && (*t)[start] == '-', args,
                       db, this, false);
    CommitReplyAs(t, skip_before || reply_mode == ReplyMode::kOff, start);
    if (IsLarge(t)) [[unlikely]]
      OnLargeReply(t);
    return true;
  }
  uint32_t shard_count = engine.shard_count();
  if (spec->shard_fn != nullptr) {
    uint32_t shard = worker_->index();
    bool multi = false;
    if (spec->first_key > 0) {
      if (spec->keys_fn == nullptr && spec->last_key == spec->first_key) [[likely]] {
        // One key at most (GET, SET, INCR...): no list to build.
        size_t at = static_cast<size_t>(spec->first_key);
        if (at >= args.size()) {
          // A container command whose subcommand takes no key (MEMORY STATS) uses its
          // fiber.
          if (spec->fiber_fn != nullptr) multi = true;
        } else if (shard_count > 1) {
          shard = ShardOfKey(args[at], shard_count);
        }
      } else {
        thread_local std::vector<std::string_view> keys;
        keys.clear();
        spec->Keys(args, &keys);
        // As above; a command with counted keys and none given (EVAL ... 0) runs here.
        if (keys.empty() && spec->fiber_fn != nullptr && spec->keys_fn == nullptr) multi = true;
        if (!keys.empty() && shard_count > 1) {
          shard = ShardOfKey(keys[0], shard_count);
          for (size_t i = 1; i < keys.size() && !multi; i++) {
            if (ShardOfKey(keys[i], shard_count) != shard) multi = true;
          }
        }
        // A call that joins an open run (of MGET or MSET, commands of several keys) is part
        // of its fiber wherever its keys are.
        if (run_open_ && spec == run_spec_) [[unlikely]]
          multi = true;
      }
      // A script of a restricted ACL user runs as its fiber, which checks its calls
      // against the user (ScriptCall::user).
      if (spec->spans_shards != nullptr && !multi && (shard_count > 1 || acl_restricted()))
          [[unlikely]]
        multi = acl_restricted() || spec->spans_shards(args);
      if (spec->may_block != nullptr && !multi) [[unlikely]]
        multi = spec->may_block(args);
    }
    if (!multi) {
      // A command for another shard takes its own small function: the local path's frame
      // (a command's whole call) is not set up for it.
      if (shard != worker_->index()) return DispatchRemote(spec, args, shard);
      return DispatchLocal(spec, args);
    }
  }
  if (spec->fiber_fn != nullptr) {
    StartFiber(spec, args);
    return !fiber_running_;
  }
  ReplyError("ERR internal error: command has no handler for keys on several shards");
  return true;
}

bool ClientConnection::RoutedElsewhere(const SlotRouting& r, const CommandSpec* spec,
                                       CmdArgs args) {
  // ASKING holds for this command (a refusal before routing used it up too, in Refuse).
  bool asking = cluster_asking;
  if (asking) UseAsking(spec);
  uint8_t open_slot = 0;  // OpenSlotBits (cluster_routing.h)
  if (!RoutedHere(r, spec, args, asking, &open_slot)) return true;
  // A command whose slot is open and whose keys' presence decides goes its own way,
  // unless a transaction queues it (EXEC decides with its keys held) or it runs on the
  // client's thread (WATCH).
  if (open_slot != 0 && multi_ == nullptr &&
      (spec->shard_fn != nullptr || spec->fiber_fn != nullptr)) {
    // The checks Dispatch would make after routing, then the open slot's own way.
    if (RefusedAfterRouting(spec, args)) return true;
    last_spec_ = spec;
    if (spec->flags & kCmdWrite) repl_wrote = true;
    return DispatchOpenSlot(spec, args, open_slot);
  }
  return false;
}

RouteDecision ClientConnection::RouteOf(const SlotRouting& r, const CommandSpec* spec, CmdArgs args,
                                        bool asking) const {
  if (spec->first_key <= 0 && spec->keys_fn == nullptr) return {};  // no keys: here
  thread_local std::vector<std::string_view> keys;
  keys.clear();
  spec->Keys(args, &keys);
  if (keys.empty()) return {};
  RouteQuery q{spec->is_write(), cluster_readonly, asking || spec->asking, nullptr};
  // A shard channel is served where its slot is until the slot has moved, whether or not
  // a key of its name exists (Redis).
  KeyPresence channels{keys.size(), 0};
  if (spec->flags & kCmdPubSub) q.presence = &channels;
  return Route(r, keys, q);
}

bool ClientConnection::RoutedHere(const SlotRouting& r, const CommandSpec* spec, CmdArgs args,
                                  bool asking, uint8_t* open_slot) {
  if (multi_ != nullptr && (spec->flags & kCmdTransaction) && spec->name == "exec")
    return ExecRoutedHere(r, spec, asking);
  RouteDecision d = RouteOf(r, spec, args, asking);
  if (d.kind == RouteDecision::kHere) return true;
  if (d.kind == RouteDecision::kNeedsPresence) {
    *open_slot =
        static_cast<uint8_t>(kOpenSlotCheck | (asking || spec->asking ? kOpenSlotAsking : 0) |
                             (cluster_readonly ? kOpenSlotReadonly : 0));
    return true;
  }
  worker_->stats().commands[spec->stat_id].rejected_calls++;
  Refuse(spec, d.error);
  return false;
}

bool ClientConnection::ExecRoutedHere(const SlotRouting& r, const CommandSpec* exec, bool asking) {
  // The layout may have changed since the commands were queued (the cluster bus moved a
  // slot, or the cluster went down): their keys are checked again, all together, as
  // Redis checks them at EXEC. A redirection discards the transaction and is the reply.
  if (multi_->failed) return true;  // EXECABORT follows anyway
  thread_local std::vector<std::string_view> keys;
  keys.clear();
  bool write = false;
  for (const QueuedCall& call : multi_->calls) {
    if (call.spec->first_key <= 0 && call.spec->keys_fn == nullptr) continue;
    call.spec->Keys(call.args->span(), &keys);
    write |= call.spec->is_write();
  }
  if (keys.empty()) return true;
  // Keys in an open slot whose presence decides: EXEC decides once it holds the keys
  // (transaction.cc), before it runs anything.
  RouteDecision d = Route(r, keys, RouteQuery{write, cluster_readonly, asking, nullptr});
  if (d.kind == RouteDecision::kHere) return true;
  if (d.kind == RouteDecision::kNeedsPresence) {
    exec_open_slot_ = static_cast<uint8_t>(kOpenSlotCheck | (asking ? kOpenSlotAsking : 0) |
                                           (cluster_readonly ? kOpenSlotReadonly : 0));
    return true;
  }
  std::string err = std::move(d.error);
  worker_->stats().commands[exec->id].rejected_calls++;
  multi_.reset();
  UnwatchAll();
  ReplyError(err);
  return false;
}

bool ClientConnection::DispatchLocal(const CommandSpec* spec, CmdArgs args) {
  Worker& w = *worker_;
  LockTable& locks = w.locks();
  if (!locks.empty()) {
    std::vector<std::string_view> keys;
    spec->Keys(args, &keys);
    if (!locks.CanRun(db, keys, spec->is_write())) {
      // Queue behind the multi-shard command holding (or waiting for) these keys.
      uint64_t seq = ReserveSlot(TakeSuppress());
      auto* rc = new RemoteCommand{spec, this, w.index(), seq, db, resp, OwnedArgs::Copy(args), {}};
      if (tracking.on) [[unlikely]]
        rc->track = static_cast<uint8_t>(TrackModeFor(spec));
      inflight_++;
      LockTable::Request req;
      for (auto k : keys) req.keys.push_back(LockTable::LockKey(db, k));
      req.exclusive = spec->is_write();
      req.hold = false;
      req.on_admit = Task{RunRemoteNow, rc};
      locks.Enqueue(std::move(req));
      return true;
    }
  }
  if (ColdGate* gate = w.cold_gate(); gate != nullptr) [[unlikely]] {
    thread_local std::vector<std::string_view> keys;
    keys.clear();
    spec->Keys(args, &keys);
    if (!keys.empty() && gate->MustWait(db, keys, spec->NeedsValues(args))) {
      // Wait for the cold values; the reply slot keeps pipelined replies in order.
      uint64_t seq = ReserveSlot(TakeSuppress());
      auto* rc = new RemoteCommand{spec, this, w.index(), seq, db, resp, OwnedArgs::Copy(args), {}};
      if (tracking.on) [[unlikely]]
        rc->track = static_cast<uint8_t>(TrackModeFor(spec));
      inflight_++;
      gate->Hold(db, keys, HeldCommand{RunHeld, FailHeld, rc});
      return true;
    }
  }
  bool suppress = TakeSuppress();
  std::string* t = ReplyTarget(suppress);
  size_t start = t->size();
  ReplyBuilder rb(t, resp);
  ShardCtx ctx{w, w.keyspace(), db, w.now_ms(), is_master_};
  Keyspace::MasterCallScope master_call(ctx.ks, is_master_);
  if (w.eviction().active() && (spec->flags & kCmdDenyOom)) [[unlikely]]
    w.eviction().BeforeWrite(args);
  uint64_t t0 = CycleClock::Now();
  // The feed is turned on or off only by a task between calls: read once.
  const bool repl = w.repl_on();
  if (repl) [[unlikely]]
    w.repl_feed().Begin(w.keyspace().changes());
  if (tracking.on) [[unlikely]] {
    // Only a tracking client's command needs its origin (NOLOOP, a script's reads)
    // and its keys remembered; t_exec is empty between commands otherwise.
    TrackMode track = TrackModeFor(spec);
    ExecScope exec(id_, track, w.index());
    spec->shard_fn(args, ctx, rb);
    if (track == TrackMode::kRead) w.tracking().RememberKeys(spec, args, id_, w.index());
  } else {
    spec->shard_fn(args, ctx, rb);
  }
  if (repl) [[unlikely]] {
    // The parsed request's bytes can go to the replicas as they came.
    w.Propagate(spec, args, db, std::string_view(*t).substr(start), RawRequestOf(args));
  }
  bool failed = t->size() > start && (*t)[start] == '-';
  w.CountCall(spec, CycleClock::Now() - t0, failed, args, db, this, false);
  if (failed && is_master_) [[unlikely]]
    NoteErrorToMaster(spec, std::string_view(*t).substr(start));
  CommitReply(t, suppress, start);
  if (IsLarge(t)) [[unlikely]]
    OnLargeReply(t);
  return true;
}

bool ClientConnection::DispatchRemote(const CommandSpec* spec, CmdArgs args, uint32_t shard) {
  Worker& w = *worker_;
  uint64_t seq = ReserveSlot(TakeSuppress());
  inflight_++;
  // With replicas, a canonical request travels as its own bytes, which the owning
  // shard's feed then copies (remote_batch.h).
  std::string_view raw;
  if (w.repl_on()) [[unlikely]]
    raw = RawRequestOf(args);
  w.BatchFor(shard)->Add(spec, this, seq, db, resp, args.data(), args.size(),
                         tracking.on ? static_cast<uint8_t>(TrackModeFor(spec)) : 0, raw);
  return true;
}

bool ClientConnection::DispatchOpenSlot(const CommandSpec* spec, CmdArgs args, uint8_t open_slot) {
  Worker& w = *worker_;
  uint32_t shard_count = w.engine().shard_count();
  std::vector<std::string_view> keys;
  spec->Keys(args, &keys);
  // The shard that holds every key, as Dispatch picks it; a command that runs as a fiber
  // (keys on several shards, a blocking command, a script that may reach other shards)
  // cannot have its keys' presence decided where they all are at once: the client tries
  // again once the slot has moved.
  bool fiber = spec->shard_fn == nullptr || keys.empty();
  uint32_t shard = fiber ? 0 : ShardOfKey(keys[0], shard_count);
  for (size_t i = 1; i < keys.size() && !fiber; i++) {
    if (ShardOfKey(keys[i], shard_count) != shard) fiber = true;
  }
  if (!fiber && spec->spans_shards != nullptr && shard_count > 1) fiber = spec->spans_shards(args);
  if (!fiber && spec->may_block != nullptr) fiber = spec->may_block(args);
  if (fiber) {
    w.stats().commands[spec->stat_id].rejected_calls++;
    Refuse(spec, kTryAgainError);
    return true;
  }
  // Always as a task to the shard (its own worker too): the shard decides, when the
  // command may run (its keys free, its cold values read), whether it runs or is
  // redirected. The reply slot keeps pipelined replies in order.
  uint64_t seq = ReserveSlot(TakeSuppress());
  auto* rc = new RemoteCommand{spec, this, w.index(), seq, db, resp, OwnedArgs::Copy(args), {}};
  if (tracking.on) [[unlikely]]
    rc->track = static_cast<uint8_t>(TrackModeFor(spec));
  rc->open_slot = open_slot;
  inflight_++;
  w.Post(shard, Task{RunOpenSlotCommand, rc});
  return true;
}

void ClientConnection::RunOpenSlotCommand(void* p) {
  auto* rc = static_cast<RemoteCommand*>(p);
  Worker* w = Worker::Current();
  LockTable& locks = w->locks();
  if (!locks.empty()) {
    std::vector<std::string_view> keys;
    rc->spec->Keys(rc->args->span(), &keys);
    if (!locks.CanRun(rc->db, keys, rc->spec->is_write())) {
      QueueBehindLocks(rc, keys);
      return;
    }
  }
  RunRemoteNow(rc);
}

void ClientConnection::HoldForColdValues(RemoteCommand* rc,
                                         const std::vector<std::string_view>& keys) {
  Worker::Current()->cold_gate()->Hold(rc->db, keys, HeldCommand{RunHeld, FailHeld, rc});
}

void ClientConnection::QueueBehindLocks(RemoteCommand* rc,
                                        const std::vector<std::string_view>& keys) {
  LockTable::Request req;
  for (auto k : keys) req.keys.push_back(LockTable::LockKey(rc->db, k));
  req.exclusive = rc->spec->is_write();
  req.hold = false;
  req.on_admit = Task{RunRemoteNow, rc};
  Worker::Current()->locks().Enqueue(std::move(req));
}

void ClientConnection::AfterCachingCommand(const CommandSpec* spec) {
  // CLIENT CACHING yes/no holds for the next command: a CLIENT call leaves it, and so do
  // MULTI and the commands queued after it (EXEC's calls see it); anything else uses it.
  if (spec != nullptr && (spec->name == "client" || spec->name == "multi")) return;
  if (multi_ != nullptr) return;
  tracking.caching_yes = tracking.caching_no = false;
}

void ClientConnection::CompleteSlots(const RemoteBatch& batch, size_t first, size_t end) {
  if (is_master_) [[unlikely]] {
    for (size_t i = first; i < end; i++) {
      const RemoteBatch::Item& item = batch.items[i];
      if (!item.detached && item.reply_len > 0 && batch.replies[item.reply_offset] == '-')
        NoteErrorToMaster(
            item.spec, std::string_view(batch.replies).substr(item.reply_offset, item.reply_len));
    }
  }
  bool grew = false;
  size_t filled = 0;
  for (size_t i = first; i < end; i++) {
    const RemoteBatch::Item& item = batch.items[i];
    if (item.detached) continue;
    grew |= FillSlot(item.seq,
                     std::string_view(batch.replies.data() + item.reply_offset, item.reply_len));
    filled++;
  }
  if (filled == 0) return;
  inflight_ -= filled;
  AfterSlotsFilled(grew);
}

void ClientConnection::CompleteSlot(uint64_t seq, std::string_view data) {
  bool grew = FillSlot(seq, data);
  inflight_--;
  AfterSlotsFilled(grew);
}

void ClientConnection::AfterSlotsFilled(bool grew) {
  if (grew && !closing()) CheckOutputLimits();
  if (closing()) {
    MaybeDestroy();
    return;
  }
  ScheduleFlush();
  if (input_paused() && !fiber_running_) {
    // Resume later in this turn, never from inside another command's call stack.
    inflight_++;
    ResumeLater();
  }
}

void ClientConnection::RequestFlush() { worker_->MarkDirty(this); }

void ClientConnection::FlushOutput() {
  BeginFlush();
  if (closing()) {
    MaybeDestroy();
    return;
  }
  // While replies from other shards are still due for requests already read, hold the
  // output (up to kHoldOutputMax bytes) so that the whole pipelined batch leaves in one
  // send: fewer system calls here and fewer wake-ups for the client. A command over
  // several shards (a fiber: input waits while it runs) holds it too when it is one
  // that finishes on its own, within a few hops (FiberMayHoldOutput): a pipeline of
  // MGETs then leaves together, as one of GETs does.
  if (inflight_ > 0 && (!fiber_running_ || fiber_holds_output_) &&
      buffered_output() < kHoldOutputMax)
    return;
  // A flush is scheduled when there is output to send (or a close to finish).
  WorkerStats& stats = worker_->stats();
  stats.total_writes_processed++;
  size_t sent = FlushNow();
  stats.total_net_output_bytes += sent;
  if (is_replica_) [[unlikely]]
    stats.total_net_repl_output_bytes += sent;
  Recharge();
  // Kill() may destroy this connection: nothing may follow it.
  if (close_after_reply() && output_drained() && !fiber_running_) Connection::Kill();
}

void ClientConnection::OnSent(size_t bytes) {
  WorkerStats& stats = worker_->stats();
  stats.total_net_output_bytes += bytes;
  if (is_replica_) [[unlikely]]
    stats.total_net_repl_output_bytes += bytes;
  // A client over the soft limit is timed only while it stays over: drained, it starts
  // again from zero.
  if (soft_limit_since_ms_ != 0) CheckOutputLimits();
  Recharge();
}

void ClientConnection::Evict() {
  LogVerbose("Evicting client: %s", InfoLine(worker_->now_ms()).c_str());
  worker_->ChargeClientBytes(0, charged_bytes_);
  charged_bytes_ = 0;
  Connection::Kill();
}

void ClientConnection::OnLargeReply(std::string* target) {
  LargeReplyWritten(target);
  CheckOutputLimits();
}

void ClientConnection::CheckOutputLimits() {
  OutputLimit limit = worker_->engine().config().output_limit(client_class);
  if (limit.hard_bytes == 0 && limit.soft_bytes == 0) return;
  int64_t used = static_cast<int64_t>(output_bytes() + pending_reply_bytes());
  bool hard = limit.hard_bytes > 0 && used >= limit.hard_bytes;
  bool soft = limit.soft_bytes > 0 && used >= limit.soft_bytes;
  int64_t now = worker_->now_ms();
  if (!soft) {
    soft_limit_since_ms_ = 0;
  } else if (soft_limit_since_ms_ == 0) {
    soft_limit_since_ms_ = now;  // the soft limit's clock starts
    soft = false;
  } else if (now - soft_limit_since_ms_ <= limit.soft_seconds * 1000) {
    soft = false;
  }
  if (!hard && !soft) return;
  // Redis's words; its queued replies are dropped with it.
  LogWarning("Client %s scheduled to be closed ASAP for overcoming of output buffer limits.",
             InfoLine(now).c_str());
  worker_->stats().client_output_buffer_limit_disconnections++;
  Connection::Kill();
}

bool ClientConnection::Push(std::string_view bytes) {
  if (closing()) return false;
  // Never seals the open block: a push may come in the middle of this client's own
  // command (it published to itself), whose reply start offset must stay valid.
  AppendPush(bytes);
  ScheduleFlush();
  OutputLimit limit = worker_->engine().config().output_limit(client_class);
  int64_t used = static_cast<int64_t>(output_bytes());
  return (limit.hard_bytes > 0 && used >= limit.hard_bytes) ||
         (limit.soft_bytes > 0 && used >= limit.soft_bytes);
}

void ClientConnection::ResetState() {
  worker_->RemoveMonitor(this);
  multi_.reset();
  UnwatchAll();
  worker_->pubsub().UnsubscribeAll(*this);
  TrackingOff(*this);
}

void ClientConnection::OnClosing() {
  if (is_master_) worker_->MasterClosed(this);
  if (is_replica_ && on_replica_close) {
    std::function<void()> f = std::move(on_replica_close);
    on_replica_close = nullptr;
    f();
  }
  worker_->RemoveMonitor(this);
  worker_->pubsub().UnsubscribeAll(*this);
  TrackingOff(*this);
  multi_.reset();
  // A running fiber may be an EXEC that still checks the watched keys: it (or
  // FinishFiber, for other fibers) drops them when it ends.
  if (!fiber_running_) UnwatchAll();
  CancelWait();  // leaving while blocked, unless a shard already served it
  worker_->RemoveConnection(this);
}

bool Client::CancelWait() {
  if (blocked_ == nullptr) return false;
  int expected = BlockedClient::kWaiting;
  if (!blocked_->state.compare_exchange_strong(expected, BlockedClient::kCancelled)) return false;
  // Not suspended yet (still joining the queues): it sees the state and does not wait.
  if (blocked_->handle) {
    std::coroutine_handle<> h = blocked_->handle;
    blocked_->handle = nullptr;
    worker_->Defer(ResumeTask(h));
  }
  return true;
}

bool Client::Unblock(bool error) {
  if (!CancelWait()) return false;
  // The fiber resumes on this thread after this task (deferred): it reads this then.
  blocked_->unblock_error = error;
  return true;
}

std::string ClientConnection::InfoLine(int64_t now_ms) const {
  std::string cmd = "NULL";
  if (last_spec_ != nullptr) {
    // "config|get" for a container's call (its subcommand's copy), else the name.
    cmd = CommandRegistry::Get().stat_name(last_spec_->stat_id);
  }
  size_t qbuf = Connection::query_buffer_bytes();
  // Redis's flags: M the master, x in MULTI, b blocked, P subscribed, N none.
  std::string flags;
  if (is_master_) flags += 'M';
  if (is_replica_) flags += 'S';
  if (multi_ != nullptr) flags += 'x';
  if (blocked_ != nullptr) flags += 'b';
  if (subscribed()) flags += 'P';
  if (tracking.on) flags += 't';
  if (tracking.broken_redirect) flags += 'R';
  if (tracking.bcast) flags += 'B';
  if (flags.empty()) flags = "N";
  long long redir = !tracking.on ? -1 : static_cast<long long>(tracking.redirect);
  long long multi = multi_ != nullptr ? static_cast<long long>(multi_->calls.size()) : -1;
  size_t multi_mem = multi_ != nullptr ? multi_->bytes : 0;
  char buf[1024];
  std::snprintf(
      buf, sizeof(buf),
      "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%u sub=%zu psub=%zu "
      "ssub=%zu multi=%lld qbuf=%zu qbuf-free=%zu argv-mem=0 multi-mem=%zu rbs=%zu rbp=0 obl=%zu "
      "oll=%zu omem=%zu tot-mem=%zu events=r cmd=%s user=%s redir=%lld resp=%d lib-name=%s "
      "lib-ver=%s",
      static_cast<unsigned long long>(id_), addr_.c_str(), laddr_.c_str(), fd, name.c_str(),
      static_cast<long long>((now_ms - created_ms) / 1000),
      static_cast<long long>((now_ms - last_interaction_ms) / 1000), flags.c_str(), db,
      subs != nullptr ? subs->of[0].size() : 0, subs != nullptr ? subs->of[1].size() : 0,
      subs != nullptr ? subs->of[2].size() : 0, multi, qbuf, read_buffer_size() - qbuf, multi_mem,
      read_buffer_size(), open_block_bytes(), sealed_blocks(),
      output_bytes() + pending_reply_bytes(), MemoryBytes(), cmd.c_str(), acl_user_name().c_str(),
      redir, resp, lib_name.c_str(), lib_ver.c_str());
  return buf;
}

}  // namespace strata
