// The `struct` library Redis gives scripts: struct.pack(fmt, ...), struct.unpack(fmt, s
// [, pos]) and struct.size(fmt), converting between Lua values and C-like binary records.
//
// A format is a sequence of options, spaces ignored:
//   >  <  =     big, little, native (little) endian for what follows
//   ![n]        align items to min(their size, n) bytes from the record's start (n
//               default 8); alignment starts at 1 (none)
//   x           a padding byte (packs 0, unpack skips it)
//   b B h H     signed/unsigned char (1) and short (2)
//   l L T       signed/unsigned long and size_t (8)
//   i[n] I[n]   signed/unsigned integer of n bytes (default 4, at most 16)
//   f d         float (4) and double (8)
//   s           a zero-terminated string
//   c[n]        n bytes of a string; c0 packs the whole string, and unpacks as many
//               bytes as the number unpacked just before it says
// unpack returns the values, then the position after the last byte read (1-based).
// Errors are Lua argument errors ("invalid format option 'Q'", "data string too short").
// Thread-safety: the calling thread's own lua_State.
#include "server/scripting/lua_struct.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace strata {
namespace {

constexpr int kMaxIntSize = 16;
constexpr size_t kNativeAlign = 8;

struct Header {
  bool little = true;
  size_t align = 1;
};

// Reads an optional decimal count after an option; `dflt` when none.
size_t ReadCount(const char** fmt, size_t dflt) {
  if (**fmt < '0' || **fmt > '9') return dflt;
  size_t n = 0;
  while (**fmt >= '0' && **fmt <= '9' && n < 100000)
    n = n * 10 + static_cast<size_t>(*(*fmt)++ - '0');
  return n;
}

// The size of option `opt` (its count already read where it takes one); 0 for s and c0.
size_t OptionSize(lua_State* L, char opt, const char** fmt, Header* h) {
  switch (opt) {
    case 'B':
    case 'b':
    case 'x':
      return 1;
    case 'H':
    case 'h':
      return 2;
    case 'L':
    case 'l':
    case 'T':
      return 8;
    case 'f':
      return 4;
    case 'd':
      return 8;
    case 's':
      return 0;
    case 'c':
      return ReadCount(fmt, 1);
    case 'i':
    case 'I': {
      size_t n = ReadCount(fmt, 4);
      if (n < 1 || n > kMaxIntSize)
        luaL_error(L, "integral size %d is larger than limit of %d", static_cast<int>(n),
                   kMaxIntSize);
      return n;
    }
    default:
      break;
  }
  (void)h;
  char msg[64];
  std::snprintf(msg, sizeof(msg), "invalid format option '%c'", opt);
  luaL_argerror(L, 1, msg);
  return 0;
}

// Handles the header options; true when `opt` was one.
bool HeaderOption(char opt, const char** fmt, Header* h) {
  switch (opt) {
    case ' ':
      return true;
    case '>':
      h->little = false;
      return true;
    case '<':
    case '=':
      h->little = true;
      return true;
    case '!':
      h->align = ReadCount(fmt, kNativeAlign);
      if (h->align == 0) h->align = 1;
      return true;
    default:
      return false;
  }
}

size_t Padding(size_t at, size_t size, const Header& h) {
  size_t a = size < h.align ? size : h.align;
  if (a <= 1) return 0;
  return (a - at % a) % a;
}

void PutInt(luaL_Buffer* b, uint64_t v, bool negative, size_t n, bool little) {
  unsigned char bytes[kMaxIntSize];
  for (size_t i = 0; i < n; i++) {
    bytes[little ? i : n - 1 - i] =
        i < 8 ? static_cast<unsigned char>(v >> (8 * i)) : (negative ? 0xff : 0);
  }
  luaL_addlstring(b, reinterpret_cast<const char*>(bytes), n);
}

int StructPack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Header h;
  int arg = 2;
  size_t total = 0;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  while (*fmt != '\0') {
    char opt = *fmt++;
    if (HeaderOption(opt, &fmt, &h)) continue;
    size_t size = OptionSize(L, opt, &fmt, &h);
    size_t pad = Padding(total, size, h);
    for (size_t i = 0; i < pad; i++) luaL_addchar(&b, '\0');
    total += pad;
    switch (opt) {
      case 'x':
        luaL_addchar(&b, '\0');
        break;
      case 'b':
      case 'h':
      case 'l':
      case 'i': {
        double d = luaL_checknumber(L, arg++);
        int64_t v = static_cast<int64_t>(d);
        PutInt(&b, static_cast<uint64_t>(v), v < 0, size, h.little);
        break;
      }
      case 'B':
      case 'H':
      case 'L':
      case 'T':
      case 'I': {
        double d = luaL_checknumber(L, arg++);
        uint64_t v =
            d < 0 ? static_cast<uint64_t>(static_cast<int64_t>(d)) : static_cast<uint64_t>(d);
        PutInt(&b, v, false, size, h.little);
        break;
      }
      case 'f':
      case 'd': {
        double d = luaL_checknumber(L, arg++);
        unsigned char raw[8];
        if (opt == 'f') {
          float f = static_cast<float>(d);
          std::memcpy(raw, &f, 4);
        } else {
          std::memcpy(raw, &d, 8);
        }
        if (!h.little) {
          for (size_t i = 0; i < size / 2; i++) {
            unsigned char t = raw[i];
            raw[i] = raw[size - 1 - i];
            raw[size - 1 - i] = t;
          }
        }
        luaL_addlstring(&b, reinterpret_cast<const char*>(raw), size);
        break;
      }
      case 'c':
      case 's': {
        size_t len = 0;
        const char* s = luaL_checklstring(L, arg++, &len);
        if (opt == 'c' && size == 0) size = len;  // c0: the whole string
        if (opt == 'c') {
          luaL_argcheck(L, len >= size, arg - 1, "string too short");
          luaL_addlstring(&b, s, size);
        } else {
          luaL_argcheck(L, std::strlen(s) == len, arg - 1, "string contains zeros");
          luaL_addlstring(&b, s, len);
          luaL_addchar(&b, '\0');
          size = len + 1;
        }
        break;
      }
      default:
        break;
    }
    total += size;
  }
  luaL_pushresult(&b);
  return 1;
}

uint64_t GetInt(const unsigned char* p, size_t n, bool little, bool is_signed) {
  uint64_t v = 0;
  size_t take = n < 8 ? n : 8;
  for (size_t i = 0; i < take; i++) {
    uint64_t byte = p[little ? i : n - 1 - i];
    v |= byte << (8 * i);
  }
  if (is_signed && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);
  return v;
}

int StructUnpack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  size_t len = 0;
  const auto* data = reinterpret_cast<const unsigned char*>(luaL_checklstring(L, 2, &len));
  lua_Integer start = luaL_optinteger(L, 3, 1);
  luaL_argcheck(L, start >= 1, 3, "offset must be 1 or greater");
  size_t pos = static_cast<size_t>(start) - 1;
  Header h;
  int results = 0;
  while (*fmt != '\0') {
    char opt = *fmt++;
    if (HeaderOption(opt, &fmt, &h)) continue;
    size_t size = OptionSize(L, opt, &fmt, &h);
    pos += Padding(pos, size, h);
    luaL_argcheck(L, pos <= len && size <= len - pos, 2, "data string too short");
    luaL_checkstack(L, 2, "too many results");
    switch (opt) {
      case 'x':
        break;
      case 'b':
      case 'h':
      case 'l':
      case 'i':
        lua_pushnumber(L, static_cast<lua_Number>(
                              static_cast<int64_t>(GetInt(data + pos, size, h.little, true))));
        results++;
        break;
      case 'B':
      case 'H':
      case 'L':
      case 'T':
      case 'I':
        lua_pushnumber(L, static_cast<lua_Number>(GetInt(data + pos, size, h.little, false)));
        results++;
        break;
      case 'f':
      case 'd': {
        unsigned char raw[8];
        std::memcpy(raw, data + pos, size);
        if (!h.little) {
          for (size_t i = 0; i < size / 2; i++) {
            unsigned char t = raw[i];
            raw[i] = raw[size - 1 - i];
            raw[size - 1 - i] = t;
          }
        }
        double d;
        if (opt == 'f') {
          float f;
          std::memcpy(&f, raw, 4);
          d = f;
        } else {
          std::memcpy(&d, raw, 8);
        }
        lua_pushnumber(L, d);
        results++;
        break;
      }
      case 'c': {
        if (size == 0) {  // c0: the length is the number unpacked just before
          luaL_argcheck(L, results > 0 && lua_isnumber(L, -1), 1,
                        "format 'c0' needs a previous size");
          size = static_cast<size_t>(lua_tonumber(L, -1));
          lua_pop(L, 1);
          results--;
          luaL_argcheck(L, size <= len - pos, 2, "data string too short");
        }
        lua_pushlstring(L, reinterpret_cast<const char*>(data + pos), size);
        results++;
        break;
      }
      case 's': {
        const void* end = std::memchr(data + pos, '\0', len - pos);
        luaL_argcheck(L, end != nullptr, 2, "unfinished string in data");
        size = static_cast<size_t>(static_cast<const unsigned char*>(end) - (data + pos)) + 1;
        lua_pushlstring(L, reinterpret_cast<const char*>(data + pos), size - 1);
        results++;
        break;
      }
      default:
        break;
    }
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos + 1));
  return results + 1;
}

int Size(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Header h;
  size_t total = 0;
  while (*fmt != '\0') {
    char opt = *fmt++;
    if (HeaderOption(opt, &fmt, &h)) continue;
    size_t size = OptionSize(L, opt, &fmt, &h);
    luaL_argcheck(L, opt != 's' && !(opt == 'c' && size == 0), 1,
                  "options 'c0' - 's' have undefined sizes");
    total += Padding(total, size, h) + size;
  }
  lua_pushnumber(L, static_cast<lua_Number>(total));
  return 1;
}

}  // namespace

int OpenStructLibrary(lua_State* L) {
  static const luaL_Reg kFunctions[] = {
      {"pack", StructPack}, {"unpack", StructUnpack}, {"size", Size}, {nullptr, nullptr}};
  lua_newtable(L);
  luaL_register(L, nullptr, kFunctions);
  return 1;
}

}  // namespace strata
