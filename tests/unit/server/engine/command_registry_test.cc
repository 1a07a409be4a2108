#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/engine/command.h"

namespace strata {
namespace {

// Names of every length up to the longest findable one, with the characters command
// names use (letters, digits, '-', '_', '|').
std::vector<std::string> Names() {
  std::vector<std::string> names = {"get",
                                    "set",
                                    "del",
                                    "mget",
                                    "hset",
                                    "client",
                                    "bitfield_ro",
                                    "lpos",
                                    "restore-asking",
                                    "xautoclaim",
                                    "zremrangebyscore",
                                    "georadiusbymember",
                                    "georadiusbymember_ro",
                                    "a|b",
                                    "z",
                                    "ab",
                                    "x1"};
  std::string grow;
  for (size_t n = 1; n <= 32; n++) {
    grow += static_cast<char>('a' + n % 26);
    names.push_back("n" + grow.substr(1));
  }
  return names;
}

std::string Upper(std::string s) {
  for (char& c : s) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return s;
}

TEST(CommandRegistryTest, FindsEveryNameInAnyCaseAndNothingElse) {
  CommandRegistry r;
  std::vector<std::string> names = Names();
  for (const std::string& n : names) r.Add(CommandSpec{n, -1, 0, 0, 0, 0});
  for (const std::string& n : names) {
    const CommandSpec* s = r.Find(n);
    ASSERT_NE(s, nullptr) << n;
    EXPECT_EQ(s->name, n);
    EXPECT_EQ(r.Find(Upper(n)), s) << n;
    std::string mixed = n;
    for (size_t i = 0; i < mixed.size(); i += 2) mixed[i] = Upper(mixed.substr(i, 1))[0];
    EXPECT_EQ(r.Find(mixed), s) << mixed;
    // Every one-character change, and one character more or less, is another name.
    for (size_t i = 0; i < n.size(); i++) {
      for (char c : {'q', '0', '[', '@', '`', '{', '\x80', '\xc1', ' ', '\0'}) {
        if (c == n[i]) continue;
        std::string other = n;
        other[i] = c;
        const CommandSpec* o = r.Find(other);
        if (o != nullptr) {
          EXPECT_EQ(o->name, other) << n << " -> " << other;
        }
      }
    }
    const CommandSpec* longer = r.Find(n + "x");
    if (longer != nullptr) {
      EXPECT_EQ(longer->name, n + "x");
    }
    const CommandSpec* shorter = r.Find(n.substr(0, n.size() - 1));
    if (shorter != nullptr) {
      EXPECT_EQ(shorter->name, n.substr(0, n.size() - 1));
    }
  }
  EXPECT_EQ(r.Find(""), nullptr);
  EXPECT_EQ(r.Find("nope"), nullptr);
  EXPECT_EQ(r.Find(std::string(33, 'a')), nullptr);
  EXPECT_EQ(r.Find(std::string(1000, 'g')), nullptr);
}

TEST(CommandRegistryTest, OnlyLettersAreFolded) {
  CommandRegistry r;
  r.Add(CommandSpec{"a[b", -1, 0, 0, 0, 0});
  r.Add(CommandSpec{"ab{cdefgh", -1, 0, 0, 0, 0});
  EXPECT_NE(r.Find("A[B"), nullptr);
  EXPECT_EQ(r.Find("a{b"), nullptr);  // '[' + 0x20 is '{'
  EXPECT_EQ(r.Find("A{B"), nullptr);
  EXPECT_NE(r.Find("AB{CDEFGH"), nullptr);
  EXPECT_EQ(r.Find("ab[cdefgh"), nullptr);
  EXPECT_EQ(r.Find("\xc1[b"), nullptr);  // 0xc1 is no 'A'
}

TEST(CommandRegistryTest, ContainerSubcommandsGetCopiesWithTheirOwnStatisticsSlots) {
  static const std::vector<std::string> kSubs = {"get", "set", "resetstat"};
  CommandRegistry r;
  r.Add(CommandSpec{"get", 2, kCmdReadOnly, 1, 1, 1});
  CommandSpec config{"config", -2, kCmdAdmin, 0, 0, 0};
  config.subcommands = &kSubs;
  r.Add(config);
  r.Add(CommandSpec{"set", -3, kCmdWrite, 1, 1, 1});
  const CommandSpec* c = r.Find("config");
  // Before Seal a container runs as itself.
  EXPECT_EQ(c->ForSubcommand("get"), c);
  EXPECT_EQ(r.stat_count(), 3u);
  r.Seal();
  ASSERT_EQ(r.stat_count(), 6u);
  EXPECT_EQ(r.stat_name(0), "get");
  EXPECT_EQ(r.stat_name(2), "set");
  ASSERT_EQ(c->sub_specs.size(), kSubs.size());
  for (size_t i = 0; i < kSubs.size(); i++) {
    const CommandSpec* sub = c->ForSubcommand(Upper(kSubs[i]));
    EXPECT_EQ(sub, c->sub_specs[i]);
    EXPECT_NE(sub, c);
    // Everything but the slot is the container's: the name, the id (ACL), the handlers.
    EXPECT_EQ(sub->name, "config");
    EXPECT_EQ(sub->id, c->id);
    EXPECT_EQ(sub->flags, c->flags);
    EXPECT_EQ(sub->subcommands, c->subcommands);
    EXPECT_EQ(r.stat_name(sub->stat_id), "config|" + kSubs[i]);
    EXPECT_TRUE(sub->sub_specs.empty());
    // A copy asked again stays itself.
    EXPECT_EQ(sub->ForSubcommand(kSubs[i]), sub);
    std::string_view args[] = {"CONFIG", kSubs[i]};
    EXPECT_EQ(StatIndexOf(c, CmdArgs(args, 2)), sub->stat_id);
  }
  EXPECT_EQ(c->ForSubcommand("nosuch"), c);
  EXPECT_EQ(c->stat_id, c->id);
  std::string_view alone[] = {"CONFIG"};
  EXPECT_EQ(StatIndexOf(c, CmdArgs(alone, 1)), c->id);
  const CommandSpec* get = r.Find("get");
  std::string_view get_args[] = {"GET", "get"};
  EXPECT_EQ(StatIndexOf(get, CmdArgs(get_args, 2)), get->id);
  EXPECT_EQ(get->stat_id, get->id);
}

}  // namespace
}  // namespace strata
