// ClientConnection's fibers: a command over several shards (or the whole keyspace) run
// as a coroutine on the client's worker (StartFiber, FinishFiber; docs/ARCHITECTURE.md
// "Multi-key commands"), and pipelined runs - calls of one command over several shards
// (MGET, MSET) that a client pipelined one after another, run by one fiber
// (client_connection.h, "Pipelined runs"; CommandSpec::fiber_run_fn).
//
// Why a run keeps the client's order: a run opens only where the first call's own fiber
// would have started (Dispatch sent it to StartFiber with nothing of the client's in
// flight, WaitsForInflight), and only the calls right behind it join, so no command of
// the client's falls between them. The run's fiber takes every call's locks at once and
// runs the calls in order under them: to any other client the run's calls happen one
// after another with nothing in between, which is an order Redis could have run them in.
// The request after the run is read only once the run has finished, as it is behind any
// fiber. The calls' replies fill the slots each reserved when it joined, so they go out
// in request order among the client's other replies.
// Thread-safety: the connection's worker thread only.
#include <algorithm>
#include <utility>

#include "server/base/config.h"
#include "server/base/cycle_clock.h"
#include "server/engine/client_connection.h"
#include "server/engine/engine.h"
#include "server/engine/worker.h"

namespace strata {

void ClientConnection::StartFiber(const CommandSpec* spec, CmdArgs args) {
  if (spec->fiber_run_fn != nullptr) [[unlikely]] {
    if (run_open_ && spec == run_spec_) {
      AddToRun(args);
      return;
    }
    if (MayOpenRun(spec)) {
      OpenRun(spec, args);
      return;
    }
  }
  fiber_slot_ = ReserveSlot(TakeSuppress());
  fiber_running_ = true;
  fiber_holds_output_ = FiberMayHoldOutput(spec, args);
  inflight_++;
  worker_->stats().multi_shard_commands++;
  CommandStat& st = worker_->stats().commands[spec->stat_id];
  st.calls++;
  worker_->stats().total_commands_processed++;
  if (tracking.on) [[unlikely]]
    PrepareFiberOrigin(spec, args, TrackModeFor(spec));
  next_fiber_origin.from_master = is_master_;
  std::shared_ptr<OwnedArgs> owned = OwnedArgs::Copy(args);
  if (worker_->repl_on()) [[unlikely]]
    worker_->ArmFiberPropagation(this, spec, owned, db);
  // A blocking command's wait is not its run: it is not timed (as in Redis).
  if (!(spec->flags & kCmdBlocking) && spec->may_block == nullptr) {
    fiber_args_ = owned;
    fiber_t0_ = CycleClock::Now();
  }
  spec->fiber_fn(this, std::move(owned));
  t_fiber_origin = nullptr;
}

bool ClientConnection::FiberMayHoldOutput(const CommandSpec* spec, CmdArgs args) {
  // A command on keys that cannot block (BLPOP, XREAD BLOCK), is not a script (which may
  // run long) and is no server command: its wait is its hops and its locks. Anything
  // else may wait for what the client itself has yet to cause, or for a long time, and
  // the replies before it go out at once.
  if (spec->first_key <= 0 && spec->keys_fn == nullptr) return false;
  if (spec->flags & (kCmdBlocking | kCmdScript | kCmdAdmin | kCmdServer | kCmdTransaction))
    return false;
  return spec->may_block == nullptr || !spec->may_block(args);
}

void ClientConnection::PrepareFiberOrigin(const CommandSpec* spec, CmdArgs args, TrackMode m) {
  next_fiber_origin.worker = worker_->index();
  next_fiber_origin.track_mode = static_cast<uint8_t>(m);
  if (m == TrackMode::kRead)
    next_fiber_origin.track = MakeTrackedRead(spec, args, id_, worker_->index());
}

void ClientConnection::FinishFiber(std::string&& reply) {
  if (nested != nullptr) {
    // A command inside EXEC: the transaction's fiber takes the reply and goes on.
    NestedReply* n = nested;
    nested = nullptr;
    n->reply = std::move(reply);
    n->done = true;
    if (n->waiter) worker_->Defer(ResumeTask(n->waiter));
    return;
  }
  // The slot reserved when it started (input is paused while a fiber runs, but pushes -
  // Pub/Sub messages, invalidations - may have taken slots after it).
  uint64_t seq = fiber_slot_;
  fiber_running_ = false;
  // The fiber is the last command dispatched (input waits while it runs): an error
  // reply counts as its failed call, as the shard paths count theirs.
  if (last_spec_ != nullptr && !reply.empty() && reply[0] == '-') [[unlikely]] {
    worker_->stats().commands[last_spec_->stat_id].failed_calls++;
    if (is_master_) NoteErrorToMaster(last_spec_, reply);
  }
  if (fiber_t0_ != 0 && last_spec_ != nullptr) {
    // Its wall time, hops and lock waits included: what the client waited for.
    uint64_t ticks = CycleClock::Now() - fiber_t0_;
    CommandStat& st = worker_->stats().commands[last_spec_->stat_id];
    st.usec_ticks += ticks;
    if (worker_->latency_tracking()) st.RecordLatency(ticks);
    worker_->NoteIfSlow(last_spec_, ticks, fiber_args_->span(), db, this);
  }
  fiber_t0_ = 0;
  fiber_args_.reset();
  if (closing()) UnwatchAll();
  CompleteSlot(seq, reply);
}

bool ClientConnection::MayOpenRun(const CommandSpec* spec) const {
  // Only from ProcessInput (its Dispatch is StartFiber's one caller), with more input
  // read behind the call; never for calls whose fiber carries more than the client (a
  // tracking client's keys to remember, a transaction's holds, the master's stream's
  // propagation).
  if (!in_input_ || !HasInput()) return false;
  if (nested != nullptr || txn_owner != 0 || multi_ != nullptr || tracking.on || is_master_)
    return false;
  // A subscriber's pushes (keyspace notifications in RESP3) go out beside each call's
  // reply, not after the whole run's.
  if (subscribed()) return false;
  // With cluster-enabled, a call whose slot is migrating is sent to its shard at once
  // (DispatchOpenSlot), ahead of a run that has not started yet.
  if (worker_->routing() != nullptr) return false;
  // A write's fiber is propagated to replicas as its one call (Worker::ArmFiberPropagation):
  // while replicas are attached, writes run a call at a time.
  if (spec->is_write() && worker_->repl_on()) return false;
  return worker_->engine().config().pipeline_squash().load(std::memory_order_relaxed) > 1;
}

bool ClientConnection::JoinsRun(const CommandSpec* spec, CmdArgs args) const {
  if (spec != run_spec_ || args.size() < 2) return false;
  size_t max =
      std::min(kRunCallsMax, static_cast<size_t>(worker_->engine().config().pipeline_squash().load(
                                 std::memory_order_relaxed)));
  return run_->calls.size() < max && run_args_ + (args.size() - 1) <= kRunArgsMax;
}

void ClientConnection::OpenRun(const CommandSpec* spec, CmdArgs args) {
  run_spec_ = spec;
  run_open_ = true;
  run_ = std::make_shared<FiberRun>();
  run_slots_.clear();
  run_args_ = 0;
  run_t0_ = CycleClock::Now();
  AddToRun(args);
}

void ClientConnection::AddToRun(CmdArgs args) {
  // What StartFiber counts for a call, counted as the call joins.
  run_slots_.push_back(ReserveSlot(TakeSuppress()));
  inflight_++;
  WorkerStats& stats = worker_->stats();
  stats.multi_shard_commands++;
  stats.commands[run_spec_->stat_id].calls++;
  stats.total_commands_processed++;
  run_->calls.push_back(OwnedArgs::Copy(args));
  run_args_ += args.size() - 1;
}

void ClientConnection::LaunchRun() {
  run_open_ = false;
  fiber_running_ = true;
  fiber_holds_output_ = FiberMayHoldOutput(run_spec_, run_->calls[0]->span());
  next_fiber_origin.from_master = is_master_;
  if (run_->calls.size() == 1) {
    // One call: its own fiber, as StartFiber would have started it.
    const CommandSpec* spec = run_spec_;
    std::shared_ptr<OwnedArgs> owned = std::move(run_->calls[0]);
    fiber_slot_ = run_slots_[0];
    run_spec_ = nullptr;
    run_.reset();
    run_slots_.clear();
    if (worker_->repl_on()) [[unlikely]]
      worker_->ArmFiberPropagation(this, spec, owned, db);
    fiber_args_ = owned;
    fiber_t0_ = run_t0_;
    spec->fiber_fn(this, std::move(owned));
    t_fiber_origin = nullptr;
    return;
  }
  worker_->stats().pipeline_squashed_calls += run_->calls.size();
  run_spec_->fiber_run_fn(this, run_);
  t_fiber_origin = nullptr;
}

bool ClientConnection::HoldForRun() {
  // Launched while input is not paused: a run that ends at once (every call an arity
  // error, say) then finds nothing to resume (AfterSlotsFilled resumes a paused input
  // later in the turn, which from inside ProcessInput would read it twice).
  LaunchRun();
  if (!fiber_running_) return false;
  PauseInput();
  return true;
}

void ClientConnection::FinishFiberRun(std::vector<std::string>&& replies) {
  fiber_running_ = false;
  const CommandSpec* spec = run_spec_;
  std::shared_ptr<FiberRun> run = std::move(run_);
  run_spec_ = nullptr;
  size_t n = run_slots_.size();
  // The run's wall time, hops and lock waits included, shared equally by its calls: what
  // the client waited for, once in the command's total time.
  uint64_t ticks = CycleClock::Now() - run_t0_;
  uint64_t share = ticks / n;
  CommandStat& st = worker_->stats().commands[spec->stat_id];
  st.usec_ticks += ticks;
  for (size_t i = 0; i < n; i++) {
    if (!replies[i].empty() && replies[i][0] == '-') st.failed_calls++;
    if (worker_->latency_tracking()) st.RecordLatency(share);
    worker_->NoteIfSlow(spec, share, run->calls[i]->span(), db, this);
  }
  if (closing()) UnwatchAll();
  bool grew = false;
  for (size_t i = 0; i < n; i++) grew |= FillSlot(run_slots_[i], replies[i]);
  run_slots_.clear();
  inflight_ -= static_cast<uint32_t>(n);
  AfterSlotsFilled(grew);
}

}  // namespace strata
