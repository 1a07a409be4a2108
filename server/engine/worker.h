// Worker: one thread, one event loop, one shard of every database.
//
// Threads and shards
//   The server runs N workers. Worker i owns shard i: its Keyspace (the tables of all
//   databases), its LockTable and its statistics. Only worker i touches them; other
//   workers reach shard i by posting Tasks to it. There are no locks on the data path.
//
// Messages
//   Worker i sends to worker j through an SPSC ring dedicated to the pair (i, j). Tasks
//   produced during one loop turn are buffered per destination and pushed at the end of
//   the turn, and the destination's eventfd is written only if it is asleep (checked
//   with a seq_cst flag on both sides), so a busy pair exchanges thousands of commands
//   per wake-up. A task posted to the worker itself runs later in the same turn.
//
// A loop turn: poll I/O (callbacks parse and run local commands), run tasks from other
// workers (remote commands and their replies), run deferred tasks, timers (active
// expiry), flush connection output (one write per connection per turn), push outboxes.
//
// Thread-safety: everything here is called on the worker's own thread, except
// RequestStop() and the ring pushes made by other workers.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/keyspace.h"
#include "server/engine/blocking.h"
#include "server/engine/cluster_routing.h"
#include "server/engine/cold_gate.h"
#include "server/engine/instantaneous_metric.h"
#include "server/engine/latency_histogram.h"
#include "server/engine/lock_table.h"
#include "server/engine/pubsub.h"
#include "server/engine/remote_batch.h"
#include "server/engine/repl_feed.h"
#include "server/engine/routing_board.h"
#include "server/engine/shard_eviction.h"
#include "server/engine/spsc_ring.h"
#include "server/engine/task.h"
#include "server/engine/tracking.h"
#include "server/engine/watch_table.h"
#include "server/net/error_stats.h"

namespace strata {

class Client;
class ClientConnection;
class Engine;
class EventLoop;
enum class IoBackend;

int64_t WallClockMs();
int64_t WallClockUs();

struct CommandStat {
  uint64_t calls = 0;
  uint64_t usec_ticks = 0;  // CycleClock ticks; INFO converts to microseconds
  uint64_t rejected_calls = 0;
  uint64_t failed_calls = 0;
  std::vector<uint64_t> latency;  // latency_histogram.h; empty until the first timed run
  // Counts a run in the latency histogram. Inline on every command's path (the first
  // run's allocation is out of line).
  [[gnu::always_inline]] void RecordLatency(uint64_t ticks) {
    if (latency.data() == nullptr) [[unlikely]]
      StartLatency();
    latency[latency::Bucket(ticks)]++;
  }
  [[gnu::noinline, gnu::cold]] void StartLatency() { latency.assign(latency::kBuckets, 0); }
};

struct WorkerStats {
  uint64_t total_commands_processed = 0;
  uint64_t total_connections_received = 0;
  uint64_t rejected_connections = 0;
  // Every connection's bytes, and of those, a master's stream (this server its replica)
  // and what replicas are sent (the *_repl_* lines), as Redis 7 counts them.
  uint64_t total_net_input_bytes = 0;
  uint64_t total_net_output_bytes = 0;
  uint64_t total_net_repl_input_bytes = 0;
  uint64_t total_net_repl_output_bytes = 0;
  // Reads that brought a connection input, and flushes that handed one output to send
  // (INFO total_reads_processed, total_writes_processed).
  uint64_t total_reads_processed = 0;
  uint64_t total_writes_processed = 0;
  // Active expiry's time on this worker (CycleClock ticks; INFO
  // expire_cycle_cpu_milliseconds).
  uint64_t expire_cycle_ticks = 0;
  uint64_t remote_commands = 0;  // executed here for a client of another worker
  uint64_t multi_shard_commands = 0;
  uint64_t pipeline_squashed_calls = 0;  // calls run in a pipelined run of two or more
  uint64_t scripts_across_shards = 0;    // runs of scripts holding several shards
  uint64_t scripts_every_shard = 0;      // of those, runs holding every shard (wide)
  uint64_t client_query_buffer_limit_disconnections = 0;
  uint64_t client_output_buffer_limit_disconnections = 0;
  uint64_t evicted_clients = 0;  // maxmemory-clients
  // Error replies to a master's commands (this server is its replica) on this worker:
  // INFO unexpected_error_replies (ClientConnection::NoteErrorToMaster).
  uint64_t unexpected_error_replies = 0;
  ErrorStats errors;  // every error reply written on this thread
  // INFO's instantaneous_ops_per_sec, instantaneous_input_kbps and _output_kbps: the
  // three counters above, sampled by RunTimers.
  InstantaneousMetric ops_rate;
  InstantaneousMetric input_rate;
  InstantaneousMetric output_rate;
  // instantaneous_input_repl_kbps and _output_repl_kbps (worker 0's input rate also
  // holds the replica link's transfer of the master's image, ReplicationState).
  InstantaneousMetric repl_input_rate;
  InstantaneousMetric repl_output_rate;
  std::vector<CommandStat> commands;  // indexed by CommandSpec::stat_id
};

class Worker {
 public:
  // Tasks one worker can have queued for another; more wait in the outbox (a turn
  // sends one batch per destination, so this is rarely approached).
  static constexpr size_t kRingCapacity = 1024;
  static constexpr size_t kExpireBucketsPerTick = 2000;
  // Elements of deleted collections (UNLINK, FLUSH ASYNC) freed per loop turn.
  static constexpr size_t kLazyFreeElementsPerTurn = 4096;

  Worker(Engine* engine, uint32_t index);
  ~Worker();

  // Starts the thread, which creates its event loop (io_uring rings must be created
  // by the thread that submits to them) and, when `listen_fds` are given, accepts on
  // them with `on_accept` (the engine gives none: its acceptor thread accepts, see
  // Engine::Start). Blocks until the loop exists; on failure returns false with *error
  // set and the thread ended.
  bool Start(IoBackend backend, std::vector<int> listen_fds, std::function<void(int)> on_accept,
             std::string* error, std::string* note);
  void Join();
  void RequestStop();  // any thread
  // Pins the worker's thread to one CPU (set before Start; -1 = not pinned).
  void set_cpu(int cpu) { cpu_ = cpu; }

  static Worker* Current();

  uint32_t index() const { return index_; }
  Engine& engine() { return *engine_; }
  Keyspace& keyspace() { return keyspace_; }
  LockTable& locks() { return locks_; }
  // This shard's WATCHed keys (watch_table.h).
  WatchTable& watches() { return watches_; }
  // This worker's Pub/Sub subscribers (pubsub.h).
  WorkerPubSub& pubsub() { return pubsub_; }
  // This shard's keys read by tracking clients (tracking.h).
  TrackingTable& tracking() { return tracking_; }
  int64_t now_ms() const { return now_ms_; }
  // The process is stopping (any thread may ask; a long script ends on it).
  bool stopping() const { return stop_.load(std::memory_order_relaxed); }
  // True when the process's data is over maxmemory (recomputed once per loop turn from
  // every worker's published usage; see "Memory limit" in docs/ARCHITECTURE.md).
  bool over_memory_limit() const { return over_memory_limit_; }
  size_t published_used_bytes() const { return published_used_.load(std::memory_order_relaxed); }
  // Of those, bytes of deleted collections still being freed a slice per turn: eviction
  // counts them as gone (any thread).
  size_t published_lazy_bytes() const { return published_lazy_.load(std::memory_order_relaxed); }
  // This worker's clients' bytes as of its last loop turn (any thread).
  size_t published_client_bytes() const {
    return published_client_.load(std::memory_order_acquire);
  }
  // Everything this worker charges to used_memory: its shard's data and table, its
  // connections' buffers and its event loop's buffers (see server/commands/memory_report.h).
  size_t used_bytes() const;
  size_t client_bytes() const { return client_bytes_; }
  // While clients are over maxmemory-clients: the bytes of this worker's biggest
  // evictable client as of its last loop turn (0: none); kLargestUnknown until this
  // worker has seen the excess (any thread).
  static constexpr size_t kLargestUnknown = SIZE_MAX;
  size_t published_largest_evictable() const {
    return published_largest_evictable_.load(std::memory_order_acquire);
  }
  // Publishes this worker's used bytes and, when maxmemory is set, recomputes
  // over_memory_limit() from every worker's figure. Called once per loop turn and when a
  // connection has read new input.
  void UpdateMemoryState();
  // Publishes this worker's used bytes only (after evicting).
  void PublishUsed() {
    published_used_.store(used_bytes(), std::memory_order_relaxed);
    published_lazy_.store(keyspace_.lazyfree_pending_bytes(), std::memory_order_relaxed);
  }
  // The spill tier's gate on this shard (null: spill off; see cold_gate.h), and the
  // bytes the tier charges to this worker's used memory (its share of the spill
  // store's cache and its I/O buffers).
  ColdGate* cold_gate() const { return cold_gate_; }
  // cluster-enabled yes: the slot layout this worker routes by, the latest the cluster
  // service published (routing_board.h; null otherwise, see cluster_routing.h). This
  // worker's thread only.
  const SlotRouting* routing() {
    if (routing_ != nullptr && routing_version_ != routing_board_->version()) [[unlikely]]
      TakeLatestRouting();
    return routing_.get();
  }
  // Takes the board's latest layout (the first one at the worker's start).
  void TakeLatestRouting();
  void set_cold_gate(ColdGate* g) { cold_gate_ = g; }
  void set_tier_bytes(size_t n) { tier_bytes_ = n; }
  // Over maxmemory while the spill tier can still free memory: writes wait (up to
  // kSpillWaitMs each) instead of being refused (see "The tier" in ARCHITECTURE.md).
  static constexpr int64_t kSpillWaitMs = 500;
  bool spill_wait() const { return input_gates_ & kGateSpill; }
  // Whether a command read from a client may have to wait before it runs (spill_wait, or
  // a client pause this worker knows of): one byte, looked at per command.
  bool input_gated() const { return input_gates_ != 0; }
  // CLIENT PAUSE (or a manual failover's) is on: set on every worker before CLIENT PAUSE
  // replies; cleared when it ends (RunTimers, or CLIENT UNPAUSE's task). While it is on
  // the shard's dataset stays as it is, as Redis keeps a paused one: reads of expired
  // keys delete nothing (Keyspace::set_pause_hold) and nothing is evicted
  // (ShardEviction); active expiry waits too (RunTimers).
  bool pause_gate() const { return input_gates_ & kGatePause; }
  // Inside ServeWhileBusy: the commands read now run only if they touch no shard
  // (ClientConnection::RunsWhileBusy); the others wait for the script to end.
  bool serving_while_busy() const { return input_gates_ & kGateBusyPass; }
  // Called by a script's interrupt hook while it runs past busy-reply-threshold on this
  // worker: one pass of this worker's I/O without waiting, as Redis serves its clients
  // while a script is busy. New connections dealt here are adopted; what clients sent is
  // read, and answered -BUSY, or run when it is SCRIPT KILL, FUNCTION KILL and the like
  // (or held until the script ends when it would touch a shard, and always for the
  // master's stream); replies are flushed, but for connections whose command is running
  // (the script's caller). Nothing else runs: no task from other workers, no timer, no
  // closing of connections (EventLoop::PollNested). The worker's clock stays where the
  // script found it. Owning thread only; a pass inside a pass does nothing.
  void ServeWhileBusy();
  void SetPauseGate(bool on) {
    input_gates_ =
        static_cast<uint8_t>(on ? (input_gates_ | kGatePause) : (input_gates_ & ~kGatePause));
    keyspace_.set_pause_hold(on);
  }
  // A connection whose next command is a write waiting for memory: it is woken when
  // memory is under the limit again or its wait ran out (owning thread only).
  void WaitForMemory(ClientConnection* c);
  // CLIENT PAUSE: c waits (its input paused, one inflight_ held) until the pause ends;
  // then it reads its input again.
  void WaitForPause(ClientConnection* c) { pause_waiters_.push_back(c); }
  void WakePauseWaiters();
  size_t tier_bytes() const { return tier_bytes_; }
  // maxmemory eviction on this shard (shard_eviction.h).
  ShardEviction& eviction() { return eviction_; }
  const ShardEviction& eviction() const { return eviction_; }
  size_t startup_used_bytes() const { return startup_used_.load(std::memory_order_relaxed); }
  // Connections report changes in their buffer sizes here (owning thread only).
  void ChargeClientBytes(size_t add, size_t remove) { client_bytes_ += add - remove; }
  // Re-reads the clock; called before each batch of commands.
  void RefreshClock() { now_ms_ = WallClockMs(); }
  WorkerStats& stats() { return stats_; }
  // Counts one run of spec that took `ticks` (CycleClock) in the command statistics and,
  // past slowlog-log-slower-than or latency-monitor-threshold, in the slow log and the
  // latency monitor (slowlog.h). `who` sent it; `foreign` when `who` belongs to another
  // worker (its name is then read under its lock). A run under both limits costs one
  // comparison more than the statistics.
  // Inline on every command's path: a unity build's larger units otherwise keep it out of
  // line (+32 Ir per GET, bench/results/README.md "Inlining the per-call count").
  [[gnu::always_inline]] void CountCall(const CommandSpec* spec, uint64_t ticks, bool failed,
                                        CmdArgs args, uint32_t db, const Client* who,
                                        bool foreign) {
    CommandStat& st = stats_.commands[spec->stat_id];
    st.calls++;
    st.usec_ticks += ticks;
    if (latency_tracking_) st.RecordLatency(ticks);
    if (failed) st.failed_calls++;
    stats_.total_commands_processed++;
    if (ticks >= watch_ticks_) [[unlikely]]
      NoteSlowCall(spec, ticks, args, db, who, foreign);
  }
  // strata as a master: this shard's part of the replication stream (repl_feed.h).
  // Every shard path, after a shard_fn ran: Propagate when repl_on().
  bool repl_on() const { return repl_feed_.on(); }
  ReplFeed& repl_feed() { return repl_feed_; }
  // Every shard path, right before its shard_fn: marks where the call's changes start.
  void BeforeShardCall() {
    if (repl_feed_.on()) [[unlikely]]
      repl_feed_.Begin(keyspace_.changes());
  }
  // `raw`: the client's own bytes of args when it sent them canonically
  // (Connection::RawRequestOf, or a remote batch's copy of them), or empty.
  void Propagate(const CommandSpec* spec, CmdArgs args, uint32_t db, std::string_view reply,
                 std::string_view raw = {}) {
    repl_feed_.Command(spec, args, db, reply, keyspace_, now_ms_, raw);
  }
  // Before a fiber of `spec` starts on this (its client's) worker: arms its propagation
  // as one record when the feed is on and the command is a write (repl_feed.h).
  void ArmFiberPropagation(Client* c, const CommandSpec* spec,
                           const std::shared_ptr<OwnedArgs>& args, uint32_t db);
  // Turns this worker's feed on (and the keyspace hook that propagates expiry and
  // eviction with it) or off; on this worker's thread.
  void SetReplFeed(bool on);
  // The slow-log side of CountCall, for runs counted elsewhere (a fiber's wall time).
  void NoteIfSlow(const CommandSpec* spec, uint64_t ticks, CmdArgs args, uint32_t db,
                  const Client* who) {
    if (ticks >= watch_ticks_) [[unlikely]]
      NoteSlowCall(spec, ticks, args, db, who, false);
  }
  // MONITOR: this worker's monitoring clients. While any client of the process monitors,
  // every worker's CountCall takes the slow path (watch_ticks_ 0), which appends each
  // command's line to this turn's feed; the feed goes, once per turn, to each worker
  // that has monitors, which pushes it to them (monitor.cc).
  void AddMonitor(Client* c);
  void RemoveMonitor(Client* c);
  void DeliverMonitorFeed(const std::string& bytes);
  bool latency_tracking() const { return latency_tracking_; }
  // Re-reads slowlog-log-slower-than, latency-monitor-threshold and latency-tracking (each
  // loop turn, and at once after this worker's CONFIG SET).
  void RefreshSlowLimits();
  const char* backend_name() const;
  std::string backend_description() const;
  // Bytes of receive buffers the event loop holds, counted afresh (INFO, MEMORY).
  size_t RefreshIoBufferBytes();

  // Runs t on worker `dest` (this worker included: then later in this turn).
  void Post(uint32_t dest, Task t);
  // Post of a Pub/Sub delivery (pubsub.cc). At the turn's end every destination's
  // deliveries are in its ring before any other task of the turn is: a reply this
  // turn sends, or a task it hands on, can lead to a later message (the client's next
  // command publishes on another shard), which must not reach a subscriber first.
  void PostMessage(uint32_t dest, Task t) {
    message_outbox_[dest].push_back(t);
    outbox_pending_ = true;
  }
  // Any thread that is not a worker (the main thread, helper threads): runs t on this
  // worker in its next turn. A mutex-guarded queue, for rare control messages.
  void PostExternal(Task t);
  // The acceptor thread: an accepted socket for this worker to adopt (AdoptConnection),
  // in its next turn or its next ServeWhileBusy pass.
  void PostAdoption(int fd);
  // Pushes what Post() buffered for other workers now rather than at the end of the turn.
  void FlushPosts() { FlushOutbox(); }
  // While this shard is held whole, the loop polls rather than sleeps for
  // script-hop-poll-us from now: a script across shards that holds it is about to hop
  // here again (sync_hop.h).
  void PollAfterHop();
  // A synchronous hop (sync_hop.h): puts *t in dest's slot for this worker and wakes
  // dest. A worker has at most one hop outstanding (it waits for each), so one slot per
  // pair is enough; slots are served at the start of every loop turn, ahead of the
  // rings, and while the worker waits in a snapshot's cut barrier (RunHops), so a
  // script's hop is never stuck behind a barrier that waits for the script.
  void PostHop(uint32_t dest, const Task* t);
  // Runs the hops waiting in this worker's slots; false when there were none.
  bool RunHops();
  void Defer(Task t) { deferred_.push_back(t); }
  // The batch of commands for worker `dest` being filled this turn (see remote_batch.h).
  RemoteBatch* BatchFor(uint32_t dest) {
    RemoteBatch* b = open_batches_[dest];
    return b != nullptr ? b : OpenBatch(dest);
  }
  void RecycleBatch(RemoteBatch* b);
  // Batches this worker opened and has not had back yet: being filled, on their way,
  // running on their shard or coming back. A reload saves only once no worker has one
  // (its commands, dispatched before the loading gate, must be in the save).
  size_t batches_out() const { return batch_pool_.size() - free_batches_.size(); }

  // A list key on this shard got elements: clients blocked on it are served now, in the
  // order they blocked (see blocking.h). Cheap when nobody is blocked on this shard.
  // Inside a transaction or a script (t_ready_holds set) the key is held instead, and
  // served by ServeHeldReady once it is done.
  void SignalKeyReady(uint32_t db, std::string_view key);
  // This shard's keys held in h: their waiters are served now, and h's list here emptied.
  void ServeHeldReady(ReadyHolds& h);
  BlockingQueues& blocking() { return blocking_; }
  // Clients of this worker waiting in a blocking command: their timeouts are checked
  // every loop turn.
  void TrackBlocked(std::shared_ptr<BlockedClient> c);
  size_t blocked_clients() const { return blocked_.size(); }
  // Of those, the ones whose wait has a timeout (INFO clients_in_timeout_table).
  size_t blocked_with_timeout() const;

  // A script on this worker's thread has run past busy-reply-threshold: new connections
  // go to other workers meanwhile (set and cleared by that thread; read by the acceptor).
  void set_script_busy(bool busy) { script_busy_.store(busy, std::memory_order_relaxed); }
  bool script_busy() const { return script_busy_.load(std::memory_order_relaxed); }

  // Clients connected to this worker, by id.
  void MarkDirty(ClientConnection* c);
  void RemoveConnection(Client* c);
  // Takes an accepted socket: checks maxclients, creates its ClientConnection.
  void AdoptConnection(int fd);
  // After an ACL change (acl.h): each client takes its user's current version, and a
  // client whose user is gone is disconnected - `self` (the client that made the change)
  // after its reply.
  void RefreshAclUsers(Client* self);
  // Worker 0: the replica's socket to its master, after the handshake and the sync
  // (replication_state.h): it becomes the master client. Acknowledges the offset once a
  // second and drops the link after repl-timeout seconds without data.
  // `early`: stream bytes the link read before the hand-over, taken as the client's first
  // input.
  void AdoptMasterConnection(int fd, std::string early = {});
  // Worker 0: the master client is closing (its OnClosing); the link is told.
  void MasterClosed(ClientConnection* c);
  // Worker 0: closes the master client, if any (REPLICAOF).
  void CloseMasterConnection();
  const std::unordered_map<uint64_t, Client*>& connections() const { return conns_; }
  uint64_t next_random();
  // Delivers the Pub/Sub messages already in this worker's rings now, before a
  // subscriber's next command runs: a message whose PUBLISH has replied is in the ring
  // by then (FlushOutbox before FlushOutput), so a subscriber that learns of it and
  // sends a command reads the message first, as from Redis. Other tasks taken from the
  // rings meanwhile run at the next DrainInbox, in their order. (This worker's thread.)
  void DeliverPendingMessages();

 private:
  void Run();
  // Installs the keyspace's KeyEventHook while notifications ask for "expired", "new" or
  // "evicted"
  // (once per loop turn: CONFIG SET takes effect at the next turn).
  void SyncKeyEventHook();
  void CloseAll();
  void DrainInbox();
  // Pops every ring (at most 4096 tasks each): Pub/Sub deliveries into *messages, the rest
  // into *tasks, each in ring order.
  void PopInbox(std::vector<Task>* messages, std::vector<Task>* tasks);
  // Runs Pub/Sub deliveries in their process-wide publishing order (pubsub.h).
  static void RunInPublishOrder(std::vector<Task>& messages);
  void FlushOutbox();
  // Pushes *q into dest's ring from this worker, as much as fits: true when all did.
  bool PushTasks(uint32_t dest, std::vector<Task>* q);
  bool InboxEmpty() const;
  void Wake();
  void RunTimers();
  // Worker 0's replication chores on the timer: REPLCONF ACK, repl-timeout.
  void MasterLinkTimer();
  bool ServicesHaveWork() const;
  // maxmemory-clients: when every worker's clients together use more, this worker closes
  // its share of the excess, biggest clients first (not those with CLIENT NO-EVICT on).
  void EvictClientsOverLimit();
  void Shutdown();

  Engine* engine_;
  uint32_t index_;
  ClientConnection* master_conn_ = nullptr;  // worker 0: the replica's master client
  int64_t next_ack_ms_ = 0;
  int cpu_ = -1;
  Keyspace keyspace_;
  ReplFeed repl_feed_;
  LockTable locks_;
  WatchTable watches_{keyspace_};
  WorkerPubSub pubsub_{*this};
  TrackingTable tracking_{*this};
  std::unique_ptr<EventLoop> loop_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> sleeping_{false};
  int wake_fd_ = -1;
  std::vector<int> listen_fds_;

  // hop_slots_[src]: worker src's synchronous hop waiting here (PostHop), or null.
  std::unique_ptr<std::atomic<const Task*>[]> hop_slots_;
  std::atomic<bool> hops_pending_{false};
  // inbox_[src] is written by worker src only.
  std::vector<std::unique_ptr<SpscRing<Task>>> inbox_;
  std::vector<std::vector<Task>> outbox_;  // per destination
  // Pub/Sub deliveries (PostMessage), per destination: pushed before anything else.
  std::vector<std::vector<Task>> message_outbox_;
  bool outbox_pending_ = false;
  std::vector<Task> deferred_;
  std::vector<RemoteBatch*> open_batches_;  // per destination, null when none
  RemoteBatch* OpenBatch(uint32_t dest);    // BatchFor when none is open yet
  std::vector<std::unique_ptr<RemoteBatch>> batch_pool_;
  std::vector<RemoteBatch*> free_batches_;
  std::vector<Task> deferred_scratch_;
  std::vector<Task> drained_;   // DrainInbox's tasks of one pass
  std::vector<Task> messages_;  // of those, Pub/Sub deliveries
  // Tasks taken from the rings by DeliverPendingMessages; DrainInbox runs them first.
  std::vector<Task> prefetched_;
  std::mutex external_mu_;
  std::vector<Task> external_;
  std::vector<int> adoptions_;  // PostAdoption's sockets, under external_mu_
  std::atomic<bool> external_pending_{false};
  void AdoptPosted();      // adopts what PostAdoption left
  void WakeForExternal();  // after PostExternal's or PostAdoption's push

  std::unordered_map<uint64_t, Client*> conns_;
  std::vector<ClientConnection*> dirty_;
  std::vector<ClientConnection*> dirty_scratch_;
  std::atomic<size_t> published_used_{0};
  std::atomic<size_t> published_lazy_{0};
  std::atomic<size_t> published_client_{0};
  std::atomic<size_t> published_largest_evictable_{kLargestUnknown};
  bool candidates_exhausted_logged_ = false;  // maxmemory-clients
  size_t client_bytes_ = 0;
  BlockingQueues blocking_;
  std::vector<std::pair<uint32_t, std::string>> ready_keys_;
  bool serving_ready_ = false;
  std::vector<std::shared_ptr<BlockedClient>> blocked_;
  void ExpireBlocked();
  std::atomic<size_t> startup_used_{0};
  bool over_memory_limit_ = false;
  bool noted_over_ = false;  // worker 0: what Engine::NoteOverMemory was last told
  ShardEviction eviction_{*this, keyspace_};
  ColdGate* cold_gate_ = nullptr;
  std::shared_ptr<const SlotRouting> routing_;
  uint64_t routing_version_ = 0;
  const RoutingBoard* routing_board_ = nullptr;
  size_t tier_bytes_ = 0;
  static constexpr uint8_t kGateSpill = 1;     // spill_wait
  static constexpr uint8_t kGatePause = 2;     // pause_gate
  static constexpr uint8_t kGateBusyPass = 4;  // serving_while_busy
  uint8_t input_gates_ = 0;
  std::vector<ClientConnection*> memory_waiters_;
  std::vector<ClientConnection*> pause_waiters_;
  // The pause mode RunTimers last saw (its waiters are woken when it weakens).
  uint8_t pause_mode_seen_ = 0;
  void WakeMemoryWaiters();
  int64_t now_ms_ = 0;
  // The least run, in CycleClock ticks, that the slow log or the latency monitor wants
  // (UINT64_MAX: neither is on), and each one's own limit.
  uint64_t watch_ticks_ = UINT64_MAX;
  uint64_t slowlog_ticks_ = UINT64_MAX;
  uint64_t latency_ticks_ = UINT64_MAX;
  bool latency_tracking_ = true;  // latency-tracking
  void NoteSlowCall(const CommandSpec* spec, uint64_t ticks, CmdArgs args, uint32_t db,
                    const Client* who, bool foreign);
  std::vector<uint64_t> monitors_;  // client ids
  std::string monitor_feed_;        // this turn's lines, for every worker's monitors
  void FeedMonitors(const CommandSpec* spec, CmdArgs args, uint32_t db, const Client* who);
  // At the end of a turn: this worker's monitors get the turn's lines at once, the other
  // workers' as a message (monitor.cc, "Causal order").
  void FlushMonitorFeed();
  int64_t next_expire_ms_ = 0;
  // io-uring-wakeup-batch and -usec as this worker's loop last applied them, and the
  // config generation they were read at (CONFIG SET reaches the loop on the timer).
  uint64_t wakeup_config_gen_ = 0;
  int64_t wakeup_batch_ = 1;
  int64_t wakeup_batch_us_ = 100;
  void ApplyWakeupBatch(bool at_start);
  // io-uring-busy-poll-usec, as this worker's loop last applied it (with the batch).
  int64_t busy_poll_us_ = 0;
  void ApplyBusyPoll(int64_t usec, bool at_start);
  int64_t poll_until_us_ = 0;  // PollAwhile
  std::atomic<bool> script_busy_{false};
  uint64_t rng_state_;
  WorkerStats stats_;
};

int64_t WallClockMs();
int64_t WallClockUs();

// MONITOR feed tasks, which DrainInbox orders with Pub/Sub messages (monitor.cc).
bool IsMonitorFeedDelivery(const Task& t);
uint64_t MonitorFeedSeq(const Task& t);

}  // namespace strata
