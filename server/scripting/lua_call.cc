// redis.call and redis.pcall: a script's command run on the shard that holds its keys
// (this worker's, or another's by a synchronous hop), with Redis's checks and errors
// (arity, no-script commands, ACL, read-only runs, keys off the run's shards), its
// effects captured for the replicas, and its reply converted to Lua (lua_reply.h).
// Split from lua_vm.cc, the interpreter it runs under.
// Thread-safety: the run's own worker thread (lua_run_state.h).
#include "server/scripting/lua_run_state.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/hash.h"
#include "core/string_util.h"
#include "server/base/config.h"
#include "server/base/cycle_clock.h"
#include "server/base/log.h"
#include "server/engine/client.h"
#include "server/engine/engine.h"
#include "server/engine/sync_hop.h"
#include "server/engine/worker.h"
#include "server/scripting/lua_env.h"
#include "server/scripting/lua_reply.h"
#include "server/scripting/script_store.h"

namespace strata::lua_env {

// ---- redis.call / redis.pcall -----------------------------------------------------

// Argument text as Redis gives it to the command: strings as they are, numbers as
// integers when integral, else with 17 significant digits.
bool ArgText(lua_State* L, int index, std::string* out) {
  int t = lua_type(L, index);
  if (t == LUA_TSTRING) {
    size_t len = 0;
    const char* s = lua_tolstring(L, index, &len);
    out->assign(s, len);
    return true;
  }
  if (t == LUA_TNUMBER) {
    double d = lua_tonumber(L, index);
    char buf[64];
    if (std::floor(d) == d && std::fabs(d) < 9.2e18) {
      std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(d));
    } else {
      std::snprintf(buf, sizeof(buf), "%.17g", d);
    }
    out->assign(buf);
    return true;
  }
  return false;
}

// A command a script may not run, or may not run here.
bool NotAllowed(const CommandSpec* spec) {
  return (spec->flags & (kCmdNoScript | kCmdBlocking | kCmdTransaction)) != 0;
}

// Runs a command for the running script. Pushes its reply converted (1), or pushes the
// error to raise and returns -1 (the caller raises it, after every C++ object here is
// gone: lua_error does not unwind C++ frames). With raise false, errors are returned
// as {err=...} instead.
int CallImpl(lua_State* L, bool raise) {
  LuaVm::RunState* st = t_run;
  thread_local std::vector<std::string> argv_store;
  thread_local std::vector<std::string_view> argv;
  thread_local std::vector<std::string_view> keys;
  thread_local std::string reply;
  auto fail = [&](std::string_view message) {
    PushTableWith(L, "err", message);
    return raise ? -1 : 1;
  };
  if (st == nullptr) return fail("ERR redis.call outside a script");
  int argc = lua_gettop(L);
  if (argc == 0) return fail("ERR Please specify at least one argument for this redis lib call");
  if (argv_store.size() < static_cast<size_t>(argc)) argv_store.resize(argc);
  argv.clear();
  for (int i = 0; i < argc; i++) {
    if (!ArgText(L, i + 1, &argv_store[i])) {
      return fail("ERR Lua redis lib command arguments must be strings or integers");
    }
    argv.push_back(argv_store[i]);
  }
  CmdArgs args(argv.data(), argv.size());
  const CommandSpec* spec = CommandRegistry::Get().Find(args[0]);
  if (spec == nullptr) return fail("ERR Unknown Redis command called from script");
  if (args.size() >= 2 &&
      (EqualsIgnoreCase(args[0], "blmpop") || EqualsIgnoreCase(args[0], "bzmpop"))) {
    // As in Redis, these do not block in a script: they run as LMPOP / ZMPOP (their
    // timeout checked, then dropped).
    if (!spec->CheckArity(args.size())) {
      return fail("ERR Wrong number of args calling Redis command from script");
    }
    char* end = nullptr;
    std::string t(args[1]);
    double timeout = std::strtod(t.c_str(), &end);
    if (t.empty() || end != t.c_str() + t.size() || std::isnan(timeout)) {
      return fail("ERR timeout is not a float or out of range");
    }
    if (timeout < 0) return fail("ERR timeout is negative");
    argv.erase(argv.begin() + 1);
    argv[0] = EqualsIgnoreCase(args[0], "blmpop") ? std::string_view("lmpop") : "zmpop";
    args = CmdArgs(argv.data(), argv.size());
    spec = CommandRegistry::Get().Find(args[0]);
    if (spec == nullptr) return fail("ERR Unknown Redis command called from script");
  }
  if (!spec->CheckArity(args.size())) {
    return fail("ERR Wrong number of args calling Redis command from script");
  }
  if (EqualsIgnoreCase(args[0], "xread") || EqualsIgnoreCase(args[0], "xreadgroup")) {
    // As Redis: a script may read streams but not wait for them.
    for (size_t i = 1; i + 1 < args.size(); i++) {
      if (EqualsIgnoreCase(args[i], "streams")) break;
      if (EqualsIgnoreCase(args[i], "block")) {
        std::string cmd = Lowercase(args[0]);
        for (char& ch : cmd) ch = static_cast<char>(ch - 'a' + 'A');
        return fail("ERR " + cmd + " command is not allowed with BLOCK option from scripts");
      }
    }
  }
  if (NotAllowed(spec)) return fail("ERR This Redis command is not allowed from script");
  if (st->user != nullptr) [[unlikely]] {
    AclUser::Verdict v = st->user->Check(*spec, args);
    if (v.denied != AclUser::Denied::kNone) {
      // A restricted user's script runs as its fiber, on its client's worker: the
      // entry describes that client, as Redis's does.
      Worker& home = st->ctx->worker;
      std::string info =
          st->across != nullptr ? st->across->client->InfoLine(home.now_ms()) : std::string();
      AclRegistry::Get().LogRefusal(
          v, "lua", st->user->name(), std::move(info),
          static_cast<size_t>(home.engine().config().Int("acllog-max-len")));
      return fail(AclScriptDeniedError(v));
    }
  }
  if ((spec->is_write() || (spec->flags & kCmdMayReplicate)) && st->read_only) {
    return fail("ERR Write commands are not allowed from read-only scripts.");
  }
  ShardCtx& ctx = *st->ctx;
  Worker& w = ctx.worker;
  if (spec->is_write() && !ctx.from_master) {
    if (const char* refused = w.engine().replication().ScriptWriteRefusal()) return fail(refused);
  }
  if ((spec->flags & kCmdDenyOom) && !(st->flags & kScriptAllowOom) && w.over_memory_limit()) {
    return fail("OOM command not allowed when used memory > 'maxmemory'.");
  }
  reply.clear();
  ReplyBuilder rb(&reply, st->resp);
  std::string_view name = spec->name;
  if (st->needs_every_shard) {
    // The run is being abandoned: nothing more runs, pcall or not.
    PushTableWith(L, "err", kAbandoned);
    return -1;
  }
  uint32_t n = w.engine().shard_count();
  // A multi-shard command (keys on several shards, or the whole keyspace) runs as its
  // fiber, only in a run across shards.
  bool fiber_cmd = false;
  uint32_t target = w.index();
  if (spec->shard_fn != nullptr || (spec->fiber_fn != nullptr && spec->conn_fn == nullptr)) {
    keys.clear();
    spec->Keys(args, &keys);
    if (spec->shard_fn == nullptr) {
      fiber_cmd = true;
    } else if (!keys.empty()) {
      target = ShardOfKey(keys[0], n);
      for (size_t i = 1; i < keys.size() && !fiber_cmd; i++) {
        fiber_cmd = ShardOfKey(keys[i], n) != target;
      }
    }
    if (fiber_cmd && spec->fiber_fn == nullptr) {
      return fail("ERR internal error: a command over several shards without a fiber");
    }
    // Where may it run? One step: only here. Across: on the shards held.
    std::string_view outside;
    bool reached = false;
    if (st->across == nullptr) {
      if (fiber_cmd || target != w.index()) {
        reached = true;
        outside = keys.empty() ? std::string_view("*") : keys[0];
        for (std::string_view k : keys) {
          if (ShardOfKey(k, n) != w.index()) {
            outside = k;
            break;
          }
        }
      }
    } else {
      const std::vector<char>& held = *st->across->held;
      if (fiber_cmd && spec->shard_fn == nullptr) {
        st->reached_beyond = true;  // the whole keyspace
        for (uint32_t s = 0; s < n && !reached; s++) {
          if (!held[s]) {
            reached = true;
            outside = "*";
          }
        }
      }
      for (std::string_view k : keys) {
        uint32_t s = ShardOfKey(k, n);
        if (!st->declared[s]) st->reached_beyond = true;
        if (!held[s] && !reached) {
          reached = true;
          outside = k;
        }
      }
    }
    if (reached) {
      ScriptStore::Get().SetRoute(*st->sha, ScriptRoute::kWide);
      if (st->across != nullptr && !st->wrote) {
        st->needs_every_shard = true;
        PushTableWith(L, "err", kAbandoned);
        return -1;
      }
      std::string what = outside == "*" ? std::string("the whole keyspace")
                                        : "key '" + std::string(outside.substr(0, 128)) + "'";
      return fail("ERR Script attempted to access " + what +
                  ", beyond the shards it holds (strata runs a script on the shard of its "
                  "KEYS until it is seen to reach further; from now on this script holds "
                  "every shard it needs): run it again");
    }
    if (spec->is_write()) {
      // Marked before the write, checked against a kill after: a script SCRIPT KILL
      // stopped never writes again, and one that wrote is never stopped (UNKILLABLE).
      st->wrote = true;
      st->vm->wrote_.store(true, std::memory_order_seq_cst);
      if (st->vm->kill_requested_.load(std::memory_order_seq_cst)) {
        PushTableWith(L, "err", "ERR Script killed by user with SCRIPT KILL...");
        return -1;  // raised even from redis.pcall
      }
    }
    uint32_t db = st->db;
    // With replicas the script's effects are one group on its own worker (Run); calls
    // on other shards capture theirs into it while the script waits (repl_feed.h), so
    // the whole script is one record.
    ReplGroup* effects = w.repl_on() ? w.repl_feed().target() : nullptr;
    if (!fiber_cmd) {
      std::string* out = &reply;  // this thread's (run may run on another)
      // The script's client, and whom its reads are remembered for (tracking.h).
      ExecOrigin origin = t_exec;
      auto run = [&](Worker& x) {
        HoldReadyScope hold(st->holds);
        std::optional<ReplFeed::CaptureScope> capture;
        if (effects != nullptr && &x != &w) capture.emplace(x.repl_feed(), effects);
        ShardCtx call_ctx{x, x.keyspace(), db, x.now_ms(), st->ctx->from_master};
        Keyspace::MasterCallScope master_call(x.keyspace(), call_ctx.from_master);
        if (x.eviction().active() && (spec->flags & kCmdDenyOom)) x.eviction().BeforeWrite(args);
        ExecOrigin saved = t_exec;
        t_exec = origin;
        uint64_t t0 = CycleClock::Now();
        x.BeforeShardCall();
        spec->shard_fn(args, call_ctx, rb);
        if (x.repl_on()) [[unlikely]]
          x.Propagate(spec, args, db, *out);
        if (origin.script_tracker != 0 && (spec->flags & kCmdReadOnly)) [[unlikely]]
          x.tracking().RememberKeys(spec, args, origin.script_tracker, origin.script_worker);
        t_exec = saved;
        CommandStat& cs = x.stats().commands[StatIndexOf(spec, args)];
        cs.calls++;
        cs.usec_ticks += CycleClock::Now() - t0;
        if (!out->empty() && (*out)[0] == '-') cs.failed_calls++;
      };
      if (target == w.index()) {
        run(w);
      } else if (!SyncHop(target, run)) {
        return fail("ERR the server is shutting down: the script was stopped");
      }
    } else {
      // The command's own fiber, run to its end here: its hops are synchronous and its
      // lock requests, made as the script's owner, nest under the script's holds.
      Client* c = st->across->client;
      Client::NestedReply nested;
      Client::NestedReply* saved_nested = c->nested;
      uint32_t saved_db = c->db;
      c->nested = &nested;
      c->db = db;
      uint64_t t0 = CycleClock::Now();
      if (t_exec.script_tracker != 0 && (spec->flags & kCmdReadOnly)) [[unlikely]] {
        // A tracking client's script reading across shards: its steps remember the keys.
        c->next_fiber_origin.track =
            MakeTrackedRead(spec, args, t_exec.script_tracker, t_exec.script_worker);
      }
      {
        ExecOrigin saved = t_exec;
        SyncHopScope sync;
        std::shared_ptr<OwnedArgs> owned = OwnedArgs::Copy(args);
        c->next_fiber_origin.ready_holds = st->holds_shared;
        if (c->worker().repl_on()) [[unlikely]]
          c->worker().ArmFiberPropagation(c, spec, owned, db);
        if (effects != nullptr) [[unlikely]] {
          // Its steps' records and its command go into the script's group; one that is
          // not propagated as itself (a blocking command's pop) only captures.
          std::shared_ptr<FiberRepl>& r = c->next_fiber_origin.repl;
          if (r == nullptr) {
            r = std::make_shared<FiberRepl>();
            r->claimed.store(true, std::memory_order_relaxed);
          }
          r->capture = effects;
        }
        spec->fiber_fn(c, owned);
        t_exec = saved;
      }
      c->nested = saved_nested;
      c->db = saved_db;
      CommandStat& cs = w.stats().commands[StatIndexOf(spec, args)];
      cs.calls++;
      cs.usec_ticks += CycleClock::Now() - t0;
      if (!nested.done) {
        LogWarning("script: '%s' did not finish inside the script", spec->name.c_str());
        return fail("ERR internal error: the command did not finish inside the script");
      }
      reply = std::move(nested.reply);
      if (!reply.empty() && reply[0] == '-') cs.failed_calls++;
    }
  } else if (name == "ping") {
    args.size() > 1 ? rb.Bulk(args[1]) : rb.Simple("PONG");
  } else if (name == "echo") {
    rb.Bulk(args[1]);
  } else if (name == "select") {
    int64_t index = 0;
    if (!ParseInt64(args[1], &index)) {
      rb.Error("ERR value is not an integer or out of range");
    } else if (index < 0 || index >= static_cast<int64_t>(ctx.ks.db_count())) {
      rb.Error("ERR DB index is out of range");
    } else {
      st->db = static_cast<uint32_t>(index);
      rb.Ok();
    }
  } else if (name == "time") {
    int64_t us = WallClockUs();
    rb.Array(2);
    rb.Bulk(std::to_string(us / 1000000));
    rb.Bulk(std::to_string(us % 1000000));
  } else {
    return fail("ERR strata does not run '" + std::string(name) + "' inside scripts yet");
  }
  if (lua_reply::Push(L, reply) == 0) return fail("ERR internal error: unreadable reply");
  if (!reply.empty() && reply[0] == '-') {
    // The command's reply counted this error (ReplyBuilder::Error).
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, lua_reply::kErrorCountedField);
    if (raise) return -1;  // the pushed {err=...}
  }
  return 1;
}

}  // namespace strata::lua_env
