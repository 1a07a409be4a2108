#include "server/scripting/lua_reply.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include <charconv>
#include <cstdint>
#include <cstdlib>

namespace strata::lua_reply {
namespace {

// One reply parsed at p[0..n): the line after the type byte, and where it ends.
struct Line {
  std::string_view text;
  size_t next;  // offset just past its CRLF
};

bool ReadLine(std::string_view in, size_t at, Line* out) {
  size_t end = in.find("\r\n", at);
  if (end == std::string_view::npos) return false;
  out->text = in.substr(at, end - at);
  out->next = end + 2;
  return true;
}

bool ToInt(std::string_view s, long long* v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

void SetField(lua_State* L, const char* name, std::string_view value) {
  lua_pushlstring(L, value.data(), value.size());
  lua_setfield(L, -2, name);
}

// Parses one reply at in[at..]; pushes it and returns the offset after it, or 0.
size_t PushAt(lua_State* L, std::string_view in, size_t at, int depth) {
  if (at >= in.size() || depth > kMaxDepth || !lua_checkstack(L, 4)) return 0;
  char type = in[at];
  Line line;
  if (!ReadLine(in, at + 1, &line)) return 0;
  long long n = 0;
  switch (type) {
    case ':':
      if (!ToInt(line.text, &n)) return 0;
      lua_pushnumber(L, static_cast<lua_Number>(n));
      return line.next;
    case '+':
    case '-':
      lua_newtable(L);
      SetField(L, type == '+' ? "ok" : "err", line.text);
      return line.next;
    case '$':
    case '=': {
      if (!ToInt(line.text, &n)) return 0;
      if (n < 0) {
        if (type != '$') return 0;
        lua_pushboolean(L, 0);
        return line.next;
      }
      size_t len = static_cast<size_t>(n);
      if (line.next + len + 2 > in.size()) return 0;
      std::string_view body = in.substr(line.next, len);
      if (type == '$') {
        lua_pushlstring(L, body.data(), body.size());
      } else {  // verbatim: "txt:..." -> {verbatim_string={format="txt", string="..."}}
        if (body.size() < 4 || body[3] != ':') return 0;
        lua_newtable(L);
        lua_newtable(L);
        SetField(L, "format", body.substr(0, 3));
        SetField(L, "string", body.substr(4));
        lua_setfield(L, -2, "verbatim_string");
      }
      return line.next + len + 2;
    }
    case '*':
    case '~':
    case '%': {
      if (!ToInt(line.text, &n)) return 0;
      if (n < 0) {
        if (type != '*') return 0;
        lua_pushboolean(L, 0);
        return line.next;
      }
      size_t next = line.next;
      if (type == '*') {
        lua_newtable(L);
        for (long long i = 1; i <= n; i++) {
          next = PushAt(L, in, next, depth + 1);
          if (next == 0) {
            lua_pop(L, 1);
            return 0;
          }
          lua_rawseti(L, -2, static_cast<int>(i));
        }
        return next;
      }
      // map -> {map={k=v}}, set -> {set={member=true}}
      lua_newtable(L);
      lua_newtable(L);
      for (long long i = 0; i < n; i++) {
        next = PushAt(L, in, next, depth + 1);
        if (next == 0) {
          lua_pop(L, 2);
          return 0;
        }
        if (type == '%') {
          next = PushAt(L, in, next, depth + 1);
          if (next == 0) {
            lua_pop(L, 3);
            return 0;
          }
        } else {
          lua_pushboolean(L, 1);
        }
        lua_settable(L, -3);
      }
      lua_setfield(L, -2, type == '%' ? "map" : "set");
      return next;
    }
    case '_':
      lua_pushnil(L);
      return line.next;
    case '#':
      if (line.text != "t" && line.text != "f") return 0;
      lua_pushboolean(L, line.text == "t");
      return line.next;
    case ',': {
      // No C++ object may live across a Lua call that can raise (longjmp): a stack copy.
      char buf[128];
      if (line.text.size() >= sizeof(buf)) return 0;
      line.text.copy(buf, line.text.size());
      buf[line.text.size()] = '\0';
      char* end = nullptr;
      double d = std::strtod(buf, &end);
      if (end != buf + line.text.size()) return 0;
      lua_newtable(L);
      lua_pushnumber(L, d);
      lua_setfield(L, -2, "double");
      return line.next;
    }
    case '(':
      lua_newtable(L);
      SetField(L, "big_number", line.text);
      return line.next;
    default:
      return 0;
  }
}

// Fields are read raw: a script's metatables never run (nothing here can raise).
void RawField(lua_State* L, int index, const char* name) {
  lua_pushstring(L, name);
  lua_rawget(L, index);
}

// The string field `name` of the table at index, if it is a string.
bool StringField(lua_State* L, int index, const char* name, std::string_view* out) {
  RawField(L, index, name);
  bool ok = lua_type(L, -1) == LUA_TSTRING;
  if (ok) {
    size_t len = 0;
    const char* s = lua_tolstring(L, -1, &len);
    *out = std::string_view(s, len);
  }
  lua_pop(L, 1);  // the string stays alive: the table still refers to it
  return ok;
}

bool TableField(lua_State* L, int index, const char* name) {
  RawField(L, index, name);
  if (lua_type(L, -1) == LUA_TTABLE) return true;  // left on the stack
  lua_pop(L, 1);
  return false;
}

void WriteAt(lua_State* L, int index, int script_resp, ReplyBuilder& rb, int depth) {
  if (index < 0) index = lua_gettop(L) + index + 1;
  if (depth > kMaxDepth || !lua_checkstack(L, 4)) {
    rb.Error("ERR reached lua stack limit");
    return;
  }
  switch (lua_type(L, index)) {
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, index, &len);
      rb.Bulk(std::string_view(s, len));
      return;
    }
    case LUA_TNUMBER: {
      // Truncated toward zero; out of range (and NaN) gives INT64_MIN, which is what
      // Redis's unchecked cast yields on x86 (here without undefined behaviour).
      double d = lua_tonumber(L, index);
      rb.Integer(d > -9223372036854775808.0 && d < 9223372036854775808.0 ? static_cast<int64_t>(d)
                                                                         : INT64_MIN);
      return;
    }
    case LUA_TBOOLEAN:
      if (script_resp == 2) {
        lua_toboolean(L, index) ? rb.Integer(1) : rb.Null();
      } else {
        rb.Bool(lua_toboolean(L, index) != 0);
      }
      return;
    case LUA_TTABLE:
      break;
    default:
      rb.Null();
      return;
  }
  std::string_view s;
  if (StringField(L, index, "err", &s)) {
    if (!s.empty() && s[0] == '-') s.remove_prefix(1);  // error_reply('-CODE x')
    RawField(L, index, kErrorCountedField);
    bool counted = lua_toboolean(L, -1) != 0;
    lua_pop(L, 1);
    if (counted) {
      rb.ErrorUncounted(s);
    } else {
      rb.Error(s);
    }
    return;
  }
  if (StringField(L, index, "ok", &s)) {
    std::string line(s);  // CR and LF would end the status line: spaces, as Redis
    for (char& ch : line) {
      if (ch == '\r' || ch == '\n') ch = ' ';
    }
    rb.Simple(line);
    return;
  }
  RawField(L, index, "double");
  if (lua_type(L, -1) == LUA_TNUMBER) {
    rb.Double(lua_tonumber(L, -1));
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  if (StringField(L, index, "big_number", &s)) {
    if (rb.resp() == 3) {
      std::string* out = rb.buffer();
      out->push_back('(');
      out->append(s);
      out->append("\r\n");
    } else {
      rb.Bulk(s);
    }
    return;
  }
  if (TableField(L, index, "verbatim_string")) {
    int vt = lua_gettop(L);
    std::string_view format = "txt", text;
    StringField(L, vt, "format", &format);
    StringField(L, vt, "string", &text);
    if (rb.resp() == 3 && format.size() == 3) {
      std::string* out = rb.buffer();
      out->push_back('=');
      out->append(std::to_string(text.size() + 4));
      out->append("\r\n");
      out->append(format);
      out->push_back(':');
      out->append(text);
      out->append("\r\n");
    } else {
      rb.Bulk(text);
    }
    lua_pop(L, 1);
    return;
  }
  for (const char* kind : {"map", "set"}) {
    if (!TableField(L, index, kind)) continue;
    int t = lua_gettop(L);
    size_t count = 0;
    lua_pushnil(L);
    while (lua_next(L, t) != 0) {
      count++;
      lua_pop(L, 1);
    }
    bool map = kind[0] == 'm';
    map ? rb.Map(count) : rb.Set(count);
    lua_pushnil(L);
    while (lua_next(L, t) != 0) {
      // key at -2, value at -1; the key is written from a copy (lua_next needs it as is)
      lua_pushvalue(L, -2);
      WriteAt(L, -1, script_resp, rb, depth + 1);
      lua_pop(L, 1);
      if (map) WriteAt(L, -1, script_resp, rb, depth + 1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return;
  }
  // An array: t[1], t[2], ... up to the first nil.
  size_t n = 0;
  while (true) {
    lua_rawgeti(L, index, static_cast<int>(n + 1));
    bool nil = lua_isnil(L, -1);
    lua_pop(L, 1);
    if (nil) break;
    n++;
  }
  rb.Array(n);
  for (size_t i = 1; i <= n; i++) {
    lua_rawgeti(L, index, static_cast<int>(i));
    WriteAt(L, -1, script_resp, rb, depth + 1);
    lua_pop(L, 1);
  }
}

}  // namespace

size_t Push(lua_State* L, std::string_view reply) { return PushAt(L, reply, 0, 0); }

void Write(lua_State* L, int index, int script_resp, ReplyBuilder& rb) {
  WriteAt(L, index, script_resp, rb, 0);
}

}  // namespace strata::lua_reply
