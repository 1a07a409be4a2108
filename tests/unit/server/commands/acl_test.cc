// AclUser's rules, descriptions and checks against the real command table (the commands
// layer supplies the categories and which arguments are keys and channels), and the
// registry's all-or-nothing changes and log.
#include "server/engine/acl.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "server/commands/families.h"
#include "server/engine/command.h"

namespace strata {
namespace {

class AclTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterAllCommands(); }

  static AclUser Make(std::initializer_list<std::string_view> rules) {
    AclUser u("u");
    for (std::string_view r : rules) {
      std::string error;
      EXPECT_TRUE(u.Apply(r, &error)) << r << ": " << error;
    }
    return u;
  }

  static AclUser::Verdict Check(const AclUser& u, std::vector<std::string_view> call) {
    const CommandSpec* spec = CommandRegistry::Get().Find(call[0]);
    EXPECT_NE(spec, nullptr) << call[0];
    return u.Check(*spec, CmdArgs(call.data(), call.size()));
  }
};

TEST_F(AclTest, CommandRulesAreDescribedInTheOrderGivenEachCommandsLastOnly) {
  AclUser u = Make({"+@read", "-get", "+@write", "-set", "+get"});
  EXPECT_EQ(u.DescribeCommands(), "-@all +@read +@write -set +get");
  AclUser v = Make({"+config|get", "+config"});  // the command overrides its subcommand
  EXPECT_EQ(v.DescribeCommands(), "-@all +config");
  AclUser w = Make({"+get", "+@all", "-debug"});  // +@all starts again
  EXPECT_EQ(w.DescribeCommands(), "+@all -debug");
  EXPECT_EQ(Make({"on", ">pw", "~k*", "&c*", "+get"}).Describe(),
            "on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~k* "
            "resetchannels &c* -@all +get");
}

TEST_F(AclTest, CommandsSubcommandsAndCategories) {
  AclUser u = Make({"~*", "&*", "+get", "+config|get", "+@hash", "-hdel"});
  EXPECT_EQ(Check(u, {"get", "k"}).denied, AclUser::Denied::kNone);
  EXPECT_EQ(Check(u, {"hset", "h", "f", "v"}).denied, AclUser::Denied::kNone);
  AclUser::Verdict v = Check(u, {"hdel", "h", "f"});
  EXPECT_EQ(v.denied, AclUser::Denied::kCommand);
  EXPECT_EQ(v.object, "hdel");
  EXPECT_EQ(Check(u, {"config", "get", "x"}).denied, AclUser::Denied::kNone);
  v = Check(u, {"config", "SET", "x", "y"});
  EXPECT_EQ(v.denied, AclUser::Denied::kCommand);
  EXPECT_EQ(v.object, "config|set");
}

TEST_F(AclTest, FirstArgumentRulesAllowOnlyThoseCallsUntilARuleOnTheWholeCommand) {
  AclUser u = Make({"~*", "+select|0", "+select|A", "+select|a"});
  EXPECT_EQ(u.DescribeCommands(), "-@all +select|0 +select|A");  // "a" is "A" again
  EXPECT_EQ(Check(u, {"select", "0"}).denied, AclUser::Denied::kNone);
  EXPECT_EQ(Check(u, {"SELECT", "a"}).denied, AclUser::Denied::kNone);
  EXPECT_EQ(Check(u, {"select", "1"}).denied, AclUser::Denied::kCommand);
  EXPECT_EQ(Check(u, {"get", "k"}).denied, AclUser::Denied::kCommand);
  // A rule on the whole command replaces them, whichever way it goes.
  AclUser whole = Make({"~*", "+select|0", "+select"});
  EXPECT_EQ(whole.DescribeCommands(), "-@all +select");
  EXPECT_EQ(Check(whole, {"select", "7"}).denied, AclUser::Denied::kNone);
  AclUser denied = Make({"~*", "+select|0", "-@connection"});
  EXPECT_EQ(Check(denied, {"select", "0"}).denied, AclUser::Denied::kCommand);
  // Nothing to add to a command allowed whole; never a denial; not past a subcommand.
  EXPECT_EQ(Make({"+select", "+select|0"}).DescribeCommands(), "-@all +select");
  std::string error;
  EXPECT_FALSE(u.Apply("-select|0", &error));
  EXPECT_FALSE(u.Apply("+client|id|x", &error));
  EXPECT_EQ(error, "Allowing first-arg of a subcommand is not supported");
}

TEST_F(AclTest, KeysNeedWhatTheCallDoesWithThem) {
  AclUser u = Make({"+@all", "%R~r*", "%W~w*"});
  EXPECT_EQ(Check(u, {"get", "r1"}).denied, AclUser::Denied::kNone);
  EXPECT_EQ(Check(u, {"get", "w1"}).denied, AclUser::Denied::kKey);
  EXPECT_EQ(Check(u, {"set", "w1", "v"}).denied, AclUser::Denied::kNone);
  EXPECT_EQ(Check(u, {"set", "w1", "v", "GET"}).denied, AclUser::Denied::kKey);  // reads too
  EXPECT_EQ(Check(u, {"exists", "w1"}).denied, AclUser::Denied::kNone);          // neither
  EXPECT_EQ(Check(u, {"del", "r1"}).denied, AclUser::Denied::kKey);
  AclUser::Verdict v = Check(u, {"copy", "r1", "x"});
  EXPECT_EQ(v.denied, AclUser::Denied::kKey);
  EXPECT_EQ(v.object, "x");
  // Counted keys: only those the count names.
  EXPECT_EQ(Check(u, {"zunionstore", "w1", "1", "r1", "WEIGHTS", "2"}).denied,
            AclUser::Denied::kNone);
}

TEST_F(AclTest, ChannelsMatchPatternsAndPsubscribeMatchesThemLiterally) {
  AclUser u = Make({"+@all", "~*", "&c*"});
  EXPECT_EQ(Check(u, {"publish", "chat", "m"}).denied, AclUser::Denied::kNone);
  EXPECT_EQ(Check(u, {"publish", "d", "m"}).denied, AclUser::Denied::kChannel);
  EXPECT_EQ(Check(u, {"subscribe", "c1", "d"}).denied, AclUser::Denied::kChannel);
  EXPECT_EQ(Check(u, {"psubscribe", "c*"}).denied, AclUser::Denied::kNone);
  EXPECT_EQ(Check(u, {"psubscribe", "c1*"}).denied, AclUser::Denied::kChannel);
}

TEST_F(AclTest, OnlyAUserAllowedEverythingEverywhereIsUnrestricted) {
  EXPECT_TRUE(MakeDefaultUser()->unrestricted());
  EXPECT_FALSE(Make({"+@all", "~*"}).unrestricted());  // no channels
  EXPECT_FALSE(Make({"+@all", "~*", "&*", "-debug"}).unrestricted());
  EXPECT_TRUE(Make({"+@all", "~*", "&*", "-debug", "+debug"}).unrestricted());
  EXPECT_TRUE(Make({"-@all", "+@all", "allkeys", "allchannels"}).unrestricted());
}

TEST_F(AclTest, PasswordsAreKeptAsTheirDigest) {
  AclUser u = Make({">pw", ">other"});
  EXPECT_TRUE(u.CheckPassword("pw"));
  EXPECT_TRUE(u.CheckPassword("other"));
  EXPECT_FALSE(u.CheckPassword("PW"));
  std::string error;
  EXPECT_TRUE(u.Apply("<pw", &error));
  EXPECT_FALSE(u.CheckPassword("pw"));
  EXPECT_FALSE(u.Apply("<pw", &error));
  EXPECT_FALSE(u.Apply("#ABC", &error));
  EXPECT_TRUE(u.Apply("nopass", &error));
  EXPECT_TRUE(u.CheckPassword("anything"));
  EXPECT_FALSE(u.Apply("(+get ~x)", &error));  // selectors: refused, with the reason
  EXPECT_NE(error.find("selectors"), std::string::npos);
}

TEST_F(AclTest, RegistryChangesAreAllOrNothingAndTheLogGroupsRepeats) {
  AclRegistry& r = AclRegistry::Get();
  std::string error;
  std::string_view good[] = {"on", ">pw", "+get"};
  ASSERT_TRUE(r.SetUser("t", good, &error));
  std::string_view bad[] = {"+set", "+nosuch"};
  EXPECT_FALSE(r.SetUser("t", bad, &error));
  EXPECT_EQ(error,
            "ERR Error in ACL SETUSER modifier '+nosuch': Unknown command or category "
            "name in ACL");
  EXPECT_EQ(r.Find("t")->DescribeCommands(), "-@all +get");
  EXPECT_NE(r.Authenticate("t", "pw"), nullptr);
  EXPECT_EQ(r.Authenticate("t", "no"), nullptr);
  std::string_view names[] = {"default"};
  EXPECT_EQ(r.DelUsers(names, &error), -1);
  std::string_view t[] = {"t", "nosuch"};
  EXPECT_EQ(r.DelUsers(t, &error), 1);

  r.ResetLog();
  auto entry = [](const char* object, int64_t ms) {
    AclRegistry::LogEntry e;
    e.reason = "command";
    e.context = "toplevel";
    e.object = object;
    e.username = "u";
    e.created_ms = ms;
    return e;
  };
  r.Log(entry("a", 1000), 3);
  r.Log(entry("b", 2000), 3);
  r.Log(entry("a", 3000), 3);  // a repeat: counted, and the newest
  std::vector<AclRegistry::LogEntry> log = r.LogEntries(10);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].object, "a");
  EXPECT_EQ(log[0].count, 2);
  r.Log(entry("a", 3000 + 61000), 3);  // over a minute later: an entry of its own
  r.Log(entry("c", 70000), 3);
  r.Log(entry("d", 70000), 3);
  log = r.LogEntries(10);
  ASSERT_EQ(log.size(), 3u);  // acllog-max-len
  EXPECT_EQ(log[0].object, "d");
  r.ResetLog();
  EXPECT_TRUE(r.LogEntries(10).empty());
}

}  // namespace
}  // namespace strata
