// LuaVm: one Lua 5.1 interpreter per worker thread, with Redis 7's scripting
// environment, and the runner of EVAL/EVALSHA on the shard that owns the script's keys.
//
// Environment (as Redis 7.0): the base, table, string and math libraries, cjson and bit
// (Debian's lua-cjson and lua-bitop), struct and cmsgpack (lua_struct.h, lua_cmsgpack.h),
// and `redis` - call, pcall, error_reply,
// status_reply, sha1hex, log, setresp, set_repl, replicate_commands, breakpoint, debug
// and the LOG_* / REPL_* constants; loadfile and dofile removed. Scripts see globals
// read-only: they run in an empty environment whose reads fall through to the real
// globals (a missing one is an error: "Script attempted to access nonexistent global
// variable") and whose writes fail ("Attempt to modify a readonly table"), so nothing a
// script does leaks into the next one. KEYS and ARGV are set before each run.
//
// A script is compiled once per interpreter as f_<sha> (chunk name @user_script, so
// errors read "user_script:LINE: ..."), looked up by SHA-1 in the process's ScriptStore
// (script_store.h) the first time this worker runs it, and dropped when SCRIPT FLUSH
// bumps the store's generation. A `#!lua flags=...` first line sets no-writes,
// allow-oom, allow-stale, no-cluster and allow-cross-slot-keys, as Redis 7 does.
//
// Where a script runs (docs/ARCHITECTURE.md "Scripts" has the whole essay):
//   - As one step on the shard its KEYS hash to (the EVAL command's shard path), when
//     the script is known to stay there (its route, script_store.h, is narrow). A shard
//     runs one step at a time, so it is atomic over every key of that shard. redis.call
//     runs the command's shard function right there. Should it reach another shard after
//     all, the call fails and the script is marked wide.
//   - Across shards (a ScriptScope given): the caller's fiber holds the whole-shard lock
//     of every shard in `held`, its own worker's included, and the script runs on the
//     client's worker; a call on a held shard is a synchronous hop there (sync_hop.h),
//     a multi-shard command runs its fiber synchronously under the same owner. A call on
//     a shard not held, before the script wrote anything, abandons the run
//     (kNeedsEveryShard: the caller runs it again holding every shard); after a write,
//     the call fails. Either way the script is marked wide.
// Errors are Redis's: a failing redis.call raises the command's error, and the client
// gets "<error> script: <sha>, on @user_script:<line>.".
// Thread-safety: ForThisThread() gives the calling thread's own interpreter; nothing is
// shared but the ScriptStore.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "server/engine/acl.h"
#include "server/engine/command.h"
#include "server/engine/function_store.h"
#include "server/net/reply_builder.h"
#include "server/scripting/script_store.h"

struct lua_State;

namespace strata {

class Client;
struct ReadyHolds;
class Worker;

// Shebang flags (#!lua flags=...).
enum ScriptFlag : uint32_t {
  kScriptNoWrites = 1 << 0,
  kScriptAllowOom = 1 << 1,
  kScriptAllowStale = 1 << 2,
  kScriptNoCluster = 1 << 3,
  kScriptAllowCrossSlot = 1 << 4,
  kScriptHasShebang = 1 << 5,  // a #!lua line, flags or not
};

// A run across shards: what the caller's fiber holds (see above).
struct ScriptScope {
  Client* client = nullptr;                 // the caller: multi-shard commands run as its fibers
  const std::vector<char>* held = nullptr;  // held[s]: shard s is held whole by `owner`
  uint64_t owner = 0;
  // Run inside a transaction: where its calls hold the keys they give elements to, for
  // the transaction to serve (engine/blocking.h). Null: the script serves its own.
  std::shared_ptr<ReadyHolds> holds;
};

struct ScriptCall {
  // The script's SHA-1 (lowercase hex); for FCALL, "f:" and the function's name (what
  // its route is kept under: script_store.h).
  std::string sha;
  std::string function;   // FCALL, FCALL_RO: the function's name
  std::string_view body;  // EVAL's body
  bool by_sha = false;    // EVALSHA: the body is looked up
  CmdArgs keys;
  CmdArgs argv;
  bool read_only = false;  // EVAL_RO, EVALSHA_RO, FCALL_RO
  CmdArgs command;         // the whole command (FUNCTION STATS shows a running function's)
  // The caller's ACL user, when it is restricted: every redis.call is checked against it
  // (such a caller's scripts run as ScriptFiber, which knows the client).
  AclUserPtr user;
};

class LuaVm {
 public:
  static LuaVm& ForThisThread();
  LuaVm();
  ~LuaVm();
  LuaVm(const LuaVm&) = delete;
  LuaVm& operator=(const LuaVm&) = delete;

  enum class RunResult { kDone, kNeedsEveryShard };
  // Runs the script on this thread; its reply (or error) goes to rb. ctx is this shard's.
  // Without `across`, as one step on this shard; with it, across the shards it holds
  // (kNeedsEveryShard: nothing was written and nothing replied; run it again holding
  // every shard).
  RunResult Run(const ScriptCall& call, ShardCtx& ctx, ReplyBuilder& rb,
                const ScriptScope* across = nullptr);
  // What this process knows of where the script reaches (script_store.h), through this
  // thread's cache.
  ScriptRoute RouteOf(const std::string& sha);
  // Compiles body (SHA-1 sha) unless this interpreter has it, and adds it to the store
  // (SCRIPT LOAD, and EVAL the first time). False with *error when it does not compile.
  bool Prepare(const std::string& sha, std::string_view body, std::string* error);
  // Parses a body's shebang: flags, and the code to compile (the shebang line emptied, so
  // line numbers stay). False with *error (Redis's text) when it is not valid.
  static bool ParseShebang(std::string_view body, uint32_t* flags, std::string* code,
                           std::string* error);

  size_t memory_bytes() const;
  // While a script (or a library's load) runs, the interpreter's heap may not grow past
  // maxmemory, when one is set (at least kMinScriptHeapBytes): an allocation past it
  // fails, and the script ends with Lua's "not enough memory" error instead of taking
  // the process's memory. With no maxmemory there is no bound, as in Redis.
  static constexpr size_t kMinScriptHeapBytes = 32u << 20;
  size_t heap_bytes() const { return heap_bytes_; }
  size_t compiled_scripts() const { return compiled_.size(); }
  // Every interpreter's memory together (INFO used_memory_lua), as last published by each
  // after it ran or compiled something.
  static size_t AllMemoryBytes();
  // SCRIPT KILL (eval true) and FUNCTION KILL (any thread): asks every script (or
  // function) running now to stop. "OK" when one was asked, NOTBUSY when none runs,
  // UNKILLABLE when the running ones have written, BUSY when what runs is of the other
  // kind. A script checks for the request (and for the process stopping) every
  // kHookInstructions instructions.
  static std::string KillRunning(bool eval = true);
  // The function running now, if any (FUNCTION STATS): its name, its command's
  // arguments, and since when (wall-clock microseconds).
  struct RunningFunction {
    std::string name;
    std::vector<std::string> command;
    int64_t since_us = 0;
  };
  static bool FindRunningFunction(RunningFunction* out);

  // Function libraries (server/engine/function_store.h). Inspect checks a library's code
  // in this thread's interpreter without keeping it (FUNCTION LOAD, restores):
  // Redis's errors for bad metadata, code that does not compile or fails to load, and
  // what redis.register_function refuses. The store's inspector.
  static bool InspectLibrary(std::string_view code, FunctionLibrary* out, std::string* error);
  // The flag names of ScriptFlag bits, in Redis's order (FUNCTION LIST).
  static std::vector<std::string> FlagNames(uint32_t flags);
  size_t compiled_functions() const { return function_flags_.size(); }
  static constexpr int64_t kLibraryLoadTimeoutUs = 500000;  // as Redis's
  static constexpr int kHookInstructions = 100000;

  // The state of the script running on this thread, for redis.call (lua_vm.cc).
  struct RunState;

 private:
  bool Compile(const std::string& sha, std::string_view body, std::string* error);
  // Loads a library's code; with keep, its functions join this interpreter's callable
  // ones (FCALL); without, they are only described in *out.
  bool LoadLibrary(std::string_view code, bool keep, FunctionLibrary* out, std::string* error);
  // Compiles the store's libraries again when they changed since this interpreter did.
  void EnsureLibraries();
  // The constructor's part for libraries (lua_library.cc).
  void InstallLibraryApi();
  RunResult RunFunction(const ScriptCall& call, ShardCtx& ctx, ReplyBuilder& rb,
                        const ScriptScope* across);
  RunResult Execute(const ScriptCall& call, ShardCtx& ctx, ReplyBuilder& rb,
                    const ScriptScope* across, uint32_t flags, int nargs);
  void DropCompiled();
  void PublishMemory();
  // After a run that held its own ready keys: serves them here, and (across) on each
  // other shard by a synchronous hop, while the script still holds those shards.
  void ServeHeld(Worker& w, bool across);

  lua_State* L_ = nullptr;
  int env_ref_ = 0;                                     // the scripts' read-only environment
  std::unordered_map<std::string, uint32_t> compiled_;  // sha -> flags
  uint64_t generation_ = 0;
  size_t published_bytes_ = 0;
  std::unordered_map<std::string, ScriptRoute> routes_;       // narrow and wide ones
  std::unordered_map<std::string, uint32_t> function_flags_;  // callable functions' flags
  // The heap bound (see kMinScriptHeapBytes): bytes allocated, and the limit while a
  // script runs (0: none).
  static void* Allocate(void* ud, void* ptr, size_t osize, size_t nsize);
  size_t HeapLimit();
  size_t heap_bytes_ = 0;
  size_t heap_limit_ = 0;
  uint64_t lib_generation_ = UINT64_MAX;
  int redis_proxy_ref_ = 0;   // functions' `redis`: the load API while loading
  int lib_env_meta_ref_ = 0;  // the metatable of every library's environment
  uint64_t route_epoch_ = 0;
  std::shared_ptr<ReadyHolds> own_holds_;  // a top-level script's (engine/blocking.h)

 public:
  // For SCRIPT KILL from other threads (lua_vm.cc).
  std::atomic<int64_t> running_since_us_{0};  // 0: no script running
  std::atomic<bool> wrote_{false};
  std::atomic<bool> kill_requested_{false};
  std::atomic<bool> running_function_{false};
  std::mutex running_mu_;  // running_name_, running_command_
  std::string running_name_;
  std::vector<std::string> running_command_;
};

}  // namespace strata
