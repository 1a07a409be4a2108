// ReplFeed: what one worker adds to the master's replication stream (repl_log.h), and
// how a write becomes the commands that reproduce it on a replica (docs/ARCHITECTURE.md
// "strata as a master").
//
// Off (no replica has ever attached, or none and no backlog any more), nothing here runs:
// every shard path tests one flag (Worker::repl_on). On, each shard path calls Command()
// after a shard_fn ran:
//   - a write that changed this shard (its keyspace's change counter moved since the
//     feed last looked, as Redis's server.dirty) is propagated as itself, or as what its
//     spec's `propagate` function writes instead (relative expiries as PEXPIREAT and SET
//     ... PXAT, SPOP as SREM, INCRBYFLOAT as SET KEEPTTL: commands.h's PropagateFn). A
//     write that changed nothing (SADD of a member already there) is not propagated.
//     PUBLISH and SPUBLISH are, though they change nothing: replicas' subscribers get
//     the messages, as from Redis.
//   - keys deleted by expiry or eviction are propagated as DEL (KeyDeleted, from the
//     keyspace's event hook), before the command that found them expired.
//   - a group (BeginGroup/EndGroup: EXEC's calls, a script's effects) collects this
//     worker's records into one, wrapped in MULTI/EXEC when it holds more than one
//     command, so a replica never runs a script and sees a transaction whole.
//   - a capture (CaptureScope) sends this worker's records into a group that another
//     worker's command owns, while that command holds every key it touches: a script's
//     calls on other shards (its thread waits meanwhile), each call of a transaction
//     across shards (one group per call; the transaction joins them in call order and
//     appends one record before it releases a lock). So the whole transaction or script
//     is one record, and a replica never holds half of one.
//   - a command run as a fiber across shards is propagated as itself, numbered when its
//     first lock is released (FiberReleasing, from the lock table): every lock it took is
//     still held then, so every earlier write to its keys has a lower number and every
//     later one a higher. Its record is appended on the shard that released first - or
//     on the first whose step served blocked clients (a push woke them), at that step's
//     end, so that their pops follow it (StepReplScope; a fiber that is not propagated
//     appends them right after the step's own effects). One that knows before its
//     release that it changed nothing is not propagated (FiberChangesNothing); one that
//     lets its locks go to take a larger set releases without a number then
//     (ReleaseUnnumbered).
//     Inside a transaction across shards (FiberCaptures) its steps run on several shards
//     at once: each shard's records go into a group of that shard's, the command into a
//     group of its own, and the transaction joins them - every shard's effects before the
//     release (DELs of expired keys it found), the command, then every shard's effects
//     after it (pops its pushes served) - as that call's part of its one record.
// Publish() hands the turn's records to the merger at the turn's end.
//
// Thread-safety: a worker's feed is touched only on that worker's thread; FiberRepl's
// claim is an atomic shared by the shards a fiber runs on.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/engine/command.h"
#include "server/engine/repl_log.h"

namespace strata {

// Commands collected to become one record: MULTI ... EXEC around them when there are
// several. A SELECT is written where the database changes, and at the end when it ended
// in another than it started in (the merger's SELECT bookkeeping counts on a record
// leaving the replica in its own database).
struct ReplGroup {
  std::string bytes;
  size_t commands = 0;
  int64_t db = -1;      // the database it started in (-1: none yet)
  int64_t cur_db = -1;  // the one it is in now

  void Add(uint32_t db, std::string_view resp, size_t n);
  // Another group's commands after this one's.
  void Add(const ReplGroup& g);
  // The record (empty when there is no command) and its database; clears the group.
  std::string Finish(uint32_t* db);
  void Clear() {
    bytes.clear();
    commands = 0;
    db = cur_db = -1;
  }
};

// The commands a write propagates instead of itself (PropagateFn's output).
class ReplOut {
 public:
  void Add(std::initializer_list<std::string_view> args);
  void Add(CmdArgs args);
  size_t commands() const { return commands_; }
  const std::string& bytes() const { return bytes_; }
  void Clear() {
    bytes_.clear();
    commands_ = 0;
  }

 private:
  std::string bytes_;
  size_t commands_ = 0;
};

struct FiberCaptures;

// A write fiber's propagation: its command, claimed by the first shard to release a lock.
struct FiberRepl {
  std::shared_ptr<OwnedArgs> args;
  uint32_t db = 0;
  std::atomic<bool> claimed{false};
  // A fiber a script runs with synchronous hops (its steps one after another, the
  // script's thread waiting): its steps' records, and its command, go into the script's
  // group instead (StepReplScope). Null otherwise.
  ReplGroup* capture = nullptr;
  // A fiber a transaction across shards runs under its locks (its steps on several
  // shards at once): see FiberCaptures. Null otherwise. Shared, so that a step that
  // ran on after the fiber's reply writes into a live object.
  std::shared_ptr<FiberCaptures> captures;
};

// The groups of a fiber run inside a transaction across shards: each shard's records
// before the fiber's first release there, the command, and each shard's records after
// it. Each shard's thread writes only its own two groups, and the thread that claims the
// command writes `command`; the transaction's thread reads them once the fiber is done.
struct FiberCaptures {
  explicit FiberCaptures(uint32_t shards) : before(shards), after(shards), released(shards, 0) {}
  std::vector<ReplGroup> before;
  ReplGroup command;
  std::vector<ReplGroup> after;
  std::vector<uint8_t> released;  // the fiber released a lock on that shard (its thread's)
  // Into g, in the order above; clears nothing.
  void JoinInto(ReplGroup* g) const {
    for (const ReplGroup& x : before) g->Add(x);
    g->Add(command);
    for (const ReplGroup& x : after) g->Add(x);
  }
};

class ReplFeed {
 public:
  ReplFeed(ReplLog* log, uint32_t shard) : log_(log), shard_(shard) {}

  bool on() const { return on_; }
  uint32_t shard() const { return shard_; }
  // On the worker's thread: from now on (changes: the keyspace's counter now).
  void Enable(uint64_t changes);
  void Disable() { on_ = false; }

  // Before a shard_fn runs here (Worker::BeforeShardCall): what changed the keyspace
  // since, and only that, is this call's change. Fibers' steps, loads and flushes change
  // it without a Command() of their own.
  void Begin(uint64_t changes) { seen_changes_ = changes; }
  // PUBLISH and SPUBLISH go to replicas through the stream, unless cluster-enabled yes
  // (the cluster bus carries them to every node, replicas included, as in Redis).
  void set_publish_to_replicas(bool on) { publish_to_replicas_ = on; }
  // After a shard_fn ran here (see above). `reply` is its reply's bytes. `raw`, when not
  // empty, is the request as the client sent it, canonical RESP up to the two bytes after
  // each bulk (RespParser::canonical()): a call propagated as itself is then copied from
  // it rather than written again.
  void Command(const CommandSpec* spec, CmdArgs args, uint32_t db, std::string_view reply,
               Keyspace& ks, int64_t now_ms, std::string_view raw = {});
  // A key deleted by expiry or eviction.
  void KeyDeleted(uint32_t db, std::string_view key, uint64_t changes);
  // A whole record (RESP commands) of database db (ReplLog::kNoDb: none needed).
  void Record(uint32_t db, std::string_view resp);
  // An effect made here outside a propagated call (a blocking command's pop, taken by
  // its fiber under its locks): appended now.
  void Effect(uint32_t db, CmdArgs args);
  // An effect made inside another command's call (a pop served by the push that woke
  // the client): appended after that command's own record (Command, FiberReleasing, or
  // at the latest Publish).
  void EffectAfterCommand(uint32_t db, CmdArgs args);
  // The pops served by a push made in a fiber's step, appended now (StepReplScope). Left
  // waiting, they would go after whatever command next ran here - numbered, and so
  // replayed, after writes that the master made after them.
  void FlushServed() {
    if (!after_.empty()) FlushAfter();
  }
  // Pops served here are waiting for the command that served them.
  bool has_served() const { return !after_.empty(); }
  void BeginGroup() {
    if (group_depth_++ == 0 && target_ == nullptr) target_ = &group_;
  }
  void EndGroup();
  // Where this worker's records go now: the log (nullptr), its own group, or a capture.
  ReplGroup* target() const { return target_; }
  // While it lives, this worker's records go into g (see the header comment); the
  // owner of g makes sure no other thread touches it meanwhile.
  class CaptureScope {
   public:
    CaptureScope(ReplFeed& feed, ReplGroup* g) : feed_(feed), saved_(feed.target_) {
      feed.target_ = g;
    }
    ~CaptureScope() {
      if (!feed_.after_.empty()) feed_.FlushAfter();  // the call's pops belong to it
      feed_.target_ = saved_;
    }
    CaptureScope(const CaptureScope&) = delete;
    CaptureScope& operator=(const CaptureScope&) = delete;

   private:
    ReplFeed& feed_;
    ReplGroup* saved_;
  };
  // A fiber of a write is about to release a lock here: the first such call of the
  // fiber numbers and appends its record.
  void FiberReleasing(FiberRepl& f);
  // The turn's end: true when records went to the merger.
  bool Publish() {
    if (!after_.empty()) [[unlikely]]
      FlushAfter();
    return log_->shard(shard_).Publish();
  }

 private:
  void Append(uint32_t db, std::string_view resp, size_t commands);
  void FlushAfter();
  struct After {
    uint32_t db;
    std::string resp;
  };
  std::vector<After> after_;
  ReplLog* log_;
  uint32_t shard_;
  bool on_ = false;
  uint64_t seen_changes_ = 0;
  bool publish_to_replicas_ = true;
  ReplOut out_;
  // The open group (BeginGroup), and where records go (see target()).
  int group_depth_ = 0;
  ReplGroup group_;
  ReplGroup* target_ = nullptr;
};

// A write fiber that knows, before any of its steps releases a lock, that it changes
// nothing (WRONGTYPE, an empty source, RENAMENX onto a key that exists...) says so on
// its own thread: its command is then not propagated, as Redis propagates only a call
// that changed the data. A key its steps found expired still reaches replicas as DEL.
// Call it only when no later step of the fiber writes: a write then would be lost to
// replicas.
inline void FiberChangesNothing() {
  const FiberOrigin* o = t_fiber_origin;
  if (o != nullptr && o->repl != nullptr) [[unlikely]]
    o->repl->claimed.store(true, std::memory_order_release);
}

// Around a release that is not the fiber's last word (it lets go of its locks to take a
// larger set, and runs on): its record is numbered at a later release, when it holds
// everything it read and wrote, not here.
class ReleaseUnnumbered {
 public:
  ReleaseUnnumbered();
  ~ReleaseUnnumbered();
  ReleaseUnnumbered(const ReleaseUnnumbered&) = delete;
  ReleaseUnnumbered& operator=(const ReleaseUnnumbered&) = delete;

 private:
  FiberRepl* saved_;
};

// The running fiber's step: set by the awaitables (hops.h) while a step of a fiber runs
// on a shard, so the lock table can tell the feed (FiberReleasing); a step of a fiber
// with a capture sends the shard's records there (FiberRepl::capture).
inline thread_local FiberRepl* t_step_repl = nullptr;
class StepReplScope {
 public:
  StepReplScope(const FiberOrigin* f, ReplFeed& feed) : feed_(feed), saved_(t_step_repl) {
    t_step_repl = f != nullptr ? f->repl.get() : nullptr;
    if (t_step_repl != nullptr) [[unlikely]] {
      if (t_step_repl->capture != nullptr) {
        capture_.emplace(feed, t_step_repl->capture);
      } else if (t_step_repl->captures != nullptr) {
        // Before the fiber's release on this shard, or after it.
        FiberCaptures& c = *t_step_repl->captures;
        uint32_t s = feed.shard();
        capture_.emplace(feed, c.released[s] ? &c.after[s] : &c.before[s]);
      }
    }
  }
  ~StepReplScope() {
    // A step that pushed to a key clients were blocked on served their pops here
    // (EffectAfterCommand), and no command record follows on this shard for them to go
    // after. A propagated fiber's pops must follow its command: when the command has no
    // number yet (its release comes in a later step), it takes it now - every lock the
    // fiber takes is held by then (it locks all its keys before its first step). A
    // fiber that is not propagated (a blocking command) wrote its push as an Effect:
    // the pops follow that at once.
    if (feed_.has_served()) [[unlikely]] {
      t_step_repl != nullptr ? feed_.FiberReleasing(*t_step_repl) : feed_.FlushServed();
    }
    capture_.reset();
    t_step_repl = saved_;
  }
  StepReplScope(const StepReplScope&) = delete;
  StepReplScope& operator=(const StepReplScope&) = delete;

 private:
  ReplFeed& feed_;
  FiberRepl* saved_;
  std::optional<ReplFeed::CaptureScope> capture_;
};

inline ReleaseUnnumbered::ReleaseUnnumbered() : saved_(t_step_repl) { t_step_repl = nullptr; }
inline ReleaseUnnumbered::~ReleaseUnnumbered() { t_step_repl = saved_; }

}  // namespace strata
