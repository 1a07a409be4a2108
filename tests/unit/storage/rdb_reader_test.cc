#include "storage/rdb_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/packed_list.h"
#include "core/set_type.h"
#include "core/zset_type.h"
#include "storage/rdb_format.h"
#include "storage/rdb_writer.h"

namespace strata::rdb {
namespace {

std::filesystem::path FixtureDir() {
  if (const char* d = std::getenv("STRATA_RDB_FIXTURES")) return d;
  return std::filesystem::path(STRATA_SOURCE_DIR) / ".." / "shared" / "rdb-fixtures";
}

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Loaded {
  std::string error;  // "" when the file read to its end
  int version = 0;
  bool checksum_verified = false;
  // "db:key" -> "kind:contents"
  std::map<std::string, std::string> keys;
  std::map<std::string, int64_t> expires;
  std::vector<std::string> aux;
  int functions = 0;
  int module_aux = 0;
  int slot_infos = 0;
  int empty = 0;
};

std::string Describe(const RdbValue& v) {
  std::vector<std::string> items;
  const std::string& d = v.data;
  switch (v.kind) {
    case RdbKind::kString:
      return "string:" + d;
    case RdbKind::kStream: {
      std::string s = "stream:";
      for (const auto& e : v.stream->entries) {
        s += e.id.ToString() + "{";
        for (const auto& [f, val] : e.fields) s += f + "=" + val + ",";
        s += "}";
      }
      s += " groups=" + std::to_string(v.stream->groups.size());
      return s;
    }
    case RdbKind::kModule:
      return "module:" + v.module_name;
    case RdbKind::kSet:
      if (!d.empty() && static_cast<uint8_t>(d[0]) == static_cast<uint8_t>(PackedTag::kIntSet)) {
        for (int64_t x : intset::Decode(d)) items.push_back(std::to_string(x));
        break;
      }
      [[fallthrough]];
    case RdbKind::kList:
    case RdbKind::kHash:
      for (packed::Reader r(d); !r.Done(); r.Next()) items.emplace_back(r.Item());
      if (v.kind == RdbKind::kHash) {
        std::vector<std::string> pairs;
        for (size_t i = 0; i + 1 < items.size(); i += 2)
          pairs.push_back(items[i] + "=" + items[i + 1]);
        items = pairs;
      }
      break;
    case RdbKind::kZSet: {
      std::vector<ZMember> z;
      zpacked::Decode(d, &z);
      for (const ZMember& m : z) {
        char buf[64];
        std::snprintf(buf, sizeof(buf), "%.17g", m.score);
        items.push_back(std::string(m.member) + "=" + buf);
      }
      break;
    }
  }
  if (v.kind != RdbKind::kList) std::sort(items.begin(), items.end());
  std::string s = RdbKindName(v.kind);
  s += ":";
  for (size_t i = 0; i < items.size(); i++) s += (i ? "," : "") + items[i];
  return s;
}

Loaded Load(std::string_view data, RdbReader::Options opts = {}) {
  Loaded l;
  RdbReader r(data, opts);
  if (!r.ReadHeader()) {
    l.error = r.error();
    return l;
  }
  l.version = r.version();
  RdbRecord rec;
  while (true) {
    if (!r.Next(&rec)) {
      l.error = r.error();
      return l;
    }
    switch (rec.kind) {
      case RdbRecord::Kind::kEnd:
        l.checksum_verified = r.checksum_verified();
        return l;
      case RdbRecord::Kind::kKey: {
        if (rec.empty) {
          l.empty++;
          break;
        }
        std::string k = std::to_string(rec.db) + ":" + rec.name;
        l.keys[k] = Describe(rec.value);
        if (rec.expire_ms >= 0) l.expires[k] = rec.expire_ms;
        break;
      }
      case RdbRecord::Kind::kAux:
        l.aux.push_back(rec.name + "=" + rec.text);
        break;
      case RdbRecord::Kind::kFunction:
        l.functions++;
        break;
      case RdbRecord::Kind::kModuleAux:
        l.module_aux++;
        break;
      case RdbRecord::Kind::kSlotInfo:
        l.slot_infos++;
        break;
      default:
        break;
    }
  }
}

class RdbFixtureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::is_directory(FixtureDir())) {
      GTEST_SKIP() << "no RDB fixtures at " << FixtureDir() << " (set STRATA_RDB_FIXTURES)";
    }
  }
  Loaded LoadFixture(const std::string& name, RdbReader::Options opts = {}) {
    return Load(ReadFile(FixtureDir() / name), opts);
  }
};

// Every fixture either reads to its end or is refused for the reason its README gives.
TEST_F(RdbFixtureTest, EveryFixtureLoadsOrIsRefusedAsDocumented) {
  const std::map<std::string, std::string> refused = {
      {"librdb/future_v19.rdb", "RDB version 99 is not one this reader knows"},
      {"librdb/invalid_chksum_v8.rdb", "wrong checksum"},
      {"librdb/redis_ent_opcode_ram_lru.rdb", "unknown opcode or value type 107"},
      // Module values and aux data: refused with the module's name...
      {"librdb/module.rdb", "module type 'test__rdb'"},
      {"librdb/module_aux.rdb", "module 'test__rdb'"},
      {"librdb/module_aux_empty.rdb", "module 'graphdata'"},
      {"librdb/module_aux_v12.rdb", "module 'test__rdb'"},
      {"librdb/misc_with_stream.rdb", "module 'test__rdb'"},
      {"rdbtools/redis_40_with_module.rdb", "module type 'ReJSON-RL'"},
      {"rdbtools/redis_60_with_module_aux.rdb", "module 'test__rdb'"},
  };
  int files = 0;
  for (const char* set : {"librdb", "rdbtools"}) {
    for (const auto& f : std::filesystem::directory_iterator(FixtureDir() / set)) {
      if (f.path().extension() != ".rdb") continue;
      std::string name = std::string(set) + "/" + f.path().filename().string();
      Loaded l = LoadFixture(name);
      files++;
      auto it = refused.find(name);
      if (it == refused.end()) {
        EXPECT_EQ(l.error, "") << name;
      } else {
        EXPECT_NE(l.error.find(it->second), std::string::npos) << name << ": " << l.error;
        EXPECT_NE(l.error.find("at byte "), std::string::npos) << name << ": " << l.error;
      }
    }
  }
  EXPECT_GE(files, 60);
}

// A reader that keeps no key steps over every value by its framing alone, to the same
// end; one that keeps every other key decodes those exactly as a full read does.
TEST_F(RdbFixtureTest, SkippedValuesAreSteppedOverByTheirFraming) {
  RdbReader::Options none;
  none.skip_modules = true;
  none.keep = [](uint32_t, std::string_view) { return false; };
  RdbReader::Options half;
  half.skip_modules = true;
  int n = 0;
  half.keep = [&n](uint32_t, std::string_view) { return n++ % 2 == 0; };
  RdbReader::Options all;
  all.skip_modules = true;
  for (const char* set : {"librdb", "rdbtools"}) {
    for (const auto& f : std::filesystem::directory_iterator(FixtureDir() / set)) {
      if (f.path().extension() != ".rdb") continue;
      std::string data = ReadFile(f.path());
      Loaded full = Load(data, all);
      if (!full.error.empty()) continue;
      Loaded skipped = Load(data, none);
      EXPECT_EQ(skipped.error, "") << f.path();
      EXPECT_TRUE(skipped.keys.empty());
      n = 0;
      Loaded some = Load(data, half);
      EXPECT_EQ(some.error, "") << f.path();
      for (const auto& [k, v] : some.keys) EXPECT_EQ(full.keys.at(k), v) << f.path() << " " << k;
    }
  }
}

// ... and read when module values are skipped.
TEST_F(RdbFixtureTest, ModuleValuesAreSkippedWhenAsked) {
  RdbReader::Options skip;
  skip.skip_modules = true;
  for (const char* name :
       {"librdb/module.rdb", "librdb/module_aux.rdb", "librdb/module_aux_empty.rdb",
        "librdb/misc_with_stream.rdb", "rdbtools/redis_40_with_module.rdb",
        "rdbtools/redis_60_with_module_aux.rdb"}) {
    Loaded l = LoadFixture(name, skip);
    EXPECT_EQ(l.error, "") << name;
  }
  Loaded l = LoadFixture("librdb/module_aux.rdb", skip);
  EXPECT_EQ(l.module_aux, 2);
  EXPECT_EQ(l.keys.at("9:x"), "string:1");
  EXPECT_EQ(LoadFixture("librdb/module.rdb", skip).keys.at("0:key1"), "module:test__rdb");
}

TEST_F(RdbFixtureTest, ChecksumsAreVerifiedOrHonouredOff) {
  EXPECT_TRUE(LoadFixture("librdb/single_key.rdb").checksum_verified);
  Loaded script = LoadFixture("librdb/script.rdb");  // rdbchecksum no: a zero footer
  EXPECT_EQ(script.error, "");
  EXPECT_FALSE(script.checksum_verified);
  RdbReader::Options off;
  off.verify_checksum = false;
  EXPECT_EQ(LoadFixture("librdb/invalid_chksum_v8.rdb", off).error, "");
}

TEST_F(RdbFixtureTest, ContentsOfEveryEncoding) {
  // Zipmap (RDB 2), ziplist hash (6), listpack hash (11).
  EXPECT_EQ(LoadFixture("librdb/hash_zm_v2.rdb").keys.size(), 1u);
  Loaded zm = LoadFixture("rdbtools/zipmap_that_compresses_easily.rdb");
  EXPECT_EQ(zm.keys.at("0:zipmap_compresses_easily"), "hash:a=aa,aa=aaaa,aaaaa=aaaaaaaaaaaaaa");
  Loaded big = LoadFixture("rdbtools/zipmap_with_big_values.rdb");
  EXPECT_NE(big.keys.at("0:zipmap_with_big_values").find("253bytes="), std::string::npos);
  // Intsets of each width.
  EXPECT_EQ(LoadFixture("rdbtools/intset_16.rdb").keys.at("0:intset_16"), "set:32764,32765,32766");
  EXPECT_EQ(LoadFixture("rdbtools/intset_32.rdb").keys.at("0:intset_32"),
            "set:2147418108,2147418109,2147418110");
  EXPECT_EQ(LoadFixture("rdbtools/intset_64.rdb").keys.at("0:intset_64"),
            "set:9223090557583032316,9223090557583032317,9223090557583032318");
  // Ziplists with integers of every width.
  std::string zl =
      LoadFixture("rdbtools/ziplist_with_integers.rdb").keys.at("0:ziplist_with_integers");
  for (const char* n : {"-2", "13", "25", "-61", "63", "16380", "-16000", "65535", "-65523",
                        "4194304", "9223372036854775807"}) {
    EXPECT_NE(zl.find(std::string(",") + n) == std::string::npos &&
                  zl.find(std::string(":") + n) == std::string::npos,
              true)
        << n << " in " << zl;
  }
  // Sorted sets: text scores (RDB 3 to 7), binary scores (8), ziplist, listpack.
  Loaded zs = LoadFixture("librdb/plain_zset_v6.rdb");
  std::string z = zs.keys.begin()->second;
  EXPECT_NE(z.find("a9=inf"), std::string::npos) << z;
  EXPECT_NE(z.find("a10=-inf"), std::string::npos) << z;
  EXPECT_NE(z.find("a12=-9007199254740992"), std::string::npos) << z;
  EXPECT_NE(z.find("a7=2.2000000000000002"), std::string::npos) << z;
  Loaded v8 = LoadFixture("rdbtools/rdb_version_8_with_64b_length_and_scores.rdb");
  EXPECT_EQ(v8.error, "");
  // Quicklists of ziplists (RDB 8) and of listpacks (11).
  EXPECT_EQ(LoadFixture("librdb/quicklist.rdb").keys.size(), 2u);
  EXPECT_EQ(LoadFixture("librdb/quicklist2_v11.rdb").error, "");
  // Strings: integer encodings and LZF.
  Loaded ints = LoadFixture("librdb/string_int_encoded.rdb");
  EXPECT_EQ(ints.keys.size(), 57u);
  Loaded lzf = LoadFixture("librdb/string_lzf.rdb");
  for (const auto& [k, v] : lzf.keys) EXPECT_GT(v.size(), 30u) << k;
  // Databases and expiry.
  Loaded dbs = LoadFixture("librdb/multiple_dbs.rdb");
  EXPECT_EQ(dbs.keys.at("0:x"), "string:0");
  EXPECT_EQ(dbs.keys.at("1:y"), "string:1");
  EXPECT_EQ(dbs.keys.at("2:z"), "string:2");
  Loaded exp = LoadFixture("rdbtools/keys_with_expiry.rdb");
  EXPECT_EQ(exp.expires.at("0:expires_ms_precision"), 1671963072573);
  // Functions, slot info.
  EXPECT_EQ(LoadFixture("librdb/function2.rdb").functions, 2);
  EXPECT_EQ(LoadFixture("librdb/cluster_slot_info.rdb").slot_infos, 1);
}

TEST_F(RdbFixtureTest, StreamsWithConsumerGroups) {
  Loaded s5 = LoadFixture("rdbtools/redis_50_with_streams.rdb");
  EXPECT_EQ(s5.error, "");
  Loaded s11 = LoadFixture("librdb/stream_v11.rdb");
  ASSERT_EQ(s11.error, "");
  ASSERT_EQ(s11.keys.size(), 1u);
  EXPECT_EQ(s11.keys.begin()->second.rfind("stream:", 0), 0u);
}

TEST_F(RdbFixtureTest, HashFieldExpiryDrafts) {
  std::string file = ReadFile(FixtureDir() / "librdb/hash_with_expire_v12.rdb");
  RdbReader r(file, {});
  ASSERT_TRUE(r.ReadHeader());
  RdbRecord rec;
  bool found = false;
  while (r.Next(&rec) && rec.kind != RdbRecord::Kind::kEnd) {
    if (rec.kind != RdbRecord::Kind::kKey) continue;
    found = true;
    EXPECT_EQ(Describe(rec.value), "hash:field1=value1,field2=value2,field3=value3");
    ASSERT_EQ(rec.value.field_expire_ms.size(), 3u);
    int with_ttl = 0;
    for (int64_t t : rec.value.field_expire_ms) with_ttl += t != 0;
    EXPECT_EQ(with_ttl, 2);
  }
  EXPECT_EQ(r.error(), "");
  EXPECT_TRUE(found);
}

std::string SmallFile(int version) {
  RdbWriter::Options o;
  o.encode.version = version;
  RdbWriter w(o);
  w.Header("7.0.0", 1700000000, 1000);
  w.SelectDb(0, 3, 1);
  w.Key(ValueType::kString, "k", "value", 1900000000000);
  packed::Builder b;
  b.Add("a");
  b.Add("1");
  w.Key(ValueType::kHash, "h", b.Finish(), -1);
  w.Key(ValueType::kSet, "s", intset::Encode({1, 2}), -1);
  w.SelectDb(5, 1, 0);
  std::vector<ZMember> z = {{"m", 1.5}};
  w.Key(ValueType::kZSet, "z", zpacked::Encode(z), -1, 30);
  w.Function("#!lua name=lib\nredis.register_function('f', function() return 1 end)");
  w.End();
  return w.TakeOutput();
}

TEST(RdbWriterTest, WritesWhatTheReaderReads) {
  for (int version : {10, 11, 12}) {
    Loaded l = Load(SmallFile(version));
    ASSERT_EQ(l.error, "") << version;
    EXPECT_EQ(l.version, version);
    EXPECT_TRUE(l.checksum_verified);
    EXPECT_EQ(l.keys.at("0:k"), "string:value");
    EXPECT_EQ(l.expires.at("0:k"), 1900000000000);
    EXPECT_EQ(l.keys.at("0:h"), "hash:a=1");
    EXPECT_EQ(l.keys.at("0:s"), "set:1,2");
    EXPECT_EQ(l.keys.at("5:z"), "zset:m=1.5");
    EXPECT_EQ(l.functions, 1);
  }
}

TEST(RdbWriterTest, StreamingOutputKeepsTheChecksum) {
  RdbWriter w({});
  std::string file;
  w.Header("7.0.0", 1, 1);
  file += w.TakeOutput();
  w.SelectDb(0, 100, 0);
  for (int i = 0; i < 100; i++) {
    w.Key(ValueType::kString, "key" + std::to_string(i), std::string(static_cast<size_t>(i), 'v'),
          -1);
    if (i % 7 == 0) file += w.TakeOutput();
  }
  w.End();
  file += w.TakeOutput();
  Loaded l = Load(file);
  EXPECT_EQ(l.error, "");
  EXPECT_TRUE(l.checksum_verified);
  EXPECT_EQ(l.keys.size(), 100u);
}

// Every flipped byte and every truncation of a small file is refused, with an offset.
TEST(RdbReaderTest, EveryFlippedByteAndTruncationIsRefused) {
  std::string file = SmallFile(10);
  ASSERT_EQ(RdbReader::Verify(file, {}), "");
  for (size_t i = 0; i < file.size(); i++) {
    for (int delta : {0x01, 0x80}) {
      std::string bad = file;
      bad[i] = static_cast<char>(bad[i] ^ delta);
      std::string err = RdbReader::Verify(bad, {});
      EXPECT_NE(err, "") << "byte " << i << " ^ " << delta;
    }
  }
  for (size_t n = 0; n < file.size(); n++) {
    std::string err = RdbReader::Verify(file.substr(0, n), {});
    EXPECT_NE(err, "") << "cut at " << n;
  }
  // With checksums off in the file, damage inside values is still caught or harmless,
  // and a cut is still refused.
  RdbWriter::Options nock;
  nock.checksum = false;
  RdbWriter w(nock);
  w.Header("7.0.0", 1, 1);
  w.SelectDb(0, 1, 0);
  w.Key(ValueType::kString, "k", "v", -1);
  w.End();
  std::string plain = w.TakeOutput();
  EXPECT_EQ(RdbReader::Verify(plain, {}), "");
  for (size_t n = 0; n + 8 < plain.size(); n++) {
    EXPECT_NE(RdbReader::Verify(plain.substr(0, n), {}), "") << n;
  }
  for (size_t i = 0; i < plain.size(); i++) {
    std::string bad = plain;
    bad[i] = static_cast<char>(bad[i] ^ 0xff);
    RdbReader::Verify(bad, {});  // must not crash or hang
  }
}

TEST(RdbReaderTest, HeadersOfRedisAndValkey) {
  EXPECT_NE(RdbReader::Verify("", {}).find("not an RDB file"), std::string::npos);
  EXPECT_NE(RdbReader::Verify("REDIS0013", {}).find("version 13"), std::string::npos);
  EXPECT_NE(RdbReader::Verify("REDIS00x1", {}).find("not an RDB file"), std::string::npos);
  // Valkey 9: "VALKEY080", the same records.
  std::string file = SmallFile(11);
  std::string valkey = "VALKEY080" + file.substr(9, file.size() - 9 - 8);
  valkey += std::string(8, '\0');  // checksum off
  Loaded l = Load(valkey);
  EXPECT_EQ(l.error, "");
  EXPECT_EQ(l.version, 80);
  EXPECT_EQ(l.keys.at("0:k"), "string:value");
  EXPECT_NE(RdbReader::Verify("VALKEY081", {}).find("Valkey RDB version 81"), std::string::npos);
}

}  // namespace
}  // namespace strata::rdb
