// The pieces of the scripts' Lua environment that both lua_vm.cc (EVAL) and
// lua_library.cc (FUNCTION, FCALL) use: Redis's error helpers, the read-only guards,
// the error handler of a run, table setters, redis.log/setresp, and the shebang line
// split. Internal to server/scripting/.
// Thread-safety: called on the thread of the interpreter they are given.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

extern "C" {
#include <lua.h>
}

namespace strata {
class LuaVm;
}

namespace strata::lua_env {

// Every interpreter of the process, for SCRIPT KILL and FUNCTION STATS (lua_running.cc).
extern std::mutex g_vms_mu;
extern std::vector<LuaVm*> g_vms;

// Raises Redis's error for reading a global that does not exist.
int NoSuchGlobal(lua_State* L, const char* name);
// __newindex of every read-only table: "Attempt to modify a readonly table".
int EnvNewIndex(lua_State* L);
// Pushes {field=value}.
void PushTableWith(lua_State* L, const char* field, std::string_view value);
// Raises {err=message}, as the redis.* functions do.
int RaiseError(lua_State* L, const char* message);
// The message handler of a run: {err=, code=, line=} (line in @user_script or
// @user_function).
int ErrorHandler(lua_State* L);
// Marks the table at index as one rawset/setmetatable refuse.
void Protect(lua_State* L, int index);
void SetFunction(lua_State* L, const char* name, lua_CFunction fn);
void SetNumber(lua_State* L, const char* name, int v);
int RedisLog(lua_State* L);
int RedisSetResp(lua_State* L);

// A "#!" first line, split: the engine name (up to the first space), the rest of the line
// (the options), and the text from the newline on (so line numbers stay). False when the
// text has no newline.
struct Shebang {
  std::string_view engine;
  std::string_view options;
  std::string_view rest;
};
bool SplitShebang(std::string_view text, Shebang* out);
// The next space-separated word of *words, removed from it ("" when none is left).
std::string_view NextWord(std::string_view* words);
// The ScriptFlag bit of a flag's name ("no-writes"...), 0 when unknown; and the names of
// a set of bits, in Redis's order.
uint32_t FlagBit(std::string_view name);
std::vector<std::string> FlagNames(uint32_t flags);

}  // namespace strata::lua_env
