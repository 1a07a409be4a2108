#include "server/scripting/lua_reply.h"

#include <gtest/gtest.h>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
}

#include <string>

#include "server/scripting/lua_vm.h"

namespace strata {
namespace {

// A bare Lua state: each test pushes a reply, runs a chunk over it, writes the result.
class LuaReplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    L = luaL_newstate();
    luaL_openlibs(L);
  }
  void TearDown() override { lua_close(L); }

  // Pushes reply as Lua, stores it as global v, runs `chunk` (which returns a value), and
  // writes that value back as a reply in protocol `resp`.
  std::string Through(const std::string& reply, const char* chunk, int script_resp = 2,
                      int resp = 2) {
    EXPECT_EQ(lua_reply::Push(L, reply), reply.size()) << reply;
    lua_setglobal(L, "v");
    EXPECT_EQ(luaL_dostring(L, chunk), 0) << lua_tostring(L, -1);
    std::string out;
    ReplyBuilder rb(&out, resp);
    lua_reply::Write(L, -1, script_resp, rb);
    lua_settop(L, 0);
    return out;
  }

  lua_State* L = nullptr;
};

TEST_F(LuaReplyTest, Resp2RepliesBecomeRedisLuaValues) {
  EXPECT_EQ(Through(":42\r\n", "return type(v) .. v"), "$8\r\nnumber42\r\n");
  EXPECT_EQ(Through("$3\r\nabc\r\n", "return v"), "$3\r\nabc\r\n");
  EXPECT_EQ(Through("$-1\r\n", "return tostring(v)"), "$5\r\nfalse\r\n");
  EXPECT_EQ(Through("*-1\r\n", "return tostring(v)"), "$5\r\nfalse\r\n");
  EXPECT_EQ(Through("+OK\r\n", "return v.ok"), "$2\r\nOK\r\n");
  EXPECT_EQ(Through("-ERR bad\r\n", "return v.err"), "$7\r\nERR bad\r\n");
  EXPECT_EQ(Through("*3\r\n:1\r\n$1\r\nx\r\n*1\r\n:2\r\n", "return v"),
            "*3\r\n:1\r\n$1\r\nx\r\n*1\r\n:2\r\n");
}

TEST_F(LuaReplyTest, Resp3RepliesBecomeTaggedTables) {
  EXPECT_EQ(Through("%1\r\n$1\r\nk\r\n:1\r\n", "return v.map.k"), ":1\r\n");
  EXPECT_EQ(Through("~1\r\n$1\r\nm\r\n", "return tostring(v.set.m)"), "$4\r\ntrue\r\n");
  EXPECT_EQ(Through("_\r\n", "return tostring(v)"), "$3\r\nnil\r\n");
  EXPECT_EQ(Through(",1.5\r\n", "return tostring(v.double)"), "$3\r\n1.5\r\n");
  EXPECT_EQ(Through("#t\r\n", "return tostring(v)"), "$4\r\ntrue\r\n");
  EXPECT_EQ(Through("(12345678901234567890\r\n", "return v.big_number"),
            "$20\r\n12345678901234567890\r\n");
  EXPECT_EQ(Through("=7\r\ntxt:abc\r\n", "return v.verbatim_string.string"), "$3\r\nabc\r\n");
}

TEST_F(LuaReplyTest, LuaValuesBecomeReplies) {
  EXPECT_EQ(Through(":0\r\n", "return 3.9"), ":3\r\n");
  EXPECT_EQ(Through(":0\r\n", "return -0.5"), ":0\r\n");
  EXPECT_EQ(Through(":0\r\n", "return 1e20"), ":-9223372036854775808\r\n");
  EXPECT_EQ(Through(":0\r\n", "return true"), ":1\r\n");
  EXPECT_EQ(Through(":0\r\n", "return false"), "$-1\r\n");
  EXPECT_EQ(Through(":0\r\n", "return false", 3, 3), "#f\r\n");
  EXPECT_EQ(Through(":0\r\n", "return nil"), "$-1\r\n");
  EXPECT_EQ(Through(":0\r\n", "return {1, 'a', nil, 4}"), "*2\r\n:1\r\n$1\r\na\r\n");
  EXPECT_EQ(Through(":0\r\n", "return {err='E x', ok='no'}"), "-E x\r\n");
  EXPECT_EQ(Through(":0\r\n", "return {ok='a\\r\\nb'}"), "+a  b\r\n");
  EXPECT_EQ(Through(":0\r\n", "return {double=2.5}", 2, 3), ",2.5\r\n");
  EXPECT_EQ(Through(":0\r\n", "return {map={k='v'}}", 2, 3), "%1\r\n$1\r\nk\r\n$1\r\nv\r\n");
  EXPECT_EQ(Through(":0\r\n", "return {map={k='v'}}"), "*2\r\n$1\r\nk\r\n$1\r\nv\r\n");
}

// Bad bytes are refused whole: nothing is pushed.
TEST_F(LuaReplyTest, MalformedRepliesPushNothing) {
  for (const char* bad : {"", ":", ":x\r\n", "$5\r\nab\r\n", "*2\r\n:1\r\n", "?\r\n",
                          "=3\r\nabc\r\n", "#x\r\n", ",1.5x\r\n"}) {
    int top = lua_gettop(L);
    EXPECT_EQ(lua_reply::Push(L, bad), 0u) << bad;
    EXPECT_EQ(lua_gettop(L), top) << bad;
  }
}

// Deep nesting is bounded both ways: a cyclic table is written, not followed forever.
TEST_F(LuaReplyTest, NestingIsBounded) {
  std::string deep;
  for (int i = 0; i < lua_reply::kMaxDepth + 10; i++) deep += "*1\r\n";
  deep += ":1\r\n";
  EXPECT_EQ(lua_reply::Push(L, deep), 0u);
  ASSERT_EQ(luaL_dostring(L, "local t = {}; t[1] = t; return t"), 0);
  std::string out;
  ReplyBuilder rb(&out, 2);
  lua_reply::Write(L, -1, 2, rb);
  EXPECT_NE(out.find("-ERR reached lua stack limit"), std::string::npos);
}

TEST(ShebangTest, FlagsEnginesAndErrors) {
  uint32_t flags = 0;
  std::string code, error;
  ASSERT_TRUE(LuaVm::ParseShebang("return 1", &flags, &code, &error));
  EXPECT_EQ(flags, 0u);
  EXPECT_EQ(code, "return 1");
  ASSERT_TRUE(
      LuaVm::ParseShebang("#!lua flags=no-writes,allow-oom\nreturn 1", &flags, &code, &error));
  EXPECT_EQ(flags, kScriptNoWrites | kScriptAllowOom | kScriptHasShebang);
  EXPECT_EQ(code, "\nreturn 1");  // line numbers stay
  EXPECT_FALSE(LuaVm::ParseShebang("#!python\nx", &flags, &code, &error));
  EXPECT_EQ(error, "ERR Unexpected engine in script shebang: #!python");
  EXPECT_FALSE(LuaVm::ParseShebang("#!lua flags=nope\nx", &flags, &code, &error));
  EXPECT_EQ(error, "ERR Unexpected flag in script shebang: nope");
  EXPECT_FALSE(LuaVm::ParseShebang("#!lua", &flags, &code, &error));
  EXPECT_EQ(error, "ERR Invalid script shebang");
}

}  // namespace
}  // namespace strata
