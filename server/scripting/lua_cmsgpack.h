// The `cmsgpack` library of Redis's scripting environment (lua_cmsgpack.cc has the
// encoding). Thread-safety: the calling thread's own lua_State.
#pragma once

struct lua_State;

namespace strata {

// Pushes the library's table (pack, unpack, unpack_one, unpack_limit); a lua_CFunction.
int OpenCmsgpackLibrary(lua_State* L);

}  // namespace strata
