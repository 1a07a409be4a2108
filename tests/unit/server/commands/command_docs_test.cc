#include "server/commands/command_docs.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>

#include "server/commands/families.h"
#include "server/engine/command.h"

namespace strata {
namespace {

TEST(CommandDocsTest, EveryEntryParsesAndNamesAreUnique) {
  std::set<std::string> names;
  for (const CommandDoc& d : AllCommandDocs()) {
    ASSERT_NE(d.name, nullptr);
    EXPECT_TRUE(names.insert(d.name).second) << d.name;
    EXPECT_NE(d.since, nullptr) << d.name;
    if (d.syntax == nullptr) continue;
    std::vector<DocArg> args;
    std::string error;
    EXPECT_TRUE(ParseDocSyntax(d.syntax, &args, &error)) << d.name << ": " << error;
    EXPECT_FALSE(args.empty()) << d.name;
  }
}

TEST(CommandDocsTest, EveryCommandAndSubcommandHasAnEntry) {
  RegisterAllCommands();
  for (const auto& s : CommandRegistry::Get().all()) {
    const CommandDoc* doc = FindCommandDoc(s->name);
    ASSERT_NE(doc, nullptr) << s->name;
    // COMMAND INFO's line: "first last step flags... | @categories...".
    ASSERT_NE(doc->info, nullptr) << s->name;
    std::string info = doc->info;
    int64_t first = 0, last = 0, step = 0;
    EXPECT_EQ(std::sscanf(info.c_str(), "%ld %ld %ld", &first, &last, &step), 3) << s->name;
    EXPECT_NE(info.find(" | @"), std::string::npos) << s->name;

    if (s->subcommands == nullptr) continue;
    for (const std::string& sub : *s->subcommands) {
      const CommandDoc* sub_doc = FindCommandDoc(s->name + "|" + sub);
      ASSERT_NE(sub_doc, nullptr) << s->name << "|" << sub;
      EXPECT_NE(sub_doc->info, nullptr) << s->name << "|" << sub;
      EXPECT_NE(sub_doc->arity, 0) << s->name << "|" << sub;
    }
  }
}

TEST(CommandDocsTest, SyntaxBuildsTheTree) {
  std::vector<DocArg> args;
  std::string error;
  ASSERT_TRUE(
      ParseDocSyntax("key dest:key value condition(!NX|xx!XX)?@2.6.12 EX=seconds:integer? "
                     "pair{f:double 'x'=v:unix-time}...+ GET=p:pattern#1 auto!'*' ip:port",
                     &args, &error))
      << error;
  ASSERT_EQ(args.size(), 9u);
  EXPECT_EQ(args[0].name, "key");
  EXPECT_EQ(args[0].type, "key");
  EXPECT_EQ(args[0].key_spec_index, 0);
  EXPECT_EQ(args[1].name, "dest");
  EXPECT_EQ(args[1].key_spec_index, 1);
  EXPECT_EQ(args[2].type, "string");
  EXPECT_EQ(args[2].key_spec_index, -1);
  const DocArg& cond = args[3];
  EXPECT_EQ(cond.type, "oneof");
  EXPECT_TRUE(cond.optional);
  EXPECT_EQ(cond.since, "2.6.12");
  ASSERT_EQ(cond.args.size(), 2u);
  EXPECT_EQ(cond.args[0].name, "nx");
  EXPECT_EQ(cond.args[0].token, "NX");
  EXPECT_EQ(cond.args[0].type, "pure-token");
  EXPECT_EQ(cond.args[1].name, "xx");
  EXPECT_EQ(args[4].token, "EX");
  EXPECT_EQ(args[4].name, "seconds");
  EXPECT_EQ(args[4].type, "integer");
  const DocArg& pair = args[5];
  EXPECT_EQ(pair.type, "block");
  EXPECT_TRUE(pair.multiple && pair.multiple_token && !pair.optional);
  ASSERT_EQ(pair.args.size(), 2u);
  EXPECT_EQ(pair.args[0].type, "double");
  EXPECT_EQ(pair.args[1].token, "x");
  EXPECT_EQ(pair.args[1].type, "unix-time");
  EXPECT_EQ(args[6].type, "pattern");
  EXPECT_EQ(args[6].key_spec_index, 1);
  EXPECT_EQ(args[7].token, "*");
  EXPECT_EQ(args[7].name, "auto");
  EXPECT_EQ(args[8].name, "ip:port");
  EXPECT_EQ(args[8].type, "string");
  // The empty token (MIGRATE's key-or-empty-string).
  ASSERT_TRUE(ParseDocSyntax("k(key|empty_string!'')", &args, &error)) << error;
  EXPECT_TRUE(args[0].args[1].has_token);
  EXPECT_EQ(args[0].args[1].token, "");
}

TEST(CommandDocsTest, MalformedSyntaxIsAnErrorWithTheOffset) {
  std::vector<DocArg> args;
  std::string error;
  for (const char* bad :
       {"a(b|c", "a{b c", "!'*'", "'x'", "a b)", "A=", "x@", "x#1.2", "'unterminated", "Bad"}) {
    EXPECT_FALSE(ParseDocSyntax(bad, &args, &error)) << bad;
    EXPECT_NE(error.find("offset"), std::string::npos) << bad << ": " << error;
    EXPECT_TRUE(args.empty());
  }
}

TEST(CommandDocsTest, KeySpecsSplitBySemicolon) {
  CommandDoc d;
  d.keys = "RW access delete;RW insert";
  auto specs = DocKeySpecs(d);
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0], (std::vector<std::string_view>{"RW", "access", "delete"}));
  EXPECT_EQ(specs[1], (std::vector<std::string_view>{"RW", "insert"}));
  d.keys = nullptr;
  EXPECT_TRUE(DocKeySpecs(d).empty());
}

}  // namespace
}  // namespace strata
