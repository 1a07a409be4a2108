// strata-dump's pure logic: the command line, filters, digests, the type-command
// fallback and the progress text.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/packed_list.h"
#include "core/set_type.h"
#include "core/zset_type.h"
#include "storage/dump_payload.h"
#include "storage/rdb_value.h"
#include "tools/strata-dump/cli.h"
#include "tools/strata-dump/digest.h"
#include "tools/strata-dump/filter.h"
#include "tools/strata-dump/plain_commands.h"
#include "tools/strata-dump/progress_line.h"

namespace strata::dump {
namespace {

// An item as a DUMP of the value would give it.
Item ItemOf(ValueType type, const std::string& data, rdb::EncodeOptions o = {}) {
  std::string p = rdb::MakeDumpPayload(type, data, o);
  Item it;
  it.key = "k";
  it.type_id = static_cast<uint8_t>(p[0]);
  it.value = p.substr(1, p.size() - 11);
  return it;
}

std::string Packed(const std::vector<std::string>& items) {
  packed::Builder b;
  for (const auto& s : items) b.Add(s);
  return b.Finish();
}

TEST(StrataDumpCliTest, VerbsAndOptions) {
  CliResult r = ParseCommandLine({"strata-dump", "restore", "f.rdb", "--to", "127.0.0.1:7000",
                                  "--replace", "--db-map", "0:3", "--db-map", "1:2",
                                  "--max-value-bytes", "2mb", "--match", "a*", "--type", "hash"});
  ASSERT_EQ(r.verb, CliResult::Verb::kRestore) << r.output;
  EXPECT_EQ(r.restore.input, "f.rdb");
  EXPECT_EQ(r.restore.to.port, 7000);
  EXPECT_TRUE(r.restore.replace);
  EXPECT_EQ(r.restore.db_map.at(0), 3u);
  EXPECT_EQ(r.restore.db_map.at(1), 2u);
  EXPECT_EQ(r.restore.max_value_bytes, 2u << 20);
  EXPECT_EQ(r.restore.common.filter.match, std::vector<std::string>{"a*"});
  EXPECT_EQ(r.restore.common.filter.types.count("hash"), 1u);

  EXPECT_EQ(ParseCommandLine({"strata-dump"}).exit_code, kExitUsage);
  EXPECT_EQ(ParseCommandLine({"strata-dump", "dump", "-o", "x"}).exit_code, kExitUsage);
  CliResult bad = ParseCommandLine({"strata-dump", "inspect", "f", "--type", "blob"});
  EXPECT_EQ(bad.exit_code, kExitUsage);
  EXPECT_NE(bad.output.find("unknown --type 'blob'"), std::string::npos);
  CliResult follow = ParseCommandLine(
      {"strata-dump", "copy", "--from", "a:1", "--to", "b:2", "--follow", "--resume"});
  EXPECT_EQ(follow.exit_code, kExitUsage);
  EXPECT_EQ(ParseCommandLine({"strata-dump", "--help"}).exit_code, 0);
}

TEST(StrataDumpCliTest, DbMapsAndSizes) {
  std::map<uint32_t, uint32_t> m;
  std::string err;
  EXPECT_TRUE(ParseDbMap({"0:1", "15:0"}, &m, &err));
  EXPECT_EQ(m.at(15), 0u);
  EXPECT_FALSE(ParseDbMap({"0-1"}, &m, &err));
  EXPECT_FALSE(ParseDbMap({"a:1"}, &m, &err));
  uint64_t v = 0;
  EXPECT_TRUE(ParseBytes("64mb", &v));
  EXPECT_EQ(v, 64u << 20);
  EXPECT_TRUE(ParseBytes("1KB", &v));
  EXPECT_EQ(v, 1024u);
  EXPECT_TRUE(ParseBytes("77", &v));
  EXPECT_EQ(v, 77u);
  EXPECT_FALSE(ParseBytes("lots", &v));
}

TEST(StrataDumpFilterTest, MatchTypeDbAndExpiry) {
  Filter f;
  Item it = ItemOf(ValueType::kString, "v");
  it.key = "user:1";
  EXPECT_TRUE(f.Keeps(it, 0));
  f.match = {"session:*", "user:*"};
  EXPECT_TRUE(f.Keeps(it, 0));
  it.key = "other";
  EXPECT_FALSE(f.Keeps(it, 0));
  f.match.clear();
  f.types = {"hash"};
  EXPECT_FALSE(f.Keeps(it, 0));
  f.types = {"string"};
  EXPECT_TRUE(f.Keeps(it, 0));
  f.dbs = {2};
  EXPECT_FALSE(f.Keeps(it, 0));
  it.db = 2;
  EXPECT_TRUE(f.Keeps(it, 0));
  f.exclude_expired = true;
  it.expire_ms = 100;
  EXPECT_FALSE(f.Keeps(it, 200));
  EXPECT_TRUE(f.Keeps(it, 50));
}

TEST(StrataDumpDigestTest, TheSameDataInDifferentEncodingsHasOneDigest) {
  // A hash as a listpack and as a plain hash (small limits force the second).
  std::string h = Packed({"a", "1", "b", "2"});
  rdb::EncodeOptions big;
  big.hash_max_listpack_entries = 0;
  big.set_max_intset_entries = 0;
  big.zset_max_listpack_entries = 0;
  KeyDigest d1, d2, d3;
  std::string err;
  ASSERT_TRUE(DigestOf(ItemOf(ValueType::kHash, h), &d1, &err)) << err;
  ASSERT_TRUE(DigestOf(ItemOf(ValueType::kHash, h, big), &d2, &err)) << err;
  ASSERT_TRUE(DigestOf(ItemOf(ValueType::kHash, Packed({"b", "2", "a", "1"})), &d3, &err));
  EXPECT_EQ(d1.hash, d2.hash);
  EXPECT_EQ(d1.hash, d3.hash);  // field order does not matter
  EXPECT_EQ(d1.type, "hash");
  KeyDigest d4;
  ASSERT_TRUE(DigestOf(ItemOf(ValueType::kHash, Packed({"a", "1", "b", "3"})), &d4, &err));
  EXPECT_NE(d1.hash, d4.hash);
  // An intset and a plain set of the same members.
  KeyDigest s1, s2;
  ASSERT_TRUE(DigestOf(ItemOf(ValueType::kSet, intset::Encode({1, 2, 3})), &s1, &err));
  ASSERT_TRUE(DigestOf(ItemOf(ValueType::kSet, intset::Encode({1, 2, 3}), big), &s2, &err));
  EXPECT_EQ(s1.hash, s2.hash);
  // A list's order matters.
  KeyDigest l1, l2;
  ASSERT_TRUE(DigestOf(ItemOf(ValueType::kList, Packed({"a", "b"})), &l1, &err));
  ASSERT_TRUE(DigestOf(ItemOf(ValueType::kList, Packed({"b", "a"})), &l2, &err));
  EXPECT_NE(l1.hash, l2.hash);
  // A sorted set in a listpack and in ZSET_2.
  std::vector<ZMember> z = {{"x", 1.5}, {"y", 7}};
  KeyDigest z1, z2;
  ASSERT_TRUE(DigestOf(ItemOf(ValueType::kZSet, zpacked::Encode(z)), &z1, &err));
  ASSERT_TRUE(DigestOf(ItemOf(ValueType::kZSet, zpacked::Encode(z), big), &z2, &err));
  EXPECT_EQ(z1.hash, z2.hash);
  // Damage is an error, not a digest.
  Item broken = ItemOf(ValueType::kString, "hello");
  broken.value[0] = 0x7f;
  KeyDigest bd;
  EXPECT_FALSE(DigestOf(broken, &bd, &err));
}

TEST(StrataDumpPlainCommandsTest, ChunksAndExpiry) {
  std::vector<std::string> elems;
  for (int i = 0; i < 1000; i++) elems.push_back("element-" + std::to_string(i));
  Item it = ItemOf(ValueType::kList, Packed(elems));
  it.expire_ms = 123456;
  std::vector<Command> cmds;
  std::string err;
  ASSERT_TRUE(PlainCommands(it, true, 1000, &cmds, &err)) << err;
  EXPECT_EQ(cmds.front(), (Command{"DEL", "k"}));
  EXPECT_EQ(cmds.back(), (Command{"PEXPIREAT", "k", "123456"}));
  size_t pushed = 0;
  for (size_t i = 1; i + 1 < cmds.size(); i++) {
    EXPECT_EQ(cmds[i][0], "RPUSH");
    size_t bytes = 0;
    for (size_t j = 2; j < cmds[i].size(); j++) bytes += cmds[i][j].size() + 16;
    EXPECT_LE(bytes, 1000u);
    pushed += cmds[i].size() - 2;
  }
  EXPECT_EQ(pushed, 1000u);
  EXPECT_GT(cmds.size(), 10u);
  // A big string: SET then APPENDs.
  cmds.clear();
  ASSERT_TRUE(
      PlainCommands(ItemOf(ValueType::kString, std::string(2500, 'x')), false, 1000, &cmds, &err));
  ASSERT_EQ(cmds.size(), 3u);
  EXPECT_EQ(cmds[0][0], "SET");
  EXPECT_EQ(cmds[1][0], "APPEND");
  EXPECT_EQ(cmds[0][2].size() + cmds[1][2].size() + cmds[2][2].size(), 2500u);
}

TEST(StrataDumpPlainCommandsTest, StreamAsRedisRewritesIt) {
  rdb::RdbStream st;
  st.entries.push_back({{5, 1}, {{"f", "a"}}});
  st.entries.push_back({{6, 0}, {{"f", "b"}, {"g", "c"}}});
  st.length = 2;
  st.first_id = {5, 1};
  st.last_id = {9, 0};
  st.max_deleted_id = {9, 0};
  st.entries_added = 3;
  rdb::RdbStream::Group g;
  g.name = "grp";
  g.last_id = {6, 0};
  g.entries_read = 3;
  g.pel.push_back({{5, 1}, 1700000000000, 4});
  rdb::RdbStream::Consumer alice;
  alice.name = "alice";
  alice.seen_ms = 1700000000000;
  alice.pending.push_back({5, 1});
  rdb::RdbStream::Consumer idle;
  idle.name = "idle";
  idle.seen_ms = 1700000000000;
  g.consumers.push_back(alice);
  g.consumers.push_back(idle);
  st.groups.push_back(g);
  std::string data, why;
  ASSERT_TRUE(rdb::StreamCanonicalForm(st, &data, &why)) << why;
  Item it = ItemOf(ValueType::kStream, data);
  std::vector<Command> cmds;
  std::string err;
  ASSERT_TRUE(PlainCommands(it, false, 1000, &cmds, &err)) << err;
  std::vector<Command> want = {
      {"XADD", "k", "5-1", "f", "a"},
      {"XADD", "k", "6-0", "f", "b", "g", "c"},
      {"XSETID", "k", "9-0", "ENTRIESADDED", "3", "MAXDELETEDID", "9-0"},
      {"XGROUP", "CREATE", "k", "grp", "6-0", "ENTRIESREAD", "3"},
      {"XCLAIM", "k", "grp", "alice", "0", "5-1", "TIME", "1700000000000", "RETRYCOUNT", "4",
       "JUSTID", "FORCE"},
      {"XGROUP", "CREATECONSUMER", "k", "grp", "idle"},
  };
  EXPECT_EQ(cmds, want);
  // An empty stream is made by the MAXLEN 0 trick, then given its last ID.
  rdb::RdbStream empty;
  empty.last_id = {7, 7};
  empty.max_deleted_id = {7, 7};
  empty.entries_added = 1;
  ASSERT_TRUE(rdb::StreamCanonicalForm(empty, &data, &why)) << why;
  cmds.clear();
  ASSERT_TRUE(PlainCommands(ItemOf(ValueType::kStream, data), false, 1000, &cmds, &err)) << err;
  ASSERT_EQ(cmds.size(), 2u);
  EXPECT_EQ(cmds[0], (Command{"XADD", "k", "MAXLEN", "0", "0-1", "x", "y"}));
  EXPECT_EQ(cmds[1], (Command{"XSETID", "k", "7-7", "ENTRIESADDED", "1", "MAXDELETEDID", "7-7"}));
}

TEST(StrataDumpItemTest, RestoreCommandCarriesThePayload) {
  Item it = ItemOf(ValueType::kString, "hello");
  it.key = "the key";
  it.expire_ms = 1700000000123;
  it.idle_s = 7;
  std::string cmd;
  it.AppendRestore(true, &cmd);
  std::string p = it.Payload();
  std::string want = "*8\r\n$7\r\nRESTORE\r\n$7\r\nthe key\r\n$13\r\n1700000000123\r\n$" +
                     std::to_string(p.size()) + "\r\n" + p +
                     "\r\n$6\r\nABSTTL\r\n$7\r\nREPLACE\r\n$8\r\nIDLETIME\r\n$1\r\n7\r\n";
  EXPECT_EQ(cmd, want);
  rdb::RdbValue v;
  std::string err;
  EXPECT_EQ(rdb::ParseDumpPayload(p, {}, &v, &err), rdb::PayloadStatus::kOk) << err;
  EXPECT_EQ(v.data, "hello");
  cmd.clear();
  it.expire_ms = -1;
  it.idle_s = -1;
  it.AppendRestore(false, &cmd);
  EXPECT_EQ(cmd.rfind("*4\r\n$7\r\nRESTORE\r\n$7\r\nthe key\r\n$1\r\n0\r\n", 0), 0u) << cmd;
}

TEST(StrataDumpProgressTest, Format) {
  std::string s = ProgressLine::Format("restore", 50, 100, 1000, 2048, 2.0, true);
  EXPECT_NE(s.find("[##########          ]"), std::string::npos) << s;
  EXPECT_NE(s.find("50%"), std::string::npos) << s;
  EXPECT_NE(s.find("1000 keys, 2.0 KiB, 500 keys/s"), std::string::npos) << s;
  EXPECT_NE(s.find("ETA 0:02"), std::string::npos) << s;
  std::string plain = ProgressLine::Format("copy", 10, 0, 10, 0, 1.0, false);
  EXPECT_EQ(plain.find('['), std::string::npos);
}

}  // namespace
}  // namespace strata::dump
