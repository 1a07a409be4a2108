// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD/EXISTS/FLUSH/KILL/HELP.
//
// Two ways a script runs (docs/ARCHITECTURE.md "Scripts"):
//   - One step on the shard its KEYS hash to, through the ordinary routing (its keys
//     are numkeys' arguments: CommandSpec::keys_fn): inline when that is the client's own
//     shard, in the shard's batch otherwise, behind any lock on its keys. Used when the
//     process has one shard, or the script is known to stay on its KEYS' shard (its
//     route is narrow, script_store.h).
//   - Across shards (ScriptFiber): when its KEYS hash to several shards, or its route is
//     wide or not known yet (spans_shards). The fiber takes the whole-shard lock of every
//     shard of its KEYS and of the client's own shard (of every shard, for a wide
//     script or one not known yet), in shard order, then runs the script on the client's worker
//     with synchronous hops to the others (sync_hop.h), and releases. A run that reaches a shard it
//     does not hold before it writes is run again holding every shard.
#include <algorithm>
#include <string>

#include "core/sha1.h"
#include "core/string_util.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/hops.h"
#include "server/engine/lock_table.h"
#include "server/engine/worker.h"
#include "server/scripting/lua_vm.h"
#include "server/scripting/script_store.h"

namespace strata {
namespace {

// EVAL script numkeys key... arg...: numkeys, or -1 with the error replied.
int64_t NumKeys(CmdArgs args, ReplyBuilder* rb) {
  int64_t n = 0;
  if (!ParseInt64(args[2], &n)) {
    if (rb) rb->Error(errors::kNotInteger);
    return -1;
  }
  if (n < 0) {
    if (rb) rb->Error("ERR Number of keys can't be negative");
    return -1;
  }
  if (static_cast<uint64_t>(n) > args.size() - 3) {
    if (rb) rb->Error("ERR Number of keys can't be greater than number of args");
    return -1;
  }
  return n;
}

void ScriptKeys(CmdArgs args, std::vector<std::string_view>* out) {
  if (args.size() < 3) return;
  int64_t n = NumKeys(args, nullptr);
  for (int64_t i = 0; i < n; i++) out->push_back(args[3 + i]);
}

bool IsSha(std::string_view s) {
  if (s.size() != 40) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

bool IsFcall(std::string_view name) {
  return name.size() >= 5 && EqualsIgnoreCase(name.substr(0, 5), "fcall");
}

// Reads EVAL's (or FCALL's) arguments into *call; false with the error replied.
bool ParseCall(CmdArgs args, bool by_sha, bool read_only, ScriptCall* call, ReplyBuilder& rb) {
  call->command = args;
  if (IsFcall(args[0])) {
    int64_t n = 0;
    if (!ParseInt64(args[2], &n)) {
      rb.Error("ERR Bad number of keys provided");
      return false;
    }
    n = NumKeys(args, &rb);
    if (n < 0) return false;
    call->function.assign(args[1]);
    call->sha = "f:" + call->function;
    call->keys = args.subspan(3, static_cast<size_t>(n));
    call->argv = args.subspan(3 + static_cast<size_t>(n));
    call->read_only = read_only;
    return true;
  }
  // A sha that cannot be one is refused before numkeys is looked at, as Redis does.
  if (by_sha && args[1].size() != 40) {
    rb.Error("NOSCRIPT No matching script. Please use EVAL.");
    return false;
  }
  int64_t n = NumKeys(args, &rb);
  if (n < 0) return false;
  call->by_sha = by_sha;
  if (by_sha) {
    if (!IsSha(args[1])) {
      rb.Error("NOSCRIPT No matching script. Please use EVAL.");
      return false;
    }
    call->sha = Lowercase(args[1]);
  } else {
    call->sha = Sha1Hex(args[1]);
    call->body = args[1];
  }
  call->keys = args.subspan(3, static_cast<size_t>(n));
  call->argv = args.subspan(3 + static_cast<size_t>(n));
  call->read_only = read_only;
  return true;
}

bool IsEvalSha(std::string_view name) {
  return name.size() >= 7 && EqualsIgnoreCase(name.substr(0, 7), "evalsha");
}

bool IsReadOnly(std::string_view name) {
  return name.size() > 3 && EqualsIgnoreCase(name.substr(name.size() - 3), "_ro");
}

void RunScript(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb, bool by_sha, bool read_only) {
  ScriptCall call;
  if (!ParseCall(args, by_sha, read_only, &call, rb)) return;
  (void)LuaVm::ForThisThread().Run(call, ctx, rb);
}

// With several shards: whether this call runs across shards even though its KEYS hash to
// one (its script reaches further, or has not shown yet that it does not). Calls whose
// arguments are wrong stay on the one-step path, which replies the error.
bool ScriptSpansShards(CmdArgs args) {
  if (args.size() < 3 || NumKeys(args, nullptr) < 0) return false;
  std::string sha;
  if (IsFcall(args[0])) {
    sha = "f:" + std::string(args[1]);
  } else if (IsEvalSha(args[0])) {
    if (!IsSha(args[1])) return false;
    sha = Lowercase(args[1]);
  } else {
    sha = Sha1Hex(args[1]);
  }
  return LuaVm::ForThisThread().RouteOf(sha) != ScriptRoute::kNarrow;
}

void CmdEval(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  RunScript(args, ctx, rb, false, false);
}
void CmdEvalRo(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  RunScript(args, ctx, rb, false, true);
}
void CmdEvalSha(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  RunScript(args, ctx, rb, true, false);
}
void CmdEvalShaRo(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  RunScript(args, ctx, rb, true, true);
}
void CmdFcall(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  RunScript(args, ctx, rb, false, false);
}
void CmdFcallRo(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  RunScript(args, ctx, rb, false, true);
}

// A script across shards: holds its shards whole, in shard order, as one owner (the
// transaction's when inside EXEC), runs on this worker with synchronous hops to the
// others, releases; once more holding every shard when the run reached further before
// writing.
Fiber ScriptFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  // This fiber's origin (task.h): the script's calls are its client's, and a tracking
  // client's reads among them are remembered (tracking.h).
  const FiberOrigin* origin = t_fiber_origin;
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  ScriptCall call;
  if (!ParseCall(args, IsEvalSha(args[0]), IsReadOnly(args[0]), &call, rb)) {
    c->FinishFiber(std::move(out));
    co_return;
  }
  if (c->acl_restricted()) call.user = c->acl_user;
  Worker& home = c->worker();
  uint32_t n = home.engine().shard_count();
  // A script not known yet holds every shard for its first run, which shows where it
  // reaches (so no first run fails for having written before it reached further).
  bool every = LuaVm::ForThisThread().RouteOf(call.sha) != ScriptRoute::kNarrow;
  uint64_t saved_owner = c->txn_owner;
  uint64_t owner = saved_owner != 0 ? saved_owner : (c->id() | (uint64_t{1} << 63));
  for (;;) {
    std::vector<char> held(n, every ? 1 : 0);
    held[home.index()] = 1;
    for (std::string_view k : call.keys) held[ShardOfKey(k, n)] = 1;
    std::vector<uint32_t> shards;
    for (uint32_t s = 0; s < n; s++) {
      if (held[s]) shards.push_back(s);
    }
    std::vector<LockTable::Request> holds(shards.size());
    for (size_t i = 0; i < shards.size(); i++) {
      holds[i].whole = true;
      holds[i].owner = owner;
      holds[i].then_hops = true;
      co_await LockOn(shards[i], &holds[i]);
    }
    home.stats().scripts_across_shards++;
    if (every) home.stats().scripts_every_shard++;
    home.RefreshClock();
    ShardCtx ctx{home, home.keyspace(), c->db, home.now_ms(), c->is_master()};
    Keyspace::MasterCallScope master_call(ctx.ks, ctx.from_master);
    ScriptScope scope{c, &held, owner, nullptr};
    // Inside a transaction, the keys it gives elements to are served when that is done.
    if (origin != nullptr) scope.holds = origin->ready_holds;
    c->txn_owner = owner;
    out.clear();
    LuaVm::RunResult r;
    {
      // Only around the run: releasing the holds below may run other clients' commands.
      ExecScope exec(origin);
      r = LuaVm::ForThisThread().Run(call, ctx, rb, &scope);
    }
    c->txn_owner = saved_owner;
    // Released without waiting for an answer: nothing here depends on it, and whatever
    // this worker sends those shards next travels behind the release on the same ring.
    for (uint32_t s : shards) {
      if (s == home.index()) {
        home.locks().ReleaseWhole();
      } else {
        home.Post(s, Task{[](void*) { Worker::Current()->locks().ReleaseWhole(); }, nullptr});
      }
    }
    if (r == LuaVm::RunResult::kNeedsEveryShard && !every) {
      every = true;
      continue;
    }
    if (r == LuaVm::RunResult::kNeedsEveryShard) {
      rb.Error("ERR internal error: a script holding every shard reached past them");
    }
    break;
  }
  c->FinishFiber(std::move(out));
}

void CmdScript(Client& c, CmdArgs args, ReplyBuilder& rb) {
  std::string sub = Lowercase(args[1]);
  ScriptStore& store = ScriptStore::Get();
  if (sub == "load" && args.size() == 3) {
    // Compiled by this worker's interpreter first: a body that does not compile is
    // refused now, as Redis does; it then goes to the store for every worker.
    std::string sha = Sha1Hex(args[2]);
    std::string error;
    if (!LuaVm::ForThisThread().Prepare(sha, args[2], &error)) {
      rb.Error(error);
      return;
    }
    rb.Bulk(sha);
    (void)c;
  } else if (sub == "exists" && args.size() >= 3) {
    rb.Array(args.size() - 2);
    for (size_t i = 2; i < args.size(); i++) rb.Integer(store.Contains(Lowercase(args[i])) ? 1 : 0);
  } else if (sub == "flush" && args.size() <= 3) {
    if (args.size() == 3 && !EqualsIgnoreCase(args[2], "async") &&
        !EqualsIgnoreCase(args[2], "sync")) {
      rb.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
      return;
    }
    store.Flush();
    rb.Ok();
  } else if (sub == "debug" && args.size() == 3) {
    // Redis's Lua debugger (LDB) is not part of strata: NO, the mode every script runs
    // in, is accepted; YES and SYNC are refused naming why.
    if (EqualsIgnoreCase(args[2], "no")) {
      rb.Ok();
    } else if (EqualsIgnoreCase(args[2], "yes") || EqualsIgnoreCase(args[2], "sync")) {
      rb.Error("ERR strata has no Lua debugger: SCRIPT DEBUG YES and SYNC are not supported");
    } else {
      rb.Error("ERR Use SCRIPT DEBUG YES/SYNC/NO");
    }
  } else if (sub == "kill" && args.size() == 2) {
    std::string r = LuaVm::KillRunning();
    r == "OK" ? rb.Ok() : rb.Error(r);
  } else if (sub == "help" && args.size() == 2) {
    const char* lines[] = {
        "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DEBUG (YES|SYNC|NO)",
        "    Set the debug mode for subsequent scripts executed.",
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache. Very dangerous on replicas.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the scripts cache.",
        "    * SYNC: Synchronously flush the scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
        "HELP",
        "    Prints this help."};
    rb.Array(sizeof(lines) / sizeof(lines[0]));
    for (const char* l : lines) rb.Simple(l);
  } else if (sub == "flush") {
    rb.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
  } else if (sub == "load" || sub == "exists" || sub == "kill" || sub == "help" || sub == "debug") {
    rb.Error("ERR wrong number of arguments for 'script|" + sub + "' command");
  } else {
    rb.Error("ERR unknown subcommand '" + std::string(args[1]) + "'. Try SCRIPT HELP.");
  }
}

}  // namespace

void RegisterScriptFamily(CommandRegistry& r) {
  auto add = [&](const char* name, uint32_t flags, ShardFn fn, const char* since,
                 const char* summary) {
    CommandSpec s{name, -3, flags | kCmdNoScript | kCmdStale | kCmdScript, 3, 3, 1};
    s.keys_fn = ScriptKeys;
    s.shard_fn = fn;
    s.fiber_fn = ScriptFiber;
    s.spans_shards = ScriptSpansShards;
    s.group = "scripting";
    s.since = since;
    s.summary = summary;
    r.Add(std::move(s));
  };
  add("eval", kCmdWrite, CmdEval, "2.6.0", "Executes a server-side Lua script.");
  add("evalsha", kCmdWrite, CmdEvalSha, "2.6.0",
      "Executes a server-side Lua script by SHA1 digest.");
  add("eval_ro", kCmdReadOnly, CmdEvalRo, "7.0.0", "Executes a read-only server-side Lua script.");
  add("evalsha_ro", kCmdReadOnly, CmdEvalShaRo, "7.0.0",
      "Executes a read-only server-side Lua script by SHA1 digest.");
  add("fcall", kCmdWrite, CmdFcall, "7.0.0", "Invokes a function.");
  add("fcall_ro", kCmdReadOnly, CmdFcallRo, "7.0.0", "Invokes a read-only function.");
  CommandSpec s{"script", -2, kCmdNoScript, 0, 0, 0};
  s.conn_fn = CmdScript;
  s.group = "scripting";
  s.since = "2.6.0";
  s.summary = "A container for Lua scripts management commands.";
  s.allow_busy = [](CmdArgs a) { return a.size() == 2 && EqualsIgnoreCase(a[1], "kill"); };
  static const std::vector<std::string> kSubcommands = {"debug", "exists", "flush",
                                                        "help",  "kill",   "load"};
  s.subcommands = &kSubcommands;
  r.Add(std::move(s));
}

}  // namespace strata
