// Function libraries in the interpreter (FUNCTION LOAD, FCALL): the load-time `redis`
// API and redis.register_function, each library's environment, inspecting a library's
// code, loading every library of the FunctionStore into this interpreter, and running a
// function. The scripts' environment itself is lua_vm.cc's; what both use is lua_env.h.
//
// A library's code runs in an environment of its own: the globals read-only, no KEYS or
// ARGV, and a `redis` that offers register_function and log while the code loads (any
// other field is an error, as in Redis) and the scripts' API once its functions run.
// Loading is bounded by kLibraryLoadTimeoutUs.
// Thread-safety: the interpreter's own thread.
#include <cctype>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include "core/string_util.h"
#include "server/base/log.h"
#include "server/engine/engine.h"
#include "server/engine/function_store.h"
#include "server/engine/worker.h"
#include "server/scripting/lua_env.h"
#include "server/scripting/lua_vm.h"

namespace strata {
namespace {

using namespace lua_env;

constexpr const char* kFcallsKey = "strata_fcalls";         // name -> callback
constexpr const char* kRedisLoadKey = "strata_redis_load";  // the load-time API

// While a library loads: what redis.register_function collects.
struct LibraryLoad {
  std::vector<FunctionInfo>* functions;
  int callbacks_ref;  // a table name -> callback
  int64_t deadline_us;
};
thread_local LibraryLoad* t_load = nullptr;

bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

constexpr const char* kBadName =
    "ERR Library names can only contain letters, numbers, or underscores(_) and must be at "
    "least one character long";

// redis.register_function(name, callback) or redis.register_function{function_name=,
// callback=, flags=, description=}, with Redis 7.0's checks and texts.
int RegisterFunction(lua_State* L) {
  LibraryLoad* ld = t_load;
  if (ld == nullptr)
    return RaiseError(L, "ERR redis.register_function can only be called on FUNCTION LOAD command");
  int argc = lua_gettop(L);
  if (argc < 1 || argc > 2)
    return RaiseError(L, "ERR wrong number of arguments to redis.register_function");
  FunctionInfo info;
  int callback = 0;  // stack index
  if (argc == 1) {
    if (!lua_istable(L, 1)) {
      return RaiseError(L,
                        "ERR calling redis.register_function with a single argument is only "
                        "applicable to Lua table (representing named arguments).");
    }
    bool have_name = false;
    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {
      // key at -2, value at -1
      if (lua_type(L, -2) != LUA_TSTRING) {
        return RaiseError(
            L, "ERR named argument key given to redis.register_function is not a string");
      }
      std::string key = lua_tostring(L, -2);
      if (key == "function_name") {
        if (!lua_isstring(L, -1)) {
          return RaiseError(
              L, "ERR function_name argument given to redis.register_function must be a string");
        }
        size_t len = 0;
        const char* v = lua_tolstring(L, -1, &len);
        info.name.assign(v, len);
        have_name = true;
      } else if (key == "description") {
        if (!lua_isstring(L, -1)) {
          return RaiseError(
              L, "ERR description argument given to redis.register_function must be a string");
        }
        size_t len = 0;
        const char* v = lua_tolstring(L, -1, &len);
        info.description = std::string(v, len);
      } else if (key == "callback") {
        if (!lua_isfunction(L, -1)) {
          return RaiseError(
              L, "ERR callback argument given to redis.register_function must be a function");
        }
      } else if (key == "flags") {
        if (!lua_istable(L, -1)) {
          return RaiseError(L,
                            "ERR flags argument to redis.register_function must be a table "
                            "representing function flags");
        }
        int n = static_cast<int>(lua_objlen(L, -1));
        for (int i = 1; i <= n; i++) {
          lua_rawgeti(L, -1, i);
          uint32_t bit = lua_type(L, -1) == LUA_TSTRING ? FlagBit(lua_tostring(L, -1)) : 0;
          lua_pop(L, 1);
          if (bit == 0) return RaiseError(L, "ERR unknown flag given");
          info.flags |= bit;
        }
      } else {
        return RaiseError(L, "ERR unknown argument given to redis.register_function");
      }
      lua_pop(L, 1);
    }
    if (!have_name)
      return RaiseError(L, "ERR redis.register_function must get a function name argument");
    lua_getfield(L, 1, "callback");
    if (!lua_isfunction(L, -1))
      return RaiseError(L, "ERR redis.register_function must get a callback argument");
    callback = lua_gettop(L);
  } else {
    if (lua_type(L, 1) != LUA_TSTRING) {
      return RaiseError(L, "ERR first argument to redis.register_function must be a string");
    }
    if (!lua_isfunction(L, 2)) {
      return RaiseError(L, "ERR second argument to redis.register_function must be a function");
    }
    size_t len = 0;
    const char* v = lua_tolstring(L, 1, &len);
    info.name.assign(v, len);
    callback = 2;
  }
  if (!ValidName(info.name)) return RaiseError(L, kBadName);
  for (const FunctionInfo& f : *ld->functions) {
    if (f.name == info.name) return RaiseError(L, "ERR Function already exists in the library");
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, ld->callbacks_ref);
  lua_pushlstring(L, info.name.data(), info.name.size());
  lua_pushvalue(L, callback);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  ld->functions->push_back(std::move(info));
  return 0;
}

// The `redis` a library's code sees: while it loads, the load API (register_function,
// log, the constants; anything else is an error, as in Redis); when its functions run,
// the scripts' API (upvalue 1).
int RedisProxyIndex(lua_State* L) {
  if (t_load != nullptr) {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(2));
    if (!lua_isnil(L, -1)) return 1;
    return NoSuchGlobal(L, lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : nullptr);
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  return 1;
}

// A library's environment: the globals, read-only, with its own `redis` (upvalue 2) and
// no KEYS or ARGV (functions get theirs as arguments).
int LibEnvIndex(lua_State* L) {
  const char* name = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : nullptr;
  if (name != nullptr && std::strcmp(name, "redis") == 0) {
    lua_pushvalue(L, lua_upvalueindex(2));
    return 1;
  }
  if (name != nullptr && std::strcmp(name, "_G") == 0) {
    lua_pushvalue(L, 1);
    return 1;
  }
  if (name == nullptr || (std::strcmp(name, "KEYS") != 0 && std::strcmp(name, "ARGV") != 0)) {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
    if (!lua_isnil(L, -1)) return 1;
  }
  return NoSuchGlobal(L, name);
}

// A library that loads for too long is stopped, as Redis does.
void LoadHook(lua_State* L, lua_Debug*) {
  if (t_load != nullptr && WallClockUs() > t_load->deadline_us) {
    lua_sethook(L, LoadHook, LUA_MASKLINE, 0);
    PushTableWith(L, "err", "ERR FUNCTION LOAD timeout");
    lua_error(L);
  }
}

// "#!lua name=<lib>": the library's name, and the code with that line emptied.
bool ParseLibraryShebang(std::string_view code, std::string* name, std::string* body,
                         std::string* error) {
  if (code.substr(0, 2) != "#!") {
    *error = "ERR Missing library metadata";
    return false;
  }
  Shebang sb;
  if (!SplitShebang(code, &sb)) {
    *error = "ERR Invalid library metadata";
    return false;
  }
  bool have_name = false;
  std::string_view params = sb.options;
  for (std::string_view p = NextWord(&params); !p.empty(); p = NextWord(&params)) {
    if (p.substr(0, 5) != "name=") {
      *error = "ERR Invalid metadata value given: " + std::string(p);
      return false;
    }
    name->assign(p.substr(5));
    have_name = true;
  }
  if (!have_name) {
    *error = "ERR Library name was not given";
    return false;
  }
  if (!EqualsIgnoreCase(sb.engine, "lua")) {
    *error = "ERR Engine '" + std::string(sb.engine) + "' not found";
    return false;
  }
  if (!ValidName(*name)) {
    *error = kBadName;
    return false;
  }
  body->assign(sb.rest);
  return true;
}

}  // namespace

void LuaVm::InstallLibraryApi() {
  lua_State* L = L_;
  lua_newtable(L);
  SetFunction(L, "register_function", RegisterFunction);
  SetFunction(L, "log", RedisLog);
  SetFunction(L, "setresp", RedisSetResp);
  SetNumber(L, "LOG_DEBUG", 0);
  SetNumber(L, "LOG_VERBOSE", 1);
  SetNumber(L, "LOG_NOTICE", 2);
  SetNumber(L, "LOG_WARNING", 3);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, kRedisLoadKey);  // the load API stays on the stack
  lua_newtable(L);                                    // the proxy
  lua_newtable(L);                                    // its metatable
  lua_getglobal(L, "redis");                          // the scripts' API (the real table)
  lua_pushvalue(L, -4);                               // the load API
  lua_pushcclosure(L, RedisProxyIndex, 2);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, EnvNewIndex);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  redis_proxy_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);  // the proxy stays on the stack
  lua_newtable(L);                                    // libraries' environment metatable
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_pushvalue(L, -3);  // the proxy
  lua_pushcclosure(L, LibEnvIndex, 2);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, EnvNewIndex);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lib_env_meta_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pop(L, 2);  // the proxy and the load API
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kFcallsKey);
}

bool LuaVm::LoadLibrary(std::string_view code, bool keep, FunctionLibrary* out,
                        std::string* error) {
  std::string name, body;
  if (!ParseLibraryShebang(code, &name, &body, error)) return false;
  lua_State* L = L_;
  if (luaL_loadbuffer(L, body.data(), body.size(), "@user_function") != 0) {
    const char* msg = lua_tostring(L, -1);
    *error = std::string("ERR Error compiling function: ") + (msg != nullptr ? msg : "?");
    lua_pop(L, 1);
    return false;
  }
  lua_newtable(L);  // the library's environment
  lua_rawgeti(L, LUA_REGISTRYINDEX, lib_env_meta_ref_);
  lua_setmetatable(L, -2);
  Protect(L, -1);
  lua_setfenv(L, -2);
  std::vector<FunctionInfo> functions;
  lua_newtable(L);
  LibraryLoad ld{&functions, luaL_ref(L, LUA_REGISTRYINDEX), WallClockUs() + kLibraryLoadTimeoutUs};
  t_load = &ld;
  lua_sethook(L, LoadHook, LUA_MASKCOUNT, kHookInstructions);
  heap_limit_ = HeapLimit();
  int rc = lua_pcall(L, 0, 0, 0);
  heap_limit_ = 0;
  lua_sethook(L, nullptr, 0, 0);
  t_load = nullptr;
  bool ok = rc == 0;
  if (!ok) {
    std::string msg;
    if (lua_type(L, -1) == LUA_TTABLE) {
      lua_getfield(L, -1, "err");
      const char* e = lua_tostring(L, -1);
      msg = e != nullptr ? e : "unknown error";
      lua_pop(L, 1);
    } else {
      const char* e = lua_tostring(L, -1);
      msg = std::string("ERR ") + (e != nullptr ? e : "unknown error");
    }
    lua_pop(L, 1);
    *error = "ERR Error registering functions: " + msg;
  } else if (functions.empty()) {
    ok = false;
    *error = "ERR No functions registered";
  }
  if (ok && keep) {
    lua_getfield(L, LUA_REGISTRYINDEX, kFcallsKey);
    lua_rawgeti(L, LUA_REGISTRYINDEX, ld.callbacks_ref);
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, -5);  // fcalls[name] = callback
    }
    lua_pop(L, 2);
    for (const FunctionInfo& f : functions) function_flags_[f.name] = f.flags;
  }
  luaL_unref(L, LUA_REGISTRYINDEX, ld.callbacks_ref);
  if (!ok) return false;
  out->name = std::move(name);
  out->code.assign(code);
  out->functions = std::move(functions);
  return true;
}

void LuaVm::EnsureLibraries() {
  FunctionStore& store = FunctionStore::Get();
  uint64_t gen = store.generation();
  if (gen == lib_generation_) return;
  lua_newtable(L_);
  lua_setfield(L_, LUA_REGISTRYINDEX, kFcallsKey);
  function_flags_.clear();
  for (const auto& [name, lib] : store.All()) {
    FunctionLibrary loaded;
    std::string error;
    if (!LoadLibrary(lib.code, true, &loaded, &error)) {
      LogWarning("function library '%s' did not load in a worker's interpreter: %s", name.c_str(),
                 error.c_str());
    }
  }
  lib_generation_ = gen;
  lua_gc(L_, LUA_GCCOLLECT, 0);
  PublishMemory();
}

bool LuaVm::InspectLibrary(std::string_view code, FunctionLibrary* out, std::string* error) {
  LuaVm& vm = ForThisThread();
  bool ok = vm.LoadLibrary(code, false, out, error);
  lua_gc(vm.L_, LUA_GCCOLLECT, 0);
  vm.PublishMemory();
  return ok;
}

std::vector<std::string> LuaVm::FlagNames(uint32_t flags) { return lua_env::FlagNames(flags); }

LuaVm::RunResult LuaVm::RunFunction(const ScriptCall& call, ShardCtx& ctx, ReplyBuilder& rb,
                                    const ScriptScope* across) {
  EnsureLibraries();
  auto it = function_flags_.find(call.function);
  if (it == function_flags_.end()) {
    rb.Error("ERR Function not found");
    return RunResult::kDone;
  }
  if (call.read_only && !(it->second & kScriptNoWrites)) {
    rb.Error("ERR Can not execute a script with write flag using *_ro command.");
    return RunResult::kDone;
  }
  if (!(it->second & kScriptNoWrites) && !ctx.from_master) {
    if (const char* refused = ctx.worker.engine().replication().ScriptWriteRefusal()) {
      rb.Error(refused);
      return RunResult::kDone;
    }
  }
  lua_State* L = L_;
  lua_pushcfunction(L, ErrorHandler);
  lua_getfield(L, LUA_REGISTRYINDEX, kFcallsKey);
  lua_pushlstring(L, call.function.data(), call.function.size());
  lua_rawget(L, -2);
  lua_remove(L, -2);
  for (CmdArgs values : {call.keys, call.argv}) {
    lua_createtable(L, static_cast<int>(values.size()), 0);
    for (size_t i = 0; i < values.size(); i++) {
      lua_pushlstring(L, values[i].data(), values[i].size());
      lua_rawseti(L, -2, static_cast<int>(i + 1));
    }
  }
  {
    std::lock_guard<std::mutex> l(running_mu_);
    running_name_ = call.function;
    running_command_.clear();
    for (std::string_view a : call.command) running_command_.emplace_back(a);
  }
  running_function_.store(true, std::memory_order_release);
  RunResult r = Execute(call, ctx, rb, across, it->second | kScriptHasShebang, 2);
  running_function_.store(false, std::memory_order_release);
  return r;
}

}  // namespace strata
