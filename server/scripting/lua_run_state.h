// The state of one script run (EVAL, FCALL) that the interpreter (lua_vm.cc) and
// redis.call / redis.pcall (lua_call.cc) share. Internal to server/scripting/.
// Thread-safety: the run's own worker thread (t_run is per thread).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

extern "C" {
#include <lua.h>
}

#include "server/engine/blocking.h"
#include "server/engine/command.h"
#include "server/scripting/lua_vm.h"

namespace strata {

struct LuaVm::RunState {
  ShardCtx* ctx;
  uint32_t db;
  int resp = 2;
  bool read_only = false;
  uint32_t flags = 0;
  LuaVm* vm = nullptr;
  bool wrote = false;
  const std::string* sha = nullptr;
  // A run across shards (null: one step on this shard).
  const ScriptScope* across = nullptr;
  std::vector<char> declared;   // across: the shards of KEYS
  bool reached_beyond = false;  // across: touched a key off them, or the whole keyspace
  bool needs_every_shard = false;
  bool function = false;  // FCALL
  int64_t start_us = 0;
  bool busy = false;  // past busy-reply-threshold (Engine::busy_scripts counts it)
  // The caller's ACL user when it is restricted (acl.h): each call is checked against it.
  const AclUser* user = nullptr;
  // Where its calls hold the keys they give elements to (engine/blocking.h): the
  // enclosing transaction's, or the interpreter's own, served when the script is done.
  ReadyHolds* holds = nullptr;
  std::shared_ptr<ReadyHolds> holds_shared;  // the same, for its multi-shard commands
};

namespace lua_env {

// The run on this thread, or null outside one.
extern thread_local LuaVm::RunState* t_run;

// The error that unwinds a run being abandoned to run again holding every shard (never
// seen by the client).
inline constexpr const char* kAbandoned = "ERR the script reached a shard it does not hold";

// redis.call (raise true) and redis.pcall: runs the command for the run on this thread.
// Pushes its reply converted (1), or pushes the error to raise and returns -1.
int CallImpl(lua_State* L, bool raise);

}  // namespace lua_env
}  // namespace strata
