// The `cmsgpack` library Redis gives scripts: MessagePack encoding of Lua values.
//
//   cmsgpack.pack(v1, v2, ...)   the encodings of the values, one after the other
//   cmsgpack.unpack(s)           every value encoded in s, as several results
//   cmsgpack.unpack_one(s [, offset])       the next value, and the offset after it
//                                           (-1 at the end)
//   cmsgpack.unpack_limit(s, n [, offset])  up to n values, then the offset
// Encoding, as Redis's: nil, booleans; a number with no fraction as the smallest
// integer form (fixint, int8/16/32/64, uint8/16/32/64), else as float 32 when it is
// exactly one, else float 64; strings as str (fixstr, str8/16/32); a table that is a
// sequence 1..n as an array, any other as a map; tables nested deeper than kMaxNesting
// as nil. Decoding also takes bin (as strings) and ext is refused.
// Errors are Lua errors ("Missing bytes in input.", "Bad data format in input.").
// Thread-safety: the calling thread's own lua_State.
#include "server/scripting/lua_cmsgpack.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

namespace strata {
namespace {

constexpr int kMaxNesting = 16;

void AddChar(std::string* b, char c) { b->push_back(c); }

void PutBytes(std::string* b, uint8_t tag, uint64_t v, int n) {
  AddChar(b, static_cast<char>(tag));
  for (int i = n - 1; i >= 0; i--) AddChar(b, static_cast<char>((v >> (8 * i)) & 0xff));
}

void EncodeInteger(std::string* b, int64_t v) {
  if (v >= 0) {
    uint64_t u = static_cast<uint64_t>(v);
    if (u <= 0x7f) {
      AddChar(b, static_cast<char>(u));
    } else if (u <= 0xff) {
      PutBytes(b, 0xcc, u, 1);
    } else if (u <= 0xffff) {
      PutBytes(b, 0xcd, u, 2);
    } else if (u <= 0xffffffffull) {
      PutBytes(b, 0xce, u, 4);
    } else {
      PutBytes(b, 0xcf, u, 8);
    }
    return;
  }
  uint64_t u = static_cast<uint64_t>(v);
  if (v >= -32) {
    AddChar(b, static_cast<char>(u & 0xff));
  } else if (v >= -128) {
    PutBytes(b, 0xd0, u, 1);
  } else if (v >= -32768) {
    PutBytes(b, 0xd1, u, 2);
  } else if (v >= -2147483648LL) {
    PutBytes(b, 0xd2, u, 4);
  } else {
    PutBytes(b, 0xd3, u, 8);
  }
}

void EncodeNumber(std::string* b, double d) {
  if (std::floor(d) == d && d >= -9.2e18 && d <= 1.8e19) {
    if (d >= 9.2e18) {
      PutBytes(b, 0xcf, static_cast<uint64_t>(d), 8);
    } else {
      EncodeInteger(b, static_cast<int64_t>(d));
    }
    return;
  }
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    PutBytes(b, 0xca, bits, 4);
  } else {
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    PutBytes(b, 0xcb, bits, 8);
  }
}

void EncodeString(std::string* b, const char* s, size_t len) {
  if (len < 32) {
    AddChar(b, static_cast<char>(0xa0 | len));
  } else if (len <= 0xff) {
    PutBytes(b, 0xd9, len, 1);
  } else if (len <= 0xffff) {
    PutBytes(b, 0xda, len, 2);
  } else {
    PutBytes(b, 0xdb, len, 4);
  }
  b->append(s, len);
}

// The length n when the table at index is exactly the sequence 1..n, else -1.
long long SequenceLength(lua_State* L, int index) {
  long long count = 0, max = 0;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TNUMBER) {
      lua_pop(L, 1);
      return -1;
    }
    double k = lua_tonumber(L, -1);
    if (k < 1 || std::floor(k) != k) {
      lua_pop(L, 1);
      return -1;
    }
    count++;
    if (k > static_cast<double>(max)) max = static_cast<long long>(k);
  }
  return count == max ? count : -1;
}

void Encode(lua_State* L, std::string* b, int index, int depth);

void EncodeTable(lua_State* L, std::string* b, int index, int depth) {
  if (depth > kMaxNesting || !lua_checkstack(L, 4)) {
    AddChar(b, static_cast<char>(0xc0));
    return;
  }
  long long n = SequenceLength(L, index);
  if (n >= 0) {
    if (n < 16) {
      AddChar(b, static_cast<char>(0x90 | n));
    } else if (n <= 0xffff) {
      PutBytes(b, 0xdc, static_cast<uint64_t>(n), 2);
    } else {
      PutBytes(b, 0xdd, static_cast<uint64_t>(n), 4);
    }
    for (long long i = 1; i <= n; i++) {
      lua_rawgeti(L, index, static_cast<int>(i));
      Encode(L, b, lua_gettop(L), depth + 1);
      lua_pop(L, 1);
    }
    return;
  }
  long long pairs = 0;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    lua_pop(L, 1);
    pairs++;
  }
  if (pairs < 16) {
    AddChar(b, static_cast<char>(0x80 | pairs));
  } else if (pairs <= 0xffff) {
    PutBytes(b, 0xde, static_cast<uint64_t>(pairs), 2);
  } else {
    PutBytes(b, 0xdf, static_cast<uint64_t>(pairs), 4);
  }
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    int value = lua_gettop(L);
    Encode(L, b, value - 1, depth + 1);
    Encode(L, b, value, depth + 1);
    lua_pop(L, 1);
  }
}

// Encoded into a C++ string (a luaL_Buffer would not allow the stack moves a table walk
// makes); a thread's own, so that no C++ object is left to unwind if Lua raises.
void Encode(lua_State* L, std::string* b, int index, int depth) {
  switch (lua_type(L, index)) {
    case LUA_TBOOLEAN:
      AddChar(b, static_cast<char>(lua_toboolean(L, index) ? 0xc3 : 0xc2));
      return;
    case LUA_TNUMBER:
      EncodeNumber(b, lua_tonumber(L, index));
      return;
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, index, &len);
      EncodeString(b, s, len);
      return;
    }
    case LUA_TTABLE:
      EncodeTable(L, b, index, depth);
      return;
    default:
      AddChar(b, static_cast<char>(0xc0));
      return;
  }
}

int Pack(lua_State* L) {
  int n = lua_gettop(L);
  if (n == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  thread_local std::string out;
  out.clear();
  for (int i = 1; i <= n; i++) Encode(L, &out, i, 0);
  lua_pushlstring(L, out.data(), out.size());
  return 1;
}

struct Cursor {
  const unsigned char* p;
  size_t left;
};

uint64_t Take(lua_State* L, Cursor* c, int n) {
  if (c->left < static_cast<size_t>(n)) luaL_error(L, "Missing bytes in input.");
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v = (v << 8) | c->p[i];
  c->p += n;
  c->left -= static_cast<size_t>(n);
  return v;
}

void Decode(lua_State* L, Cursor* c, int depth);

void DecodeString(lua_State* L, Cursor* c, size_t len) {
  if (c->left < len) luaL_error(L, "Missing bytes in input.");
  lua_pushlstring(L, reinterpret_cast<const char*>(c->p), len);
  c->p += len;
  c->left -= len;
}

void DecodeArray(lua_State* L, Cursor* c, uint64_t n, int depth) {
  lua_newtable(L);
  for (uint64_t i = 1; i <= n; i++) {
    Decode(L, c, depth + 1);
    lua_rawseti(L, -2, static_cast<int>(i));
  }
}

void DecodeMap(lua_State* L, Cursor* c, uint64_t n, int depth) {
  lua_newtable(L);
  for (uint64_t i = 0; i < n; i++) {
    Decode(L, c, depth + 1);
    Decode(L, c, depth + 1);
    if (lua_isnil(L, -2)) {
      lua_pop(L, 2);  // a nil key cannot be stored
      continue;
    }
    lua_rawset(L, -3);
  }
}

void Decode(lua_State* L, Cursor* c, int depth) {
  if (depth > 1000 || !lua_checkstack(L, 4)) luaL_error(L, "Bad data format in input.");
  uint8_t t = static_cast<uint8_t>(Take(L, c, 1));
  if (t <= 0x7f) {
    lua_pushnumber(L, t);
  } else if (t >= 0xe0) {
    lua_pushnumber(L, static_cast<int8_t>(t));
  } else if ((t & 0xe0) == 0xa0) {
    DecodeString(L, c, t & 0x1f);
  } else if ((t & 0xf0) == 0x90) {
    DecodeArray(L, c, t & 0x0f, depth);
  } else if ((t & 0xf0) == 0x80) {
    DecodeMap(L, c, t & 0x0f, depth);
  } else {
    switch (t) {
      case 0xc0:
        lua_pushnil(L);
        break;
      case 0xc2:
        lua_pushboolean(L, 0);
        break;
      case 0xc3:
        lua_pushboolean(L, 1);
        break;
      case 0xcc:
        lua_pushnumber(L, static_cast<lua_Number>(Take(L, c, 1)));
        break;
      case 0xcd:
        lua_pushnumber(L, static_cast<lua_Number>(Take(L, c, 2)));
        break;
      case 0xce:
        lua_pushnumber(L, static_cast<lua_Number>(Take(L, c, 4)));
        break;
      case 0xcf:
        lua_pushnumber(L, static_cast<lua_Number>(Take(L, c, 8)));
        break;
      case 0xd0:
        lua_pushnumber(L, static_cast<int8_t>(Take(L, c, 1)));
        break;
      case 0xd1:
        lua_pushnumber(L, static_cast<int16_t>(Take(L, c, 2)));
        break;
      case 0xd2:
        lua_pushnumber(L, static_cast<int32_t>(Take(L, c, 4)));
        break;
      case 0xd3:
        lua_pushnumber(L, static_cast<lua_Number>(static_cast<int64_t>(Take(L, c, 8))));
        break;
      case 0xca: {
        uint32_t bits = static_cast<uint32_t>(Take(L, c, 4));
        float f;
        std::memcpy(&f, &bits, 4);
        lua_pushnumber(L, f);
        break;
      }
      case 0xcb: {
        uint64_t bits = Take(L, c, 8);
        double d;
        std::memcpy(&d, &bits, 8);
        lua_pushnumber(L, d);
        break;
      }
      case 0xd9:
      case 0xc4:
        DecodeString(L, c, Take(L, c, 1));
        break;
      case 0xda:
      case 0xc5:
        DecodeString(L, c, Take(L, c, 2));
        break;
      case 0xdb:
      case 0xc6:
        DecodeString(L, c, Take(L, c, 4));
        break;
      case 0xdc:
        DecodeArray(L, c, Take(L, c, 2), depth);
        break;
      case 0xdd:
        DecodeArray(L, c, Take(L, c, 4), depth);
        break;
      case 0xde:
        DecodeMap(L, c, Take(L, c, 2), depth);
        break;
      case 0xdf:
        DecodeMap(L, c, Take(L, c, 4), depth);
        break;
      default:
        luaL_error(L, "Bad data format in input.");
    }
  }
}

// Decodes up to `limit` values (0: all) from s at offset; pushes them and the offset
// after them (-1 at the end) when `with_offset`.
int UnpackGeneric(lua_State* L, long long limit, size_t offset, bool with_offset) {
  size_t len = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  if (offset > len)
    return luaL_error(L, "Start offset %d greater than input length %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  Cursor c{reinterpret_cast<const unsigned char*>(s) + offset, len - offset};
  int pushed = 0;
  while (c.left > 0 && (limit == 0 || pushed < limit)) {
    if (!lua_checkstack(L, 2)) return luaL_error(L, "Too many values to unpack.");
    Decode(L, &c, 0);
    pushed++;
  }
  if (with_offset) {
    lua_pushinteger(L, c.left == 0 ? -1 : static_cast<lua_Integer>(len - c.left));
    lua_insert(L, -(pushed + 1));
    pushed++;
  }
  return pushed;
}

int Unpack(lua_State* L) { return UnpackGeneric(L, 0, 0, false); }

int UnpackOne(lua_State* L) {
  lua_Integer offset = luaL_optinteger(L, 2, 0);
  luaL_argcheck(L, offset >= 0, 2, "offset must be 0 or greater");
  return UnpackGeneric(L, 1, static_cast<size_t>(offset), true);
}

int UnpackLimit(lua_State* L) {
  lua_Integer limit = luaL_checkinteger(L, 2);
  lua_Integer offset = luaL_optinteger(L, 3, 0);
  luaL_argcheck(L, limit >= 0, 2, "limit must be 0 or greater");
  luaL_argcheck(L, offset >= 0, 3, "offset must be 0 or greater");
  return UnpackGeneric(L, limit, static_cast<size_t>(offset), true);
}

}  // namespace

int OpenCmsgpackLibrary(lua_State* L) {
  static const luaL_Reg kFunctions[] = {{"pack", Pack},
                                        {"unpack", Unpack},
                                        {"unpack_one", UnpackOne},
                                        {"unpack_limit", UnpackLimit},
                                        {nullptr, nullptr}};
  lua_newtable(L);
  luaL_register(L, nullptr, kFunctions);
  return 1;
}

}  // namespace strata
