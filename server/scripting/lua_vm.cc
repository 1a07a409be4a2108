#include "server/scripting/lua_vm.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
int luaopen_cjson(lua_State* L);
int luaopen_bit(lua_State* L);
}

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/hash.h"
#include "core/sha1.h"
#include "core/string_util.h"
#include "server/base/config.h"
#include "server/base/cycle_clock.h"
#include "server/base/log.h"
#include "server/engine/client.h"
#include "server/engine/engine.h"
#include "server/engine/sync_hop.h"
#include "server/engine/worker.h"
#include "server/scripting/lua_cmsgpack.h"
#include "server/scripting/lua_env.h"
#include "server/scripting/lua_reply.h"
#include "server/scripting/lua_run_state.h"
#include "server/scripting/lua_struct.h"
#include "server/scripting/script_store.h"

namespace strata {

namespace lua_env {

thread_local LuaVm::RunState* t_run = nullptr;
std::atomic<size_t> g_lua_bytes{0};
std::mutex g_vms_mu;
std::vector<LuaVm*> g_vms;

constexpr const char* kFunctionsKey = "strata_functions";

// ---- the scripts' environment -----------------------------------------------------

// Raises Redis's error for reading a global that does not exist (the script's position
// first).
int NoSuchGlobal(lua_State* L, const char* name) {
  luaL_where(L, 1);
  lua_pushfstring(L, "Script attempted to access nonexistent global variable '%s'",
                  name != nullptr ? name : "?");
  lua_concat(L, 2);
  return lua_error(L);
}

// env.__index(env, key): the real global, or an error for one that does not exist.
int EnvIndex(lua_State* L) {
  size_t len = 0;
  const char* name = lua_type(L, 2) == LUA_TSTRING ? lua_tolstring(L, 2, &len) : nullptr;
  if (name != nullptr && std::strcmp(name, "_G") == 0) {
    lua_pushvalue(L, 1);  // _G is the read-only environment itself
    return 1;
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  if (!lua_isnil(L, -1)) return 1;
  return NoSuchGlobal(L, name);
}

int EnvNewIndex(lua_State* L) {
  luaL_where(L, 1);
  lua_pushstring(L, "Attempt to modify a readonly table");
  lua_concat(L, 2);
  return lua_error(L);
}

// Pushes {field=value}.
void PushTableWith(lua_State* L, const char* field, std::string_view value) {
  lua_newtable(L);
  lua_pushlstring(L, value.data(), value.size());
  lua_setfield(L, -2, field);
}

// Raises {err=message} as the redis.* functions do (no "user_script:N:" position; the
// script's line is added to the reply).
int RaiseError(lua_State* L, const char* message) {
  PushTableWith(L, "err", message);
  return lua_error(L);
}

// The error handler of a script's run: {err=message, code=has its own error code,
// line=the script's line}.
int ErrorHandler(lua_State* L) {
  int line = 0;
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar) != 0; level++) {
    lua_getinfo(L, "Sl", &ar);
    if (std::strcmp(ar.source, "@user_script") == 0 ||
        std::strcmp(ar.source, "@user_function") == 0) {
      line = ar.currentline;
      break;
    }
  }
  lua_newtable(L);
  bool code = false;
  bool counted = false;
  if (lua_type(L, 1) == LUA_TTABLE) {
    lua_pushstring(L, lua_reply::kErrorCountedField);
    lua_rawget(L, 1);
    counted = lua_toboolean(L, -1) != 0;
    lua_pop(L, 1);
    lua_pushstring(L, "err");
    lua_rawget(L, 1);
    int t = lua_type(L, -1);
    if (t == LUA_TSTRING || t == LUA_TNUMBER) {
      lua_tostring(L, -1);
      code = true;  // an {err=...} table's text is sent as it is
    } else {
      lua_pop(L, 1);
      lua_pushstring(L, "unknown error");
    }
  } else if (lua_type(L, 1) == LUA_TSTRING || lua_type(L, 1) == LUA_TNUMBER) {
    lua_pushvalue(L, 1);
    lua_tostring(L, -1);
  } else if (lua_isnil(L, 1)) {
    lua_pushstring(L, "nil");  // error()
  } else {
    lua_pushstring(L, "unknown error");
  }
  lua_setfield(L, -2, "err");
  lua_pushboolean(L, code ? 1 : 0);
  lua_setfield(L, -2, "code");
  lua_pushboolean(L, counted ? 1 : 0);
  lua_setfield(L, -2, lua_reply::kErrorCountedField);
  lua_pushinteger(L, line);
  lua_setfield(L, -2, "line");
  return 1;
}

// Past busy-reply-threshold: counted busy, so that other clients get -BUSY and new
// connections go to other workers (as Redis, logged once).
void NoteBusy(LuaVm::RunState* st, const ScriptCall* call) {
  Worker& w = st->ctx->worker;
  int64_t limit_ms = w.engine().config().Int("busy-reply-threshold");
  if (limit_ms <= 0 || WallClockUs() - st->start_us < limit_ms * 1000) return;
  st->busy = true;
  w.set_script_busy(true);
  w.engine().NoteBusyScript(st->function, 1);
  LogWarning(
      "Slow script detected: still in execution after %lld milliseconds. You can try "
      "killing the script using the %s command. Script name is: %s.",
      static_cast<long long>((WallClockUs() - st->start_us) / 1000),
      st->function ? "FUNCTION KILL" : "SCRIPT KILL",
      call != nullptr ? (st->function ? call->function.c_str() : call->sha.c_str()) : "?");
}

thread_local const ScriptCall* t_call = nullptr;

// Every kHookInstructions: a SCRIPT KILL, or the process stopping, ends the script.
// Once busy, each tick also serves this worker's clients (Worker::ServeWhileBusy): they
// get -BUSY, and SCRIPT KILL or SHUTDOWN NOSAVE sent to this worker take effect below,
// even when no other worker is free to take them.
void CountHook(lua_State* L, lua_Debug*) {
  LuaVm::RunState* st = t_run;
  if (st == nullptr) return;
  if (!st->busy) NoteBusy(st, t_call);
  if (Worker* w = Worker::Current(); st->busy && w != nullptr) w->ServeWhileBusy();
  if (st->ctx->worker.stopping()) {
    lua_sethook(L, CountHook, LUA_MASKLINE, 0);  // and on every line until it is out
    PushTableWith(L, "err", "ERR the server is shutting down: the script was stopped");
    lua_error(L);
  }
  if (st->vm->kill_requested_.load(std::memory_order_relaxed)) {
    lua_sethook(L, CountHook, LUA_MASKLINE, 0);
    PushTableWith(L, "err", "ERR Script killed by user with SCRIPT KILL...");
    lua_error(L);
  }
}

int RedisCall(lua_State* L) {
  int r = CallImpl(L, true);
  if (r < 0) return lua_error(L);
  return r;
}

int RedisPCall(lua_State* L) {
  int r = CallImpl(L, false);
  if (r < 0) return lua_error(L);
  return r;
}

// redis.error_reply(text): {err=text}, with "ERR " first when text has no error code
// (no space in it), as Redis 7; bad arguments return (not raise) the error.
int RedisErrorReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
    PushTableWith(L, "err", "ERR wrong number or type of arguments");
    return 1;
  }
  size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  std::string_view text(s, len);
  if (text.find(' ') == std::string_view::npos) {
    lua_newtable(L);
    lua_pushstring(L, "ERR ");
    lua_pushvalue(L, 1);
    lua_concat(L, 2);
    lua_setfield(L, -2, "err");
    return 1;
  }
  PushTableWith(L, "err", text);
  return 1;
}

int RedisStatusReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
    PushTableWith(L, "err", "ERR wrong number or type of arguments");
    return 1;
  }
  size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  PushTableWith(L, "ok", std::string_view(s, len));
  return 1;
}

int RedisSha1Hex(lua_State* L) {
  if (lua_gettop(L) != 1) return RaiseError(L, "ERR wrong number of arguments");
  size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  if (s == nullptr) return RaiseError(L, "ERR wrong number of arguments");
  char hex[41];
  std::string h = Sha1Hex(std::string_view(s, len));
  std::memcpy(hex, h.data(), 40);
  hex[40] = '\0';
  lua_pushstring(L, hex);
  return 1;
}

int RedisLog(lua_State* L) {
  int argc = lua_gettop(L);
  if (argc < 2) return RaiseError(L, "ERR redis.log() requires two arguments or more.");
  if (!lua_isnumber(L, 1)) {
    return RaiseError(L, "ERR First argument must be a number (log level).");
  }
  int level = static_cast<int>(lua_tonumber(L, 1));
  if (level < 0 || level > 3) return RaiseError(L, "ERR Invalid debug level.");
  // The message, built in Lua's own buffer (nothing here to unwind on an error).
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 2; i <= argc; i++) {
    size_t len = 0;
    const char* s = lua_tolstring(L, i, &len);
    if (s == nullptr) continue;
    if (i > 2) luaL_addchar(&b, ' ');
    luaL_addlstring(&b, s, len);
  }
  luaL_pushresult(&b);
  Log(static_cast<LogLevel>(level), "%s", lua_tostring(L, -1));
  return 0;
}

int RedisSetResp(lua_State* L) {
  if (lua_gettop(L) != 1) return RaiseError(L, "ERR redis.setresp() requires one argument.");
  int v = static_cast<int>(lua_tonumber(L, 1));
  if (v != 2 && v != 3) return RaiseError(L, "ERR RESP version must be 2 or 3.");
  if (t_run != nullptr) t_run->resp = v;
  return 0;
}

int RedisSetRepl(lua_State* L) {
  // "requires two arguments." is Redis's own text.
  if (lua_gettop(L) != 1) return RaiseError(L, "ERR redis.set_repl() requires two arguments.");
  int v = static_cast<int>(lua_tonumber(L, 1));
  if (v < 0 || v > 3) {
    return RaiseError(L,
                      "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or "
                      "REPL_NONE.");
  }
  return 0;  // accepted: there is no replication to steer yet
}

int RedisReplicateCommands(lua_State* L) {
  lua_pushinteger(L, 1);
  return 1;
}

int RedisBreakpoint(lua_State* L) {
  lua_pushboolean(L, 0);  // no debugger attached
  return 1;
}

int RedisDebug(lua_State*) { return 0; }

constexpr const char* kProtectedKey = "strata_protected";

// rawset and setmetatable, refusing the read-only tables (the scripts' environment and
// the library proxies); otherwise the originals (upvalue 1).
int GuardedTableFunction(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kProtectedKey);
  lua_pushvalue(L, 1);
  lua_rawget(L, -2);
  bool refused = lua_toboolean(L, -1) != 0;
  lua_pop(L, 2);
  if (refused) return RaiseError(L, "ERR Attempt to modify a readonly table");
  int n = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, n, LUA_MULTRET);
  return lua_gettop(L);
}

// pcall, as Redis 7 has it: an error redis.call raised ({err=...}) is caught as its text,
// a string; everything else as the original (upvalue 1) gives it.
int RedisStylePcall(lua_State* L) {
  int n = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, n, LUA_MULTRET);
  if (lua_gettop(L) >= 2 && !lua_toboolean(L, 1) && lua_type(L, 2) == LUA_TTABLE) {
    lua_pushstring(L, "err");
    lua_rawget(L, 2);
    if (lua_type(L, -1) == LUA_TSTRING) {
      lua_replace(L, 2);
    } else {
      lua_pop(L, 1);
    }
  }
  return lua_gettop(L);
}

void Protect(lua_State* L, int index) {
  index = index < 0 ? lua_gettop(L) + index + 1 : index;
  lua_getfield(L, LUA_REGISTRYINDEX, kProtectedKey);
  lua_pushvalue(L, index);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

void OpenLibrary(lua_State* L, lua_CFunction open, const char* name) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 0);
}

void SetFunction(lua_State* L, const char* name, lua_CFunction fn) {
  lua_pushcfunction(L, fn);
  lua_setfield(L, -2, name);
}

void SetNumber(lua_State* L, const char* name, int v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, name);
}

bool SplitShebang(std::string_view text, Shebang* out) {
  size_t eol = text.find('\n');
  if (text.substr(0, 2) != "#!" || eol == std::string_view::npos) return false;
  std::string_view line = text.substr(2, eol - 2);
  size_t sp = line.find(' ');
  out->engine = line.substr(0, sp);
  out->options = sp == std::string_view::npos ? std::string_view() : line.substr(sp);
  out->rest = text.substr(eol);
  return true;
}

std::string_view NextWord(std::string_view* words) {
  while (!words->empty() && (*words)[0] == ' ') words->remove_prefix(1);
  size_t sp = words->find(' ');
  std::string_view w = words->substr(0, sp);
  words->remove_prefix(sp == std::string_view::npos ? words->size() : sp);
  return w;
}

constexpr struct {
  const char* name;
  uint32_t bit;
} kFlagNames[] = {{"no-writes", kScriptNoWrites},
                  {"allow-oom", kScriptAllowOom},
                  {"allow-stale", kScriptAllowStale},
                  {"no-cluster", kScriptNoCluster},
                  {"allow-cross-slot-keys", kScriptAllowCrossSlot}};

uint32_t FlagBit(std::string_view name) {
  for (const auto& f : kFlagNames) {
    if (name == f.name) return f.bit;
  }
  return 0;
}

std::vector<std::string> FlagNames(uint32_t flags) {
  std::vector<std::string> out;
  for (const auto& f : kFlagNames) {
    if (flags & f.bit) out.emplace_back(f.name);
  }
  return out;
}

}  // namespace lua_env

using namespace lua_env;

LuaVm& LuaVm::ForThisThread() {
  thread_local std::unique_ptr<LuaVm> vm;
  if (vm == nullptr) vm = std::make_unique<LuaVm>();
  return *vm;
}

LuaVm::LuaVm() {
  L_ = lua_newstate(&LuaVm::Allocate, this);
  if (L_ == nullptr) std::abort();
  lua_atpanic(L_, [](lua_State* L) -> int {
    const char* msg = lua_tostring(L, -1);
    LogWarning("Lua: unprotected error: %s", msg != nullptr ? msg : "?");
    std::abort();
  });
  lua_State* L = L_;
  OpenLibrary(L, luaopen_base, "");
  OpenLibrary(L, luaopen_table, LUA_TABLIBNAME);
  OpenLibrary(L, luaopen_string, LUA_STRLIBNAME);
  OpenLibrary(L, luaopen_math, LUA_MATHLIBNAME);
  lua_pushcfunction(L, luaopen_cjson);
  lua_call(L, 0, 1);
  lua_setglobal(L, "cjson");
  lua_pushcfunction(L, luaopen_bit);
  lua_call(L, 0, 1);
  lua_setglobal(L, "bit");
  lua_pushcfunction(L, OpenStructLibrary);
  lua_call(L, 0, 1);
  lua_setglobal(L, "struct");
  lua_pushcfunction(L, OpenCmsgpackLibrary);
  lua_call(L, 0, 1);
  lua_setglobal(L, "cmsgpack");
  for (const char* name : {"loadfile", "dofile", "print", "setfenv", "getfenv", "newproxy"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  lua_newtable(L);
  SetFunction(L, "call", RedisCall);
  SetFunction(L, "pcall", RedisPCall);
  SetFunction(L, "error_reply", RedisErrorReply);
  SetFunction(L, "status_reply", RedisStatusReply);
  SetFunction(L, "sha1hex", RedisSha1Hex);
  SetFunction(L, "log", RedisLog);
  SetFunction(L, "setresp", RedisSetResp);
  SetFunction(L, "set_repl", RedisSetRepl);
  SetFunction(L, "replicate_commands", RedisReplicateCommands);
  SetFunction(L, "breakpoint", RedisBreakpoint);
  SetFunction(L, "debug", RedisDebug);
  SetNumber(L, "LOG_DEBUG", 0);
  SetNumber(L, "LOG_VERBOSE", 1);
  SetNumber(L, "LOG_NOTICE", 2);
  SetNumber(L, "LOG_WARNING", 3);
  SetNumber(L, "REPL_NONE", 0);
  SetNumber(L, "REPL_AOF", 1);
  SetNumber(L, "REPL_SLAVE", 2);
  SetNumber(L, "REPL_REPLICA", 2);
  SetNumber(L, "REPL_ALL", 3);
  lua_setglobal(L, "redis");
  InstallLibraryApi();
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kProtectedKey);
  lua_rawgeti(L, LUA_REGISTRYINDEX, redis_proxy_ref_);
  Protect(L, -1);
  lua_pop(L, 1);
  for (const char* name : {"rawset", "setmetatable"}) {
    lua_getglobal(L, name);
    lua_pushcclosure(L, GuardedTableFunction, 1);
    lua_setglobal(L, name);
  }
  lua_getglobal(L, "pcall");
  lua_pushcclosure(L, RedisStylePcall, 1);
  lua_setglobal(L, "pcall");
  // Library tables are read-only too: each global becomes an empty proxy that reads from
  // the real table and refuses writes.
  for (const char* name :
       {"redis", "string", "table", "math", "cjson", "bit", "struct", "cmsgpack", "coroutine"}) {
    lua_getglobal(L, name);
    if (!lua_istable(L, -1)) {
      lua_pop(L, 1);
      continue;
    }
    lua_newtable(L);       // proxy
    lua_newtable(L);       // its metatable
    lua_pushvalue(L, -3);  // the real table
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, EnvNewIndex);
    lua_setfield(L, -2, "__newindex");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    Protect(L, -1);
    lua_setglobal(L, name);
    lua_pop(L, 1);
  }
  // The scripts' environment: empty, reads fall through to the globals, writes fail.
  lua_newtable(L);
  lua_newtable(L);
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_pushcclosure(L, EnvIndex, 1);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, EnvNewIndex);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");  // getmetatable(_G) gives nothing to change
  lua_setmetatable(L, -2);
  Protect(L, -1);
  env_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kFunctionsKey);
  generation_ = ScriptStore::Get().generation();
  PublishMemory();
  std::lock_guard<std::mutex> l(g_vms_mu);
  g_vms.push_back(this);
}

LuaVm::~LuaVm() {
  {
    std::lock_guard<std::mutex> l(g_vms_mu);
    g_vms.erase(std::remove(g_vms.begin(), g_vms.end(), this), g_vms.end());
  }
  g_lua_bytes.fetch_sub(published_bytes_, std::memory_order_relaxed);
  lua_close(L_);
}

void* LuaVm::Allocate(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* vm = static_cast<LuaVm*>(ud);
  if (nsize == 0) {
    std::free(ptr);
    vm->heap_bytes_ -= osize;
    return nullptr;
  }
  // Lua 5.1 never lets a shrink fail; only growth is bounded.
  if (nsize > osize && vm->heap_limit_ != 0 &&
      vm->heap_bytes_ + (nsize - osize) > vm->heap_limit_) {
    return nullptr;
  }
  void* p = std::realloc(ptr, nsize);
  if (p == nullptr) return nullptr;
  vm->heap_bytes_ += nsize;
  vm->heap_bytes_ -= osize;
  return p;
}

size_t LuaVm::HeapLimit() {
  Worker* w = Worker::Current();
  if (w == nullptr) return 0;
  int64_t maxmemory = w->engine().config().maxmemory().load(std::memory_order_relaxed);
  if (maxmemory <= 0) return 0;
  return std::max(static_cast<size_t>(maxmemory), kMinScriptHeapBytes);
}

void LuaVm::ServeHeld(Worker& w, bool across) {
  ReadyHolds& h = *own_holds_;
  w.ServeHeldReady(h);
  if (!across) return;
  // The script's record went out on this worker (EndGroup): a hop made now is numbered
  // after it. The script still holds these shards whole, so the hop may wait on them.
  for (uint32_t s = 0; s < h.per_shard.size(); s++) {
    if (s == w.index() || h.per_shard[s].empty()) continue;
    if (!SyncHop(s, [&h](Worker& x) { x.ServeHeldReady(h); })) h.per_shard[s].clear();
  }
}

void LuaVm::PublishMemory() {
  size_t now = memory_bytes();
  g_lua_bytes.fetch_add(now - published_bytes_, std::memory_order_relaxed);  // wraps right
  published_bytes_ = now;
}

size_t LuaVm::AllMemoryBytes() { return g_lua_bytes.load(std::memory_order_relaxed); }

size_t LuaVm::memory_bytes() const {
  return static_cast<size_t>(lua_gc(L_, LUA_GCCOUNT, 0)) * 1024 +
         static_cast<size_t>(lua_gc(L_, LUA_GCCOUNTB, 0));
}

bool LuaVm::ParseShebang(std::string_view body, uint32_t* flags, std::string* code,
                         std::string* error) {
  *flags = 0;
  if (body.substr(0, 2) != "#!") {
    code->assign(body);
    return true;
  }
  Shebang sb;
  if (!SplitShebang(body, &sb)) {
    *error = "ERR Invalid script shebang";
    return false;
  }
  if (sb.engine != "lua") {
    *error = "ERR Unexpected engine in script shebang: #!" + std::string(sb.engine);
    return false;
  }
  *flags |= kScriptHasShebang;
  std::string_view opts = sb.options;
  for (std::string_view opt = NextWord(&opts); !opt.empty(); opt = NextWord(&opts)) {
    if (opt.substr(0, 6) != "flags=") {
      *error = "ERR Unknown lua shebang option: " + std::string(opt);
      return false;
    }
    std::string_view list = opt.substr(6);
    while (!list.empty()) {
      size_t comma = list.find(',');
      std::string_view f = list.substr(0, comma);
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      if (f.empty()) continue;
      uint32_t bit = FlagBit(f);
      if (bit == 0) {
        *error = "ERR Unexpected flag in script shebang: " + std::string(f);
        return false;
      }
      *flags |= bit;
    }
  }
  code->assign(sb.rest);  // the shebang line emptied: line numbers stay
  return true;
}

bool LuaVm::Compile(const std::string& sha, std::string_view body, std::string* error) {
  uint32_t flags = 0;
  std::string code;
  if (!ParseShebang(body, &flags, &code, error)) return false;
  lua_State* L = L_;
  if (luaL_loadbuffer(L, code.data(), code.size(), "@user_script") != 0) {
    *error = "ERR Error compiling script (new function): ";
    const char* msg = lua_tostring(L, -1);
    error->append(msg != nullptr ? msg : "?");
    lua_pop(L, 1);
    return false;
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, env_ref_);
  lua_setfenv(L, -2);
  lua_getfield(L, LUA_REGISTRYINDEX, kFunctionsKey);
  lua_pushlstring(L, sha.data(), sha.size());
  lua_pushvalue(L, -3);
  lua_rawset(L, -3);
  lua_pop(L, 2);
  compiled_[sha] = flags;
  return true;
}

void LuaVm::DropCompiled() {
  lua_newtable(L_);
  lua_setfield(L_, LUA_REGISTRYINDEX, kFunctionsKey);
  compiled_.clear();
  lua_gc(L_, LUA_GCCOLLECT, 0);
}

namespace {

void SetArgTable(lua_State* L, const char* name, CmdArgs values) {
  lua_createtable(L, static_cast<int>(values.size()), 0);
  for (size_t i = 0; i < values.size(); i++) {
    lua_pushlstring(L, values[i].data(), values[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
  lua_setglobal(L, name);
}

}  // namespace

bool LuaVm::Prepare(const std::string& sha, std::string_view body, std::string* error) {
  uint64_t gen = ScriptStore::Get().generation();
  if (gen != generation_) {
    DropCompiled();
    generation_ = gen;
  }
  if (compiled_.count(sha) != 0) return true;
  if (!Compile(sha, body, error)) return false;
  ScriptStore::Get().Add(sha, body);
  return true;
}

LuaVm::RunResult LuaVm::Run(const ScriptCall& call, ShardCtx& ctx, ReplyBuilder& rb,
                            const ScriptScope* across) {
  if (!call.function.empty()) return RunFunction(call, ctx, rb, across);
  uint64_t gen = ScriptStore::Get().generation();
  if (gen != generation_) {
    DropCompiled();
    generation_ = gen;
  }
  auto it = compiled_.find(call.sha);
  if (it == compiled_.end()) {
    std::optional<std::string> stored;
    std::string_view body = call.body;
    if (call.by_sha) {
      stored = ScriptStore::Get().Find(call.sha);
      if (!stored) {
        rb.Error("NOSCRIPT No matching script. Please use EVAL.");
        return RunResult::kDone;
      }
      body = *stored;
    }
    std::string error;
    if (!Prepare(call.sha, body, &error)) {
      rb.Error(error);
      return RunResult::kDone;
    }
    it = compiled_.find(call.sha);
  }
  if (call.read_only && (it->second & kScriptHasShebang) && !(it->second & kScriptNoWrites)) {
    rb.Error("ERR Can not execute a script with write flag using *_ro command.");
    return RunResult::kDone;
  }
  if ((it->second & kScriptHasShebang) && !(it->second & kScriptNoWrites) && !ctx.from_master) {
    if (const char* refused = ctx.worker.engine().replication().ScriptWriteRefusal()) {
      rb.Error(refused);
      return RunResult::kDone;
    }
  }
  lua_State* L = L_;
  SetArgTable(L, "KEYS", call.keys);
  SetArgTable(L, "ARGV", call.argv);
  lua_pushcfunction(L, ErrorHandler);
  lua_getfield(L, LUA_REGISTRYINDEX, kFunctionsKey);
  lua_pushlstring(L, call.sha.data(), call.sha.size());
  lua_rawget(L, -2);
  lua_remove(L, -2);
  return Execute(call, ctx, rb, across, it->second, 0);
}

// Runs what is on the stack (the error handler, the function, nargs arguments) as the
// script `call`, its reply or error into rb.
LuaVm::RunResult LuaVm::Execute(const ScriptCall& call, ShardCtx& ctx, ReplyBuilder& rb,
                                const ScriptScope* across, uint32_t flags, int nargs) {
  lua_State* L = L_;
  RunState st{};
  st.ctx = &ctx;
  st.db = ctx.db;
  st.read_only = call.read_only || (flags & kScriptNoWrites) != 0;
  st.flags = flags;
  st.vm = this;
  st.sha = &call.sha;
  st.across = across;
  st.function = !call.function.empty();
  st.start_us = WallClockUs();
  st.user = call.user.get();
  if (across != nullptr) {
    uint32_t n = ctx.worker.engine().shard_count();
    st.declared.assign(n, 0);
    for (std::string_view k : call.keys) st.declared[ShardOfKey(k, n)] = 1;
  }
  t_run = &st;
  t_call = &call;
  wrote_.store(false, std::memory_order_relaxed);
  kill_requested_.store(false, std::memory_order_relaxed);
  running_since_us_.store(st.start_us, std::memory_order_release);
  lua_sethook(L, CountHook, LUA_MASKCOUNT, kHookInstructions);
  heap_limit_ = HeapLimit();
  // The script's effects on this shard reach replicas as one record, a MULTI/EXEC block
  // when it wrote more than once; replicas never run the script (repl_feed.h).
  bool group = ctx.worker.repl_on();
  if (group) ctx.worker.repl_feed().BeginGroup();
  // Keys its calls give elements to are served once it is done, as in Redis
  // (engine/blocking.h): by the enclosing transaction when there is one.
  bool own_holds = false;
  if (t_ready_holds != nullptr) {
    st.holds = t_ready_holds;  // a step of a transaction (this script is on one shard)
  } else if (across != nullptr && across->holds != nullptr) {
    st.holds_shared = across->holds;
    st.holds = st.holds_shared.get();
  } else {
    if (own_holds_ == nullptr) {
      own_holds_ = std::make_shared<ReadyHolds>(ctx.worker.engine().shard_count());
    }
    st.holds_shared = own_holds_;
    st.holds = own_holds_.get();
    own_holds = true;
  }
  int rc;
  {
    HoldReadyScope hold(st.holds);
    rc = lua_pcall(L, nargs, 1, -(nargs + 2));
  }
  if (group) ctx.worker.repl_feed().EndGroup();
  if (own_holds) ServeHeld(ctx.worker, across != nullptr);
  heap_limit_ = 0;
  lua_sethook(L, nullptr, 0, 0);
  if (rc == LUA_ERRMEM) {
    LogWarning("A script reached the interpreter's memory bound (maxmemory): it was stopped");
    lua_gc(L, LUA_GCCOLLECT, 0);
  }
  running_since_us_.store(0, std::memory_order_release);
  t_run = nullptr;
  t_call = nullptr;
  if (st.busy) {
    ctx.worker.set_script_busy(false);
    ctx.worker.engine().NoteBusyScript(st.function, -1);
  }
  if (st.needs_every_shard) {
    lua_pop(L, 2);
    PublishMemory();
    return RunResult::kNeedsEveryShard;
  }
  if (rc != 0 && ctx.worker.stopping()) {
    // Stopped by SHUTDOWN or SIGTERM: the process is going away and the client is
    // disconnected without a reply, as Redis does.
    lua_pop(L, 2);
    return RunResult::kDone;
  }
  if (across != nullptr) {
    // What this run showed of the script's reach: wide when it touched keys off its
    // KEYS' shards (also set at the call that reached past the held shards); narrow
    // after a clean run that did not.
    if (st.reached_beyond) {
      ScriptStore::Get().SetRoute(call.sha, ScriptRoute::kWide);
    } else if (rc == 0) {
      ScriptStore::Get().SetRoute(call.sha, ScriptRoute::kNarrow);
    }
  }
  if (rc == 0) {
    lua_reply::Write(L, -1, st.resp, rb);
  } else if (rc == LUA_ERRMEM) {
    rb.Error(
        "ERR not enough memory: a script's interpreter may not grow past maxmemory, "
        "script: " +
        (call.function.empty() ? call.sha : call.function));
  } else if (lua_type(L, -1) == LUA_TTABLE) {
    lua_getfield(L, -1, "err");
    const char* err = lua_tostring(L, -1);
    lua_getfield(L, -2, "code");
    bool code = lua_toboolean(L, -1) != 0;
    lua_getfield(L, -3, "line");
    int line = static_cast<int>(lua_tointeger(L, -1));
    lua_getfield(L, -4, lua_reply::kErrorCountedField);
    bool counted = lua_toboolean(L, -1) != 0;
    lua_pop(L, 1);
    std::string msg = code ? "" : "ERR ";
    msg.append(err != nullptr ? err : "unknown error");
    if (call.function.empty()) {
      msg += " script: " + call.sha + ", on @user_script:" + std::to_string(line) + ".";
    } else {
      msg += " script: " + call.function + ", on @user_function:" + std::to_string(line) + ".";
    }
    lua_pop(L, 3);
    if (counted) {
      rb.ErrorUncounted(msg);
    } else {
      rb.Error(msg);
    }
  } else {
    const char* err = lua_tostring(L, -1);
    rb.Error(std::string("ERR ") + (err != nullptr ? err : "unknown error"));
  }
  lua_pop(L, 2);  // the result (or error) and the handler
  PublishMemory();
  return RunResult::kDone;
}

ScriptRoute LuaVm::RouteOf(const std::string& sha) {
  ScriptStore& store = ScriptStore::Get();
  uint64_t epoch = store.route_epoch();
  if (epoch != route_epoch_) {
    routes_.clear();
    route_epoch_ = epoch;
  }
  auto it = routes_.find(sha);
  if (it != routes_.end()) return it->second;
  ScriptRoute r = store.Route(sha);
  // Unknown is asked again next time (its first run across shards will teach it); the
  // cache is bounded by the scripts known, as the store is.
  if (r != ScriptRoute::kUnknown) routes_.emplace(sha, r);
  return r;
}

}  // namespace strata
