// ClientConnection: a client's socket (net's Connection) joined to its Client settings,
// and the dispatcher that routes each request it parses.
//
// How a request travels
//   Bytes land in the read buffer; the parser yields one request at a time as views
//   into it. Each request is dispatched in order:
//     - connection commands run at once;
//     - a command whose keys all hash to this worker's shard runs inline, writing its
//       reply straight into the output buffer (the fast path: no copy, no message);
//     - a command whose keys all hash to another shard is appended to this turn's
//       RemoteBatch for that shard's worker (remote_batch.h); its reply slot is
//       reserved now and filled when the batch comes back, so pipelined replies keep
//       request order even though later local commands finish first;
//     - a command spanning shards (or the whole keyspace) waits until this client has
//       nothing in flight, then runs as a fiber; input processing resumes when it ends.
//   Replies of one read are written with a single send at the end of the loop turn.
//
// Lifetime: closing stops input at once, but the object lives on until no remote
// command or fiber refers to it (inflight_ == 0) and the loop has released the socket.
// Thread-safety: owned by its worker's thread; other workers never touch it (their
// replies arrive as tasks run on this thread).
//
// Private to the engine: command families see a client only as a Client.
#pragma once

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/keyspace.h"
#include "server/engine/client.h"
#include "server/engine/cluster_routing.h"
#include "server/engine/command.h"
#include "server/engine/task.h"
#include "server/net/connection.h"

namespace strata {

struct RemoteBatch;

class ClientConnection;

// A single command queued behind a lock on its shard (from a batch or a local client).
struct KeyPresence;

struct RemoteCommand {
  const CommandSpec* spec;
  ClientConnection* conn;
  uint32_t origin;  // the client's worker
  uint64_t seq;     // reply slot
  uint32_t db;
  int resp;
  std::shared_ptr<OwnedArgs> args;
  std::string reply;
  uint8_t track = 0;      // TrackMode for the client (tracking.h)
  uint8_t open_slot = 0;  // OpenSlotBits (cluster_routing.h): decided where it runs
};

class ClientConnection final : public Connection, public Client {
 public:
  static constexpr size_t kInflightMax = 1024;         // pipelined commands awaiting replies
  static constexpr size_t kHoldOutputMax = 64 * 1024;  // see FlushOutput
  static constexpr size_t kLookaheadRequests = 16;     // see PrefetchAhead
  // Longer second arguments are not hashed; smaller databases are not looked ahead for
  // (Keyspace::kLookaheadMinKeys).
  static constexpr size_t kLookaheadKeyMax = Keyspace::kLookaheadKeyMax;
  static constexpr size_t kLookaheadMinKeys = Keyspace::kLookaheadMinKeys;

  ClientConnection(Worker* w, EventLoop* loop, int fd, uint64_t id, std::string addr,
                   std::string laddr);
  ~ClientConnection() override;

  void Start();
  // Start, with bytes that arrived before the loop owned the socket taken as the first
  // input (a replica's stream read while it loaded its image).
  void StartWithInput(std::string_view early);
  // Worker calls at the end of a turn for connections with new output.
  void FlushOutput();
  // The worker's memory wait ended (Worker::WaitForMemory): input is read again.
  void WakeFromMemoryWait();
  // CLIENT PAUSE ended (Worker::WaitForPause): input is read again.
  void WakeFromPause();
  // A remote command's reply arrived (this worker's thread).
  // A replica's master client got an error reply: logged as Redis logs it (any thread
  // that holds the reply; the log is thread-safe).
  static void NoteErrorToMaster(const CommandSpec* spec, std::string_view reply);
  void CompleteSlot(uint64_t seq, std::string_view data);
  // The replies of a run of this connection's commands in one batch came back: each
  // fills its slot, then the output's limits, the flush and a paused input are seen to
  // once for the run (DeliverRemoteBatch). Detached items are skipped (theirs come back
  // on their own).
  void CompleteSlots(const RemoteBatch& batch, size_t first, size_t end);

  // Queues rc on the current worker's lock table; it runs when its keys are free.
  static void QueueBehindLocks(RemoteCommand* rc, const std::vector<std::string_view>& keys);
  // A command from another worker's batch whose cold values are being read (the gate's
  // MustWait said so): the gate holds it, then runs it and sends the reply.
  static void HoldForColdValues(RemoteCommand* rc, const std::vector<std::string_view>& keys);

  // Client
  void CloseAfterReply() override { Connection::CloseAfterReply(); }
  void Kill() override { Connection::Kill(); }
  void FinishFiber(std::string&& reply) override;
  void FinishFiberRun(std::vector<std::string>&& replies) override;
  std::string InfoLine(int64_t now_ms) const override;
  bool Push(std::string_view bytes) override;
  void EnforceOutputLimits() override { CheckOutputLimits(); }
  bool gone() const override { return Connection::closing(); }
  void ResetState() override;
  size_t query_buffer_bytes() const override { return Connection::query_buffer_bytes(); }
  size_t output_bytes() const override { return Connection::output_bytes(); }
  // Heap bytes this connection holds: the object, its read and write buffers, reply
  // slots awaiting other shards, and the event loop's state for it (usable sizes).
  size_t MemoryBytes() const;
  size_t charged_bytes() const { return charged_bytes_; }
  bool closing() const { return Connection::closing(); }
  // Inside ProcessInput (its command may be writing a reply): Worker::ServeWhileBusy
  // leaves its output alone.
  bool in_input() const { return in_input_; }
  // This connection is the replica's link to its master (Worker::AdoptMasterConnection):
  // its commands run without replies, past replica-read-only and maxmemory, and each
  // moves the replication offset (replication_state.h).
  void MakeMaster();
  bool is_master() const override { return is_master_; }
  // Bytes for the master whatever the reply mode: REPLCONF ACK.
  void SendToMaster(std::string_view bytes) override;
  void MakeReplica() override;
  bool is_replica() const override { return is_replica_; }
  void SendToReplica(std::string_view bytes) override;
  void SendToReplicaOwned(std::string&& bytes) override;
  void SendToReplicaShared(std::shared_ptr<const std::string> buffer,
                           std::string_view bytes) override;
  // maxmemory-clients chose this client: logged, closed, and its bytes no longer
  // counted from now on (so the next loop turn does not evict for them again).
  void Evict();

 private:
  // Connection
  void OnInput(size_t n) override;
  void RequestFlush() override;
  void OnClosing() override;
  bool InUse() const override { return inflight_ > 0 || fiber_running_; }
  void OnSent(size_t bytes) override;

  void ProcessInput();
  // Lookahead, for the first request of a run (just parsed into argv, `consumed` bytes)
  // when more input follows it: this request and the next ones waiting (up to
  // kLookaheadRequests in all; their second argument, the first key of most commands)
  // that are for this worker's shard have their keys' table lookups prefetched
  // together (Keyspace::PrefetchLookups), so that a pipeline's lookups in a table
  // bigger than the caches wait on memory about three times per run instead of three
  // times per key. A hint: a command whose key is elsewhere, or a second argument that
  // is no key, costs only the look (a second argument of more than kLookaheadKeyMax
  // bytes, a script or a big value more likely than a key, is not even hashed). Returns
  // how many requests after this one it looked at (resp_peek.h); 0 when none could be.
  size_t PrefetchAhead(const std::vector<std::string_view>& argv, size_t consumed);
  // Inside Worker::ServeWhileBusy: whether the command may run now - it is refused -BUSY
  // (or earlier), or lets a busy script through and touches no shard
  // (CommandSpec::busy_now). The others, and everything from the master, wait until the
  // script has ended.
  bool RunsWhileBusy(const CommandSpec* spec, CmdArgs args) const;
  // Whether this command must wait until the client's commands in flight are done.
  // Inline, on every command while some are in flight: only a transaction command or
  // one with a fiber can wait, and nothing else is looked at for the others.
  bool WaitsForInflight(const CommandSpec* spec, CmdArgs args) const {
    if (spec->fiber_fn == nullptr && !(spec->flags & kCmdTransaction)) return false;
    return WaitsForInflightSlow(spec, args);
  }
  bool WaitsForInflightSlow(const CommandSpec* spec, CmdArgs args) const;
  // Whether this command must wait for CLIENT PAUSE to end (Engine::PauseClients).
  bool WaitsForPause(const CommandSpec* spec);
  // Reads input again later in this turn (never from inside another command's call
  // stack). The caller has counted one inflight_ for it, which the deferred call drops.
  void ResumeLater();
  // ProcessInput later in this turn, outside any call stack now running; the caller has
  // counted one inflight_ for it, which the deferred call drops.
  void DeferProcessInput();
  // Returns false when input processing must pause (a fiber or a barrier).
  bool Dispatch(const CommandSpec* spec, CmdArgs args);
  // Dispatch's refusals after the cluster's redirection (loading, a replica's, OOM, a
  // RESP2 subscriber's, a busy script's): true when refused, with the error replied.
  bool RefusedAfterRouting(const CommandSpec* spec, CmdArgs args);
  // A restricted ACL user's command that its user may not run, or whose keys or channels
  // it may not touch: refused with NOPERM and logged (ACL LOG); true when refused.
  bool RefusedByAcl(const CommandSpec* spec, CmdArgs args);
  // Whether the command would be refused before it could run (arity, AUTH, a cluster
  // redirection, a read-only replica's write): such a command is answered at once,
  // paused or not, as Redis answers it. No side effects.
  bool RefusedBeforePause(const CommandSpec* spec, CmdArgs args) const;
  // cluster-enabled yes: false when the command's keys are served elsewhere or the
  // cluster is down (the redirection is the reply).
  // cluster-enabled yes, past the one-key fast path: true when the command was refused
  // (redirected) or sent on its open slot's own way; false when it goes on here.
  bool RoutedElsewhere(const SlotRouting& r, const CommandSpec* spec, CmdArgs args);
  // A command whose slot is open (migrating, or importing after ASKING) and whose keys'
  // presence decides is let through with *open_slot set (OpenSlotBits): its shard
  // decides.
  bool RoutedHere(const SlotRouting& r, const CommandSpec* spec, CmdArgs args, bool asking,
                  uint8_t* open_slot);
  // Where the command's keys go (kHere for a command without keys); no side effects.
  RouteDecision RouteOf(const SlotRouting& r, const CommandSpec* spec, CmdArgs args,
                        bool asking) const;
  // EXEC: the queued commands' keys, checked again together (the transaction is
  // discarded when they are redirected).
  bool ExecRoutedHere(const SlotRouting& r, const CommandSpec* exec, bool asking);
  // The client's ASKING holds for this command, and is used up by it unless a
  // transaction is open (Redis keeps it until EXEC or DISCARD).
  void UseAsking(const CommandSpec* spec);
  // A command whose keys are all on one shard: this worker's runs it now (DispatchLocal);
  // another's gets it in this turn's batch for that shard (remote_batch.h), its reply
  // slot reserved (DispatchRemote, a small function of its own so that the local path's
  // frame is not set up for it).
  bool DispatchLocal(const CommandSpec* spec, CmdArgs args);
  bool DispatchRemote(const CommandSpec* spec, CmdArgs args, uint32_t shard);
  // A command in an open slot whose keys' presence decides (open_slot: OpenSlotBits):
  // on one shard, that shard decides when it runs whether it runs (open_slot_check.h);
  // else -TRYAGAIN.
  bool DispatchOpenSlot(const CommandSpec* spec, CmdArgs args, uint8_t open_slot);
  static void RunOpenSlotCommand(void* rc);
  void StartFiber(const CommandSpec* spec, CmdArgs args);
  static bool FiberMayHoldOutput(const CommandSpec* spec, CmdArgs args);
  // A tracking client's fiber: what its steps remember (task.h FiberOrigin).
  void PrepareFiberOrigin(const CommandSpec* spec, CmdArgs args, TrackMode mode);
  // After a command while CLIENT CACHING yes/no is pending: whether it used it up.
  void AfterCachingCommand(const CommandSpec* spec);
  void ReplyError(std::string_view msg);
  // Whether the next reply is dropped (CLIENT REPLY OFF / SKIP); consumes SKIP.
  bool TakeSuppress() {
    bool suppress = reply_mode == ReplyMode::kOff || skip_next_reply;
    skip_next_reply = false;
    return suppress;
  }
  // Brings the worker's client-memory total up to date with MemoryBytes(), cheaply
  // skipping the computation when no buffer changed capacity since the last call.
  void Recharge();
  // After a reply of a block's worth or more: seals the block, then applies the
  // client-output-buffer-limit of this client's class (closes it when over; logged and
  // counted as Redis does). Cheap when no limit is set.
  void OnLargeReply(std::string* target);
  void CheckOutputLimits();
  // After replies filled their slots (grew: the output grew by a block or more): the
  // output's limits, then the flush, and input paused for them is resumed.
  void AfterSlotsFilled(bool grew);

  // MULTI/EXEC/DISCARD/WATCH/UNWATCH (transaction.cc).
  struct QueuedCall {
    const CommandSpec* spec;
    std::shared_ptr<OwnedArgs> args;
  };
  struct MultiState {
    bool failed = false;  // a command was refused while queueing: EXEC answers EXECABORT
    size_t bytes = 0;     // heap bytes of the queue (CLIENT LIST multi-mem, client memory)
    std::vector<QueuedCall> calls;
  };
  struct WatchedKey {
    uint32_t db;
    uint32_t shard;
    std::string key;
  };
  struct ExecPlan;
  // A transaction in an open slot (cluster_routing.h): the presence of its keys on w's
  // shard, and where it runs once that is known (empty: here; else the redirection).
  static KeyPresence PresenceOn(Worker& w, const ExecPlan& p, uint32_t shard_count);
  static std::string OpenSlotRedirect(const SlotRouting* r, const ExecPlan& p,
                                      const KeyPresence& presence);
  bool DispatchTransaction(const CommandSpec* spec, CmdArgs args);
  void FlagTransaction();
  // A command refused before it runs: the error, and inside MULTI the transaction fails
  // (EXEC answers EXECABORT; EXEC refused itself discards it at once).
  void Refuse(const CommandSpec* spec, std::string_view error);
  void Queue(const CommandSpec* spec, CmdArgs args);
  void ReplyOk();
  uint64_t TxnOwner() const;
  bool Watch(CmdArgs args);
  void NoteWatched(uint32_t db_index, uint32_t shard, std::string_view key);
  // Drops every watched key: here, and on the other shards by a posted task.
  void UnwatchAll();
  // Forgets the list only (the shards were told already).
  void ForgetWatched();
  std::shared_ptr<ExecPlan> Plan();
  bool Exec(const CommandSpec* exec_spec);
  void RunOnClient(ExecPlan& plan, size_t index, std::string* out);
  static Fiber ExecFiber(ClientConnection* c, std::shared_ptr<ExecPlan> plan);
  static void ReleaseOn(Worker& w, ExecPlan& p, bool watching);
  static Fiber WatchFiber(ClientConnection* c, std::shared_ptr<OwnedArgs> owned);
  std::unique_ptr<MultiState> multi_;
  std::vector<WatchedKey> watched_;
  std::unordered_set<std::string> watched_names_;

  // The last command, for CLIENT LIST/INFO: a container's call as its subcommand's copy.
  const CommandSpec* last_spec_ = nullptr;
  size_t charged_bytes_ = 0;
  uint32_t inflight_ = 0;
  uint64_t fiber_slot_ = 0;  // the reply slot of the running fiber
  bool fiber_running_ = false;
  // Requests after the last one parsed that the last lookahead covered (PrefetchAhead),
  // kept while input is paused, so that a pipeline read a request at a time (each of its
  // commands a fiber, which pauses input) is looked at once, not again from each
  // request.
  size_t lookahead_left_ = 0;
  // The running fiber's command lets the output wait for it (FlushOutput).
  bool fiber_holds_output_ = false;
  bool in_input_ = false;       // inside ProcessInput: a reply may be being written
  uint8_t exec_open_slot_ = 0;  // ExecRoutedHere -> Exec: the same for a transaction
  // ---- Pipelined runs (client_connection_fibers.cc)
  // A call of a command with a fiber_run_fn (MGET) that needs its fiber, read with more
  // input behind it, opens a run instead of starting the fiber: its arguments are copied
  // and its reply slot reserved, and ProcessInput goes on. Each next request that is a
  // call of the same command joins the run (its checks made as usual, and as part of the
  // run even when its keys are on one shard), up to pipeline-squash calls and
  // kRunArgsMax arguments. The first request that is anything else, or the end of what was
  // read, launches the run: one fiber runs every call, in order, with all their locks
  // taken at once, so a pipeline of MGETs across shards costs one round trip, not one
  // per call. The request that ended the run waits, unread, until the run has finished,
  // as it would behind the first call's own fiber. A run of one call is that call's own
  // fiber. Every call counts as a call (INFO commandstats), is fed to MONITOR and may be
  // logged as slow with its own arguments; the run's time is shared equally among them.
  // Not opened for a client that tracks keys or is subscribed, inside a transaction, for
  // the master's stream, with cluster-enabled (a call in a migrating slot goes to its
  // shard at once), or for a write while replicas are attached (its propagation is per
  // call).
  static constexpr size_t kRunArgsMax = 4096;
  // pipeline-squash's own bound: a run's calls are in flight at once.
  static constexpr size_t kRunCallsMax = 256;
  static_assert(kRunCallsMax < kInflightMax);
  bool MayOpenRun(const CommandSpec* spec) const;
  bool JoinsRun(const CommandSpec* spec, CmdArgs args) const;
  void OpenRun(const CommandSpec* spec, CmdArgs args);
  void AddToRun(CmdArgs args);
  void LaunchRun();
  // Launches the open run before input pauses for it; true when its fiber is running
  // (input is then paused), false when it ended at once (the caller goes on).
  bool HoldForRun();
  const CommandSpec* run_spec_ = nullptr;  // the open or running run's command
  bool run_open_ = false;                  // opened, not launched yet
  std::shared_ptr<FiberRun> run_;
  std::vector<uint64_t> run_slots_;
  size_t run_args_ = 0;
  uint64_t run_t0_ = 0;
  // The running fiber's start (CycleClock; 0 when not timed) and arguments, for its
  // statistics and the slow log when it finishes.
  uint64_t fiber_t0_ = 0;
  std::shared_ptr<OwnedArgs> fiber_args_;
  int64_t soft_limit_since_ms_ = 0;  // over the soft output limit since; 0 = not over
  // The next command is a write waiting for the spill tier to free memory: since when
  // (0 = not waiting), and whether its wait ran out (it is then refused with OOM).
  int64_t memory_wait_since_ms_ = 0;
  bool memory_wait_expired_ = false;
  bool memory_waiting_ = false;  // registered with the worker (holds inflight_)
  bool is_master_ = false;
  bool is_replica_ = false;
};

}  // namespace strata
