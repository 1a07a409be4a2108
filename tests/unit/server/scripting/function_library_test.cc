// Function libraries in the interpreter: what InspectLibrary reports (name, functions,
// flags, descriptions), Redis's errors for bad metadata and bad registrations, and that
// inspecting keeps nothing; the FunctionStore's rules for clashes and restores.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/engine/function_store.h"
#include "server/scripting/lua_vm.h"

namespace strata {
namespace {

TEST(FunctionLibraryTest, InspectReportsTheLibrary) {
  FunctionLibrary lib;
  std::string error;
  const char* code =
      "#!lua name=lib1\n"
      "redis.register_function('plain', function(keys, args) return 1 end)\n"
      "redis.register_function{function_name='ro', callback=function() return 2 end,\n"
      "  flags={'no-writes', 'allow-stale'}, description='reads'}\n";
  ASSERT_TRUE(LuaVm::InspectLibrary(code, &lib, &error)) << error;
  EXPECT_EQ(lib.name, "lib1");
  EXPECT_EQ(lib.code, code);
  ASSERT_EQ(lib.functions.size(), 2u);
  EXPECT_EQ(lib.functions[0].name, "plain");
  EXPECT_FALSE(lib.functions[0].description.has_value());
  EXPECT_EQ(lib.functions[0].flags, 0u);
  EXPECT_EQ(lib.functions[1].name, "ro");
  EXPECT_EQ(lib.functions[1].description, "reads");
  EXPECT_EQ(LuaVm::FlagNames(lib.functions[1].flags),
            (std::vector<std::string>{"no-writes", "allow-stale"}));
  // Inspecting compiles nothing the interpreter could call.
  EXPECT_EQ(LuaVm::ForThisThread().compiled_functions(), 0u);
}

TEST(FunctionLibraryTest, BadLibrariesAreRefusedWithRedisTexts) {
  struct Case {
    const char* code;
    const char* error;
  } cases[] = {
      {"return 1", "ERR Missing library metadata"},
      {"#!lua name=x", "ERR Invalid library metadata"},
      {"#!lua\nredis.register_function('f', function() end)", "ERR Library name was not given"},
      {"#!lua name=x y=z\n", "ERR Invalid metadata value given: y=z"},
      {"#!js name=x\n", "ERR Engine 'js' not found"},
      {"#!lua name=x\n", "ERR No functions registered"},
      {"#!lua name=x\nwhile true do end",
       "ERR Error registering functions: ERR FUNCTION LOAD timeout"},
      {"#!lua name=x\nredis.register_function('f', 1)",
       "ERR Error registering functions: ERR second argument to redis.register_function must "
       "be a function"},
  };
  for (const Case& c : cases) {
    FunctionLibrary lib;
    std::string error;
    EXPECT_FALSE(LuaVm::InspectLibrary(c.code, &lib, &error)) << c.code;
    EXPECT_EQ(error, c.error) << c.code;
  }
}

TEST(FunctionStoreTest, ClashesAndRestores) {
  FunctionStore& store = FunctionStore::Get();
  store.set_inspector(&LuaVm::InspectLibrary);
  std::string error;
  ASSERT_TRUE(store.RestoreCodes({"#!lua name=a\nredis.register_function('f', function() end)",
                                  "#!lua name=b\nredis.register_function('g', function() end)"},
                                 true, &error))
      << error;
  EXPECT_EQ(store.library_count(), 2u);
  EXPECT_EQ(store.function_count(), 2u);
  uint64_t gen = store.generation();
  // A clash leaves the store as it was.
  EXPECT_FALSE(store.RestoreCodes({"#!lua name=c\nredis.register_function('f', function() end)"},
                                  false, &error));
  EXPECT_EQ(error, "ERR Function f already exists");
  EXPECT_EQ(store.generation(), gen);
  EXPECT_FALSE(store.RestoreCodes({"#!lua name=a\nredis.register_function('h', function() end)"},
                                  false, &error));
  EXPECT_EQ(error, "ERR Library 'a' already exists");
  FunctionInfo info;
  std::string lib;
  ASSERT_TRUE(store.FindFunction("g", &info, &lib));
  EXPECT_EQ(lib, "b");
  // A code that does not load refuses the whole restore.
  EXPECT_FALSE(store.RestoreCodes({"#!lua name=z\nsyntax error"}, true, &error));
  EXPECT_EQ(store.library_count(), 2u);
  ASSERT_TRUE(store.RestoreCodes({}, true, &error));
  EXPECT_EQ(store.library_count(), 0u);
  EXPECT_GT(store.generation(), gen);
}

}  // namespace
}  // namespace strata
