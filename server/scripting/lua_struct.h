// The `struct` library of Redis's scripting environment (lua_struct.cc has the formats).
// Thread-safety: the calling thread's own lua_State.
#pragma once

struct lua_State;

namespace strata {

// Pushes the library's table (pack, unpack, size); a lua_CFunction.
int OpenStructLibrary(lua_State* L);

}  // namespace strata
