// CommandSpec: the engine's interface to a command - a name, flags, key positions and
// function pointers for the three ways one runs. The engine routes a call by these
// alone and knows no command by name: the command families (server/commands/families.h)
// implement the functions and add their specs to the registry at start-up.
//
//   shard_fn  runs on the shard that owns the command's keys, with that shard's data.
//             Used when every key of the call hashes to one shard (or it has none).
//   conn_fn   runs on the client's own thread and touches no shard data (PING, SELECT).
//   fiber_fn  coordinates several shards (multi-key commands whose keys span shards,
//             and whole-keyspace commands such as DBSIZE or FLUSHALL).
// A multi-key command has both shard_fn (its single-shard fast path) and fiber_fn.
// Key positions follow Redis's (first, last, step) convention; last < 0 counts from
// the end. Handlers reply through a ReplyBuilder and never throw.
// Thread-safety: the registry is built before workers start and is read-only after.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/keyspace.h"
#include "server/engine/task.h"
#include "server/net/reply_builder.h"

namespace strata {

class Client;
class Worker;

using CmdArgs = std::span<const std::string_view>;

enum CommandFlag : uint32_t {
  kCmdWrite = 1 << 0,
  kCmdReadOnly = 1 << 1,
  kCmdFast = 1 << 2,
  kCmdDenyOom = 1 << 3,
  kCmdAdmin = 1 << 4,
  kCmdNoAuth = 1 << 5,  // allowed before AUTH
  kCmdLoading = 1 << 6,
  kCmdStale = 1 << 7,
  kCmdNoScript = 1 << 8,
  kCmdKeyspace = 1 << 9,  // acl category @keyspace
  kCmdString = 1 << 10,   // acl category @string
  kCmdConnection = 1 << 11,
  kCmdServer = 1 << 12,    // @admin/@dangerous style server commands
  kCmdHash = 1 << 13,      // acl category @hash
  kCmdSet = 1 << 14,       // acl category @set
  kCmdList = 1 << 15,      // acl category @list
  kCmdBlocking = 1 << 16,  // may block the client (BLPOP, ...)
  // acl category @sortedset
  kCmdSortedSet = 1 << 17,
  // Reads only its keys' metadata (existence, type, expiry, access state): a value on
  // disk is not read back for it (cold_gate.h).
  kCmdNoValue = 1 << 18,
  // MULTI, EXEC, DISCARD, WATCH and UNWATCH: run by the engine itself (transaction.cc),
  // which owns the client's queue and the shards' watch tables; they have no handler.
  kCmdTransaction = 1 << 19,
  // Runs at once inside MULTI instead of being queued (EXEC, DISCARD, MULTI, WATCH, QUIT).
  kCmdNoQueue = 1 << 20,
  // EVAL and friends: inside EXEC, one that spans shards makes the transaction hold every
  // shard whole (its script's own whole-shard requests nest under those).
  kCmdScript = 1 << 21,
  // Runs while a script is busy (past busy-reply-threshold) instead of getting -BUSY:
  // AUTH, HELLO, MULTI, DISCARD, WATCH, UNWATCH, RESET, QUIT, SHUTDOWN (as Redis 7).
  kCmdAllowBusy = 1 << 22,
  // Runs on a RESP2 connection that has subscriptions: (P|S)SUBSCRIBE,
  // (P|S)UNSUBSCRIBE, PING, QUIT, RESET (Redis's Pub/Sub context).
  kCmdPubSubContext = 1 << 23,
  kCmdPubSub = 1 << 24,  // acl category @pubsub
  // Not a write, but replicated (PUBLISH): refused in read-only scripts as writes are.
  kCmdMayReplicate = 1 << 25,
  kCmdStream = 1 << 26,       // acl category @stream
  kCmdGeo = 1 << 27,          // acl category @geo
  kCmdBitmap = 1 << 28,       // acl category @bitmap
  kCmdHyperLogLog = 1 << 29,  // acl category @hyperloglog
  // Refused inside MULTI, failing the transaction (SAVE, SHUTDOWN, SYNC, PSYNC), as
  // Redis's no-multi flag.
  kCmdNoMulti = 1 << 30,
};

// The shard-side context of a command.
struct ShardCtx {
  Worker& worker;
  Keyspace& ks;
  uint32_t db;
  int64_t now_ms;
  // The call comes from a replica's master client (replication_state.h): a script's
  // writes then pass replica-read-only.
  bool from_master = false;

  // Whether a command that sets the expiry time `when_ms` finds it already past, and so
  // deletes the key instead: only on a master. A replica (or its master's command) sets
  // the time as given and keeps the key until its master's DEL: the master ran the
  // command while the time was still ahead, and may make the key persistent before it
  // expires there (Redis's checkAlreadyExpired).
  bool ExpiryAlreadyPast(int64_t when_ms) const {
    return when_ms <= now_ms && !from_master && !ks.keeps_expired();
  }
};

// Arguments copied out of the read buffer, for commands that outlive it.
struct OwnedArgs {
  std::string storage;
  std::vector<std::string_view> views;
  static std::shared_ptr<OwnedArgs> Copy(CmdArgs args);
  CmdArgs span() const { return {views.data(), views.size()}; }
};

using ShardFn = void (*)(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb);

// What a master's replicas are sent for a write that changed its shard, when not the
// call itself (repl_feed.h): the call's arguments, its shard's data after it ran, and
// its reply. Returns false when the call itself is right after all (SET without an
// expiry); otherwise writes to `out` the commands that reproduce the change (none:
// nothing is propagated).
class ReplOut;
struct PropagateCtx {
  Keyspace& ks;
  uint32_t db;
  int64_t now_ms;
};
using PropagateFn = bool (*)(CmdArgs args, const PropagateCtx& ctx, std::string_view reply,
                             ReplOut* out);
using ConnFn = void (*)(Client& c, CmdArgs args, ReplyBuilder& rb);
using FiberFn = Fiber (*)(Client* c, std::shared_ptr<OwnedArgs> args);
// Calls of one command that a client pipelined one after another, run as one fiber (a
// "run": ClientConnection's "Pipelined runs"): their arguments, in the order sent. The
// fiber takes every call's locks at once, runs the calls in that order under them, and
// ends with Client::FinishFiberRun, one reply per call in the same order.
struct FiberRun {
  std::vector<std::shared_ptr<OwnedArgs>> calls;
};
using FiberRunFn = Fiber (*)(Client* c, std::shared_ptr<FiberRun> run);

struct CommandSpec {
  std::string name;  // lowercase
  int arity;
  uint32_t flags;
  int first_key;
  int last_key;
  int key_step;
  ShardFn shard_fn = nullptr;
  ConnFn conn_fn = nullptr;
  FiberFn fiber_fn = nullptr;
  // For commands with a fiber_fn whose pipelined calls may run together (FiberRun): MGET.
  // A run holds all its calls' locks at once, so it is for commands whose calls are
  // short and whose keys' order of locking cannot matter.
  FiberRunFn fiber_run_fn = nullptr;
  // Commands whose keys a count argument gives (EVAL's numkeys): appends the call's
  // keys, none when the count is invalid (the handler then replies the error). Replaces
  // first_key/last_key/key_step for routing.
  void (*keys_fn)(CmdArgs args, std::vector<std::string_view>* out) = nullptr;
  // For commands with both conn_fn and fiber_fn: true when this call needs the fiber.
  bool (*needs_fiber)(CmdArgs args) = nullptr;
  // For commands with both shard_fn and fiber_fn whose call may reach past the shard of
  // its keys (a script that is known to, or not known yet): true sends this call to
  // fiber_fn even when its keys hash to one shard. Asked only with several shards.
  bool (*spans_shards)(CmdArgs args) = nullptr;
  // For commands with both shard_fn and fiber_fn of which some calls may block (XREAD
  // BLOCK): true sends the call to fiber_fn whatever its keys and the shard count.
  bool (*may_block)(CmdArgs args) = nullptr;
  // For container commands of which some subcommands run while a script is busy
  // (SCRIPT KILL, FUNCTION KILL and STATS): true when this call may.
  bool (*allow_busy)(CmdArgs args) = nullptr;
  // Of the commands a busy script lets through, one that touches no shard: it runs at
  // once even on the busy script's own worker (Worker::ServeWhileBusy), where the others
  // wait for the script (AUTH, HELLO, QUIT, MULTI, SCRIPT KILL, FUNCTION KILL and STATS,
  // SHUTDOWN).
  bool busy_now = false;
  // For kCmdNoValue commands that read the value with some arguments (SET ... GET):
  // true when this call does.
  bool (*needs_value)(CmdArgs args) = nullptr;
  // Container commands (CONFIG, CLIENT, COMMAND): their subcommand names, lowercase.
  const std::vector<std::string>* subcommands = nullptr;
  // Its ACL categories, a bit each in kAclCategories' order (acl.h), and each
  // subcommand's, by its index in `subcommands` (set by the commands layer).
  uint32_t acl_categories = 0;
  std::vector<uint32_t> sub_acl_categories = {};
  // A write whose call does not reproduce its change on a replica (time, randomness,
  // a blocking wait): what to propagate instead (see PropagateFn). Null: the call.
  PropagateFn propagate = nullptr;
  // A write fiber whose call must not be propagated as itself (a blocking command, whose
  // pops propagate where a shard serves them; MIGRATE, whose deletes do).
  bool no_fiber_propagation = false;
  // Redis's CMD_ASKING (RESTORE-ASKING): runs in a slot this node imports as if the
  // client had sent ASKING.
  bool asking = false;
  // Derived once registration is done (CommandRegistry::Seal): the position of the only
  // key of a command with exactly one (GET, SET, INCR...) that every call of a valid
  // arity has, 0 for any other. The cluster check of such a command is one slot lookup;
  // 0 sends it down the general path.
  uint8_t single_key = 0;
  uint32_t id = 0;
  // The statistics slot (WorkerStats::commands) its calls count in: `id` for a command;
  // a slot of its own for the copy of a container that runs one of its subcommands.
  uint32_t stat_id = 0;
  // A container's, after CommandRegistry::Seal: for each of its subcommands, in
  // `subcommands` order, a copy of this spec that differs only in stat_id (and has none of
  // these). The dispatcher runs a container's call as its subcommand's copy, so every
  // count of the call lands in the subcommand's slot (INFO commandstats' "config|get")
  // while the counting path reads stat_id with no test of its own. Everything else about
  // a copy (id, name, handlers, ACL facts) is its container's.
  std::vector<const CommandSpec*> sub_specs = {};
  const char* summary = "";
  const char* group = "generic";
  const char* since = "1.0.0";

  bool is_write() const { return flags & kCmdWrite; }
  // The spec a call with subcommand `sub` (any case) runs as: its copy (see sub_specs),
  // or this one for an unknown subcommand, a command that is no container, or a copy.
  const CommandSpec* ForSubcommand(std::string_view sub) const;
  // Whether this call reads its keys' values (cold ones are read back first).
  bool NeedsValues(CmdArgs args) const {
    return !(flags & kCmdNoValue) || (needs_value != nullptr && needs_value(args));
  }
  // Appends the key arguments of a call to out.
  void Keys(CmdArgs args, std::vector<std::string_view>* out) const;
  bool CheckArity(size_t argc) const {
    return arity > 0 ? argc == static_cast<size_t>(arity) : argc >= static_cast<size_t>(-arity);
  }
};

class CommandRegistry {
 public:
  static CommandRegistry& Get() {
    static CommandRegistry registry;
    return registry;
  }
  void Add(CommandSpec spec);
  // Case-insensitive lookup; nullptr when unknown. On every command's path: a name of up
  // to kShortName bytes is read as two words, lowercased a word at a time, and found by
  // one compare of both words per probe; a longer one is lowercased and hashed a byte at
  // a time (bench/results/README.md "Finding the command").
  const CommandSpec* Find(std::string_view name) const;
  // Registration-time access (before workers start).
  CommandSpec* FindMutable(std::string_view name) { return const_cast<CommandSpec*>(Find(name)); }
  // After the last change to any spec: fills in the derived fields (single_key, the
  // subcommands' copies and statistics slots). No command is added or changed after it.
  void Seal();
  const std::vector<std::unique_ptr<CommandSpec>>& all() const { return specs_; }
  size_t size() const { return specs_.size(); }
  // Statistics slots (WorkerStats::commands): one per command, at its id, then one per
  // subcommand of each container, so INFO commandstats and latencystats list
  // "config|get" apart as Redis 7 does. stat_name(i): "get", "config|get".
  size_t stat_count() const { return stat_names_.empty() ? specs_.size() : stat_names_.size(); }
  const std::string& stat_name(size_t i) const {
    return i < stat_names_.size() ? stat_names_[i] : specs_[i]->name;
  }

 private:
  std::vector<std::unique_ptr<CommandSpec>> specs_;
  std::vector<std::string> stat_names_;                  // by statistics slot (Seal)
  std::vector<std::unique_ptr<CommandSpec>> sub_specs_;  // the subcommands' copies (Seal)
  static constexpr size_t kMaxNameLen = 32;
  static constexpr size_t kShortName = 16;
  // A name of at most kShortName bytes as two words, letters lowercased (the second word
  // also holds the length): equal for the same name in any case, different otherwise.
  struct ShortName {
    uint64_t a;
    uint64_t b;
  };
  static ShortName ShortNameOf(const char* p, size_t n);
  static size_t ShortHash(const ShortName& k);
  struct ShortSlot {
    ShortName key{0, 0};
    const CommandSpec* spec = nullptr;
  };
  // Two tables by open addressing, each a power of two of slots, at least four per
  // command; an empty slot ends a probe. Short names by ShortHash, longer ones by the
  // FNV-1a hash of the lowercase name.
  std::vector<ShortSlot> short_;
  std::vector<CommandSpec*> long_;
  // Names longer than kShortName: out of line, so that its name buffer does not put a
  // stack frame on every short name's lookup.
  [[gnu::noinline]] const CommandSpec* FindLong(std::string_view name) const;
  void Rehash();
};

// The statistics slot a call of spec counts in, for the paths that count a call that did
// not go through the dispatcher, which picks the subcommand's copy (a script's calls,
// CONFIG RESETSTAT's own): a container's subcommand's slot, else spec's own. The
// dispatched paths read spec->stat_id.
inline uint32_t SubcommandStatIndex(const CommandSpec& spec, std::string_view subcommand) {
  return spec.ForSubcommand(subcommand)->stat_id;
}
uint32_t StatIndexOf(const CommandSpec* spec, CmdArgs args);

// The reply to a call with the wrong number of arguments (Redis's exact wording).
std::string WrongArityError(std::string_view name);

}  // namespace strata
