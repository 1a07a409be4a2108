#include "tools/strata-mem/value_gen.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tools/strata-mem/populate.h"

namespace strata::mem {
namespace {

TEST(ValueGenTest, MemtierKeyNames) {
  EXPECT_EQ(MemtierKey("memtier-", 1), "memtier-1");
  EXPECT_EQ(MemtierKey("memtier-", 1000000), "memtier-1000000");
  EXPECT_EQ(MemtierKey("", 7), "7");
}

TEST(ValueGenTest, ValuesArePrintableAndDiffer) {
  ValueGen gen(42);
  std::set<std::string> seen;
  for (int i = 0; i < 1000; i++) {
    std::string v = gen.Value(100);
    ASSERT_EQ(v.size(), 100u);
    for (char c : v) {
      ASSERT_GE(c, '!');
      ASSERT_LE(c, '~');
    }
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(ValueGenTest, UsesTheWholeAlphabet) {
  ValueGen gen(1);
  std::string v = gen.Value(20000);
  std::set<char> chars(v.begin(), v.end());
  EXPECT_EQ(chars.size(), static_cast<size_t>(ValueGen::kAlphabet));
}

TEST(ValueGenTest, SeedIsDeterministic) {
  ValueGen a(7);
  ValueGen b(7);
  ValueGen c(8);
  std::string va = a.Value(64);
  EXPECT_EQ(va, b.Value(64));
  EXPECT_NE(va, c.Value(64));
  EXPECT_EQ(ValueGen(3).Value(0), "");
}

std::vector<std::string> Strings(const std::vector<std::string_view>& v) {
  return std::vector<std::string>(v.begin(), v.end());
}

TEST(CommandBuilderTest, String) {
  PopulateOptions o;
  o.data_size = 16;
  CommandBuilder b(o);
  auto cmd = Strings(b.Build(5));
  ASSERT_EQ(cmd.size(), 3u);
  EXPECT_EQ(cmd[0], "SET");
  EXPECT_EQ(cmd[1], "memtier-5");
  EXPECT_EQ(cmd[2].size(), 16u);
  auto next = Strings(b.Build(6));
  EXPECT_EQ(next[1], "memtier-6");
  EXPECT_NE(next[2], cmd[2]);
}

TEST(CommandBuilderTest, OtherTypes) {
  PopulateOptions o;
  o.fields = 3;
  o.data_size = 4;
  o.key_prefix = "k:";
  o.type = DataType::kHash;
  auto hash = Strings(CommandBuilder(o).Build(2));
  ASSERT_EQ(hash.size(), 8u);
  EXPECT_EQ(hash[0], "HSET");
  EXPECT_EQ(hash[1], "k:2");
  EXPECT_EQ(hash[2], "f0");
  EXPECT_EQ(hash[3].size(), 4u);
  EXPECT_EQ(hash[6], "f2");

  o.type = DataType::kSet;
  auto set = Strings(CommandBuilder(o).Build(10));
  EXPECT_EQ(set, (std::vector<std::string>{"SADD", "k:10", "10", "11", "12"}));

  o.type = DataType::kZset;
  auto zset = Strings(CommandBuilder(o).Build(1));
  EXPECT_EQ(zset, (std::vector<std::string>{"ZADD", "k:1", "0", "m0", "1", "m1", "2", "m2"}));

  o.type = DataType::kList;
  auto list = Strings(CommandBuilder(o).Build(1));
  ASSERT_EQ(list.size(), 5u);
  EXPECT_EQ(list[0], "RPUSH");
  EXPECT_EQ(list[4].size(), 4u);
}

TEST(CommandBuilderTest, TypeNames) {
  for (const char* name : {"string", "hash", "set", "zset", "list"}) {
    auto t = ParseDataType(name);
    ASSERT_TRUE(t.has_value()) << name;
    EXPECT_STREQ(DataTypeName(*t), name);
  }
  EXPECT_FALSE(ParseDataType("stream").has_value());
}

}  // namespace
}  // namespace strata::mem
