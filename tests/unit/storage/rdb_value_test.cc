#include "storage/rdb_value.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/object.h"
#include "core/packed_list.h"
#include "core/set_type.h"
#include "core/zset_type.h"
#include "storage/crc64.h"
#include "storage/dump_payload.h"
#include "storage/rdb_containers.h"
#include "storage/rdb_format.h"

namespace strata::rdb {
namespace {

std::string Hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// A value's contents as strings: a string's bytes; a list's elements in order; a hash's
// field=value pairs, a set's members and a sorted set's member=score, sorted.
std::vector<std::string> Contents(ValueType type, const std::string& data) {
  std::vector<std::string> out;
  if (type == ValueType::kString) return {data};
  if (type == ValueType::kSet && !data.empty() &&
      static_cast<uint8_t>(data[0]) == static_cast<uint8_t>(PackedTag::kIntSet)) {
    for (int64_t v : intset::Decode(data)) out.push_back(std::to_string(v));
  } else if (type == ValueType::kZSet) {
    std::vector<ZMember> items;
    zpacked::Decode(data, &items);
    for (const ZMember& m : items) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%.17g", m.score);
      out.push_back(std::string(m.member) + "=" + buf);
    }
  } else {
    std::vector<std::string> items;
    for (packed::Reader r(data); !r.Done(); r.Next()) items.emplace_back(r.Item());
    if (type == ValueType::kHash) {
      for (size_t i = 0; i + 1 < items.size(); i += 2) out.push_back(items[i] + "=" + items[i + 1]);
    } else {
      out = items;
    }
  }
  if (type != ValueType::kList) std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> V(std::initializer_list<const char*> l) {
  std::vector<std::string> v;
  for (const char* s : l) v.emplace_back(s);
  return v;
}

RdbValue Parse(const std::string& payload) {
  RdbValue v;
  std::string err;
  EXPECT_EQ(ParseDumpPayload(payload, {}, &v, &err), PayloadStatus::kOk) << err;
  return v;
}

// Payloads written by redis-server 7.0.15's DUMP.
TEST(DumpPayloadTest, ReadsRedis7Payloads) {
  struct Case {
    const char* hex;
    RdbKind kind;
    std::vector<std::string> contents;
  };
  std::vector<Case> cases = {
      {"000568656c6c6f0a006372df766534200a", RdbKind::kString, V({"hello"})},
      {"00c139300a009d94ea2793fc08b9", RdbKind::kString, V({"12345"})},
      {"00c3094064017878e057000178780a005db7f663bb08625f",
       RdbKind::kString,
       {std::string(100, 'x')}},
      {"1201020f0f00000003008161028162020701ff0a00a4d57d137e93439c", RdbKind::kList,
       V({"a", "b", "7"})},
      {"0b0e02000000030000000100020003000a00a5025ce26d6e4d1b", RdbKind::kSet, V({"1", "2", "3"})},
      {"0202016101620a00fe642125eb033d0d", RdbKind::kSet, V({"a", "b"})},
      {"1114140000000400816102010181620283322e3504ff0a00d44c6ea4f644d9d7", RdbKind::kZSet,
       V({"a=1", "b=2.5"})},
      {"1012120000000400816602817602816e020101ff0a00fce408f17922e016", RdbKind::kHash,
       V({"f=v", "n=1"})},
      {"0502016200000000000004400161000000000000f03f0a00f46eb73919767291", RdbKind::kZSet,
       V({"a=1", "b=2.5"})},
      {"0401016601760a00adf24356b1860efc", RdbKind::kHash, V({"f=v"})},
      {"0202c00101780a002d1a8a175e6e4bd2", RdbKind::kSet, V({"1", "x"})},
  };
  for (const Case& c : cases) {
    RdbValue v = Parse(Hex(c.hex));
    EXPECT_EQ(v.kind, c.kind) << c.hex;
    EXPECT_EQ(Contents(v.value_type(), v.data), c.contents) << c.hex;
  }
}

TEST(DumpPayloadTest, ReadsARedis7StreamWithAGroupAndPel) {
  // XADD st 1-1 f v; XGROUP CREATE st g 0; XREADGROUP GROUP g c STREAMS st >
  RdbValue v = Parse(Hex(
      "130110000000000000000100000000000000011d1d0000000a0001010001010181660200010201000100018176"
      "020401ff010101010100000101016701010101000000000000000100000000000000011e6df433a20100000101"
      "01631e6df433a201000001000000000000000100000000000000010a00f7bd8a36695c74ac"));
  ASSERT_EQ(v.kind, RdbKind::kStream);
  const RdbStream& s = *v.stream;
  ASSERT_EQ(s.entries.size(), 1u);
  EXPECT_EQ(s.entries[0].id.ToString(), "1-1");
  ASSERT_EQ(s.entries[0].fields.size(), 1u);
  EXPECT_EQ(s.entries[0].fields[0].first, "f");
  EXPECT_EQ(s.entries[0].fields[0].second, "v");
  EXPECT_EQ(s.last_id.ToString(), "1-1");
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(s.groups[0].name, "g");
  EXPECT_EQ(s.groups[0].last_id.ToString(), "1-1");
  EXPECT_EQ(s.groups[0].entries_read, 1);
  ASSERT_EQ(s.groups[0].pel.size(), 1u);
  EXPECT_EQ(s.groups[0].pel[0].delivery_count, 1u);
  ASSERT_EQ(s.groups[0].consumers.size(), 1u);
  EXPECT_EQ(s.groups[0].consumers[0].name, "c");
  ASSERT_EQ(s.groups[0].consumers[0].pending.size(), 1u);
}

// Where Redis 7.0 writes a listpack or quicklist, strata writes the same value bytes.
TEST(DumpPayloadTest, CompactEncodingsMatchRedisByteForByte) {
  auto body = [](const std::string& hex) {
    std::string p = Hex(hex);
    return p.substr(0, p.size() - 10);
  };
  auto ours = [](ValueType t, const std::string& data) {
    std::string out;
    EncodeValue(t, data, EncodeOptions{}, &out);
    return out;
  };
  packed::Builder list;
  for (const char* e : {"a", "b", "7"}) list.Add(e);
  EXPECT_EQ(ours(ValueType::kList, list.Finish()),
            body("1201020f0f00000003008161028162020701ff0a00a4d57d137e93439c"));
  packed::Builder hash;
  for (const char* e : {"f", "v", "n", "1"}) hash.Add(e);
  EXPECT_EQ(ours(ValueType::kHash, hash.Finish()),
            body("1012120000000400816602817602816e020101ff0a00fce408f17922e016"));
  std::vector<ZMember> z = {{"a", 1}, {"b", 2.5}};
  EXPECT_EQ(ours(ValueType::kZSet, zpacked::Encode(z)),
            body("1114140000000400816102010181620283322e3504ff0a00d44c6ea4f644d9d7"));
  EXPECT_EQ(ours(ValueType::kSet, intset::Encode({1, 2, 3})),
            body("0b0e02000000030000000100020003000a00a5025ce26d6e4d1b"));
  EXPECT_EQ(ours(ValueType::kString, "hello"), body("000568656c6c6f0a006372df766534200a"));
  EXPECT_EQ(ours(ValueType::kString, "12345"), body("00c139300a009d94ea2793fc08b9"));
}

TEST(DumpPayloadTest, VersionIsTheLowestThatDefinesTheType) {
  auto version = [](const std::string& p) {
    return static_cast<uint8_t>(p[p.size() - 10]) | static_cast<uint8_t>(p[p.size() - 9]) << 8;
  };
  EXPECT_EQ(version(MakeDumpPayload(ValueType::kString, "x", {})), 6);
  EXPECT_EQ(version(MakeDumpPayload(ValueType::kSet, intset::Encode({5}), {})), 6);
  packed::Builder b;
  b.Add("a");
  std::string l = b.Finish();
  EXPECT_EQ(version(MakeDumpPayload(ValueType::kList, l, {})), 10);
  EXPECT_EQ(version(MakeDumpPayload(ValueType::kSet, l, {})), 6);  // SET, as Redis 7.0 writes
  EncodeOptions v11;
  v11.version = 11;
  EXPECT_EQ(version(MakeDumpPayload(ValueType::kSet, l, v11)), 11);  // SET_LISTPACK
}

std::string PackedOf(const std::vector<std::string>& items) {
  packed::Builder b;
  for (const std::string& s : items) b.Add(s);
  return b.Finish();
}

struct Sample {
  ValueType type;
  std::string data;
  const char* what;
};

std::vector<Sample> Samples() {
  std::vector<Sample> s;
  s.push_back({ValueType::kString, "", "empty string"});
  s.push_back({ValueType::kString, "-42", "int string"});
  s.push_back({ValueType::kString, "2147483648", "past int32"});
  s.push_back({ValueType::kString, "007", "leading zero"});
  s.push_back({ValueType::kString, std::string(5000, 'a'), "compressible"});
  std::string bin;
  std::mt19937 rng(1);
  for (int i = 0; i < 3000; i++) bin.push_back(static_cast<char>(rng()));
  s.push_back({ValueType::kString, bin, "binary"});
  std::vector<std::string> small = {"a",
                                    "1",
                                    "-7",
                                    "4096",
                                    "-4097",
                                    "70000",
                                    "-9000000",
                                    "3000000000",
                                    "9223372036854775807",
                                    "-9223372036854775808",
                                    std::string(100, 'q'),
                                    std::string(5000, 'r'),
                                    ""};
  s.push_back({ValueType::kList, PackedOf(small), "list of every listpack encoding"});
  std::vector<std::string> many;
  for (int i = 0; i < 3000; i++) many.push_back("element-" + std::to_string(i));
  s.push_back({ValueType::kList, PackedOf(many), "list over several nodes"});
  std::vector<std::string> pairs;
  for (int i = 0; i < 10; i++) {
    pairs.push_back("f" + std::to_string(i));
    pairs.push_back(std::to_string(i * 1000));
  }
  s.push_back({ValueType::kHash, PackedOf(pairs), "small hash"});
  std::vector<std::string> bigpairs;
  for (int i = 0; i < 600; i++) {
    bigpairs.push_back("field:" + std::to_string(i));
    bigpairs.push_back(std::string(static_cast<size_t>(i % 90), 'v'));
  }
  s.push_back({ValueType::kHash, PackedOf(bigpairs), "big hash"});
  s.push_back({ValueType::kSet, intset::Encode({-70000, -3, 0, 5, 1LL << 40}), "intset"});
  s.push_back({ValueType::kSet, PackedOf({"x", "1", "yy"}), "small set"});
  std::vector<std::string> members;
  for (int i = 0; i < 700; i++) members.push_back("m" + std::to_string(i));
  s.push_back({ValueType::kSet, PackedOf(members), "big set"});
  std::vector<ZMember> z = {{"neg-inf", -std::numeric_limits<double>::infinity()},
                            {"tiny", 5e-324},
                            {"zero", 0},
                            {"tenth", 0.1},
                            {"int", 123456},
                            {"big-int", 9007199254740992.0},
                            {"huge", 1e300},
                            {"inf", std::numeric_limits<double>::infinity()}};
  std::sort(z.begin(), z.end(), ZLess);
  s.push_back({ValueType::kZSet, zpacked::Encode(z), "small zset with special scores"});
  std::vector<std::string> zm;
  for (int i = 0; i < 300; i++) zm.push_back("member" + std::to_string(i));
  std::vector<ZMember> bigz;
  for (int i = 0; i < 300; i++) bigz.push_back({zm[static_cast<size_t>(i)], i * 0.37 - 50});
  std::sort(bigz.begin(), bigz.end(), ZLess);
  s.push_back({ValueType::kZSet, zpacked::Encode(bigz), "big zset"});
  return s;
}

TEST(DumpPayloadTest, EveryTypeRoundTrips) {
  for (int version : {10, 11}) {
    for (bool compression : {true, false}) {
      EncodeOptions o;
      o.version = version;
      o.compression = compression;
      for (const Sample& s : Samples()) {
        std::string p = MakeDumpPayload(s.type, s.data, o);
        RdbValue v = Parse(p);
        ASSERT_EQ(v.value_type(), s.type) << s.what;
        EXPECT_EQ(Contents(v.value_type(), v.data), Contents(s.type, s.data))
            << s.what << " version " << version << " compression " << compression;
      }
    }
  }
}

TEST(DumpPayloadTest, FooterErrorsAndDataErrorsAreTold) {
  std::string p = MakeDumpPayload(ValueType::kString, "hello", {});
  RdbValue v;
  std::string err;
  EXPECT_EQ(ParseDumpPayload("short", {}, &v, &err), PayloadStatus::kBadFooter);
  std::string bad_crc = p;
  bad_crc.back() ^= 1;
  EXPECT_EQ(ParseDumpPayload(bad_crc, {}, &v, &err), PayloadStatus::kBadFooter);
  // A newer version than any reader knows, with a right checksum.
  auto refoot = [](std::string body, int version) {
    AppendLE(&body, static_cast<uint64_t>(version), 2);
    AppendLE(&body, crc64::Value(body), 8);
    return body;
  };
  std::string body = p.substr(0, p.size() - 10);
  EXPECT_EQ(ParseDumpPayload(refoot(body, 13), {}, &v, &err), PayloadStatus::kBadFooter);
  EXPECT_EQ(ParseDumpPayload(refoot(body, 12), {}, &v, &err), PayloadStatus::kOk);
  // Trailing bytes, an unknown type, an empty collection: bad data.
  EXPECT_EQ(ParseDumpPayload(refoot(body + "x", 10), {}, &v, &err), PayloadStatus::kBadData);
  EXPECT_NE(err.find("before the footer"), std::string::npos) << err;
  EXPECT_EQ(ParseDumpPayload(refoot(Hex("0801"), 10), {}, &v, &err), PayloadStatus::kBadData);
  EXPECT_EQ(ParseDumpPayload(refoot(Hex("0100"), 10), {}, &v, &err), PayloadStatus::kBadData);
  EXPECT_NE(err.find("empty"), std::string::npos) << err;
  // Duplicates: a set member, a hash field, a sorted-set member; a NaN score.
  EXPECT_EQ(ParseDumpPayload(refoot(Hex("0202016101"
                                        "61"),
                                    10),
                             {}, &v, &err),
            PayloadStatus::kBadData);
  EXPECT_NE(err.find("duplicate"), std::string::npos) << err;
  EXPECT_EQ(ParseDumpPayload(refoot(Hex("0402016601760166017"
                                        "6"),
                                    10),
                             {}, &v, &err),
            PayloadStatus::kBadData);
  std::string nan_zset =
      Hex("050101"
          "61");
  AppendBinaryDouble(&nan_zset, std::nan(""));
  EXPECT_EQ(ParseDumpPayload(refoot(nan_zset, 10), {}, &v, &err), PayloadStatus::kBadData);
}

// Every single-byte change of a payload, with the checksum fixed up so that the value
// decoder sees it, and every truncation: refused or decoded, never a crash (the
// sanitizer build runs this too).
TEST(DumpPayloadTest, DamagedValuesAreRefusedNotTrusted) {
  for (const Sample& s : Samples()) {
    if (s.data.size() > 2000) continue;
    std::string p = MakeDumpPayload(s.type, s.data, {});
    std::string body = p.substr(0, p.size() - 10);
    for (size_t i = 0; i < body.size(); i++) {
      for (int delta : {1, 0x80, 0xff}) {
        std::string b = body;
        b[i] = static_cast<char>(b[i] ^ delta);
        AppendLE(&b, 10, 2);
        AppendLE(&b, crc64::Value(b), 8);
        RdbValue v;
        std::string err;
        PayloadStatus st = ParseDumpPayload(b, {}, &v, &err);
        if (st != PayloadStatus::kOk) {
          EXPECT_FALSE(err.empty());
        }
      }
    }
    for (size_t n = 0; n < body.size(); n++) {
      std::string b = body.substr(0, n);
      AppendLE(&b, 10, 2);
      AppendLE(&b, crc64::Value(b), 8);
      RdbValue v;
      std::string err;
      EXPECT_NE(ParseDumpPayload(b, {}, &v, &err), PayloadStatus::kOk) << s.what << " cut at " << n;
    }
    // A flipped byte with the original checksum is always caught.
    for (size_t i = 0; i < p.size(); i++) {
      std::string b = p;
      b[i] = static_cast<char>(b[i] ^ 0x10);
      RdbValue v;
      std::string err;
      EXPECT_NE(ParseDumpPayload(b, {}, &v, &err), PayloadStatus::kOk) << s.what << " byte " << i;
    }
  }
}

TEST(RdbContainersTest, ListpackIntegersTakeTheirNarrowestEncoding) {
  struct Case {
    int64_t v;
    size_t entry_bytes;  // encoding + data + back length
  };
  for (Case c :
       {Case{0, 2}, Case{127, 2}, Case{128, 3}, Case{-4096, 3}, Case{4095, 3}, Case{4096, 4},
        Case{-32768, 4}, Case{32768, 5}, Case{-8388608, 5}, Case{8388608, 6}, Case{INT32_MIN, 6},
        Case{int64_t{1} << 31, 10}, Case{INT64_MIN, 10}}) {
    ListpackBuilder b;
    b.AddInt(c.v);
    std::string lp = b.Finish();
    EXPECT_EQ(lp.size(), 6 + c.entry_bytes + 1) << c.v;
    std::vector<PackedItem> items;
    std::string err;
    ASSERT_TRUE(DecodeListpack(lp, &items, &err)) << err;
    ASSERT_EQ(items.size(), 1u);
    EXPECT_TRUE(items[0].is_int);
    EXPECT_EQ(items[0].num, c.v);
  }
}

TEST(RdbContainersTest, ListpackStringsOfEveryHeaderWidthAndLongBackLengths) {
  ListpackBuilder b;
  std::vector<std::string> strs = {"",
                                   "x",
                                   std::string(63, 'a'),
                                   std::string(64, 'b'),
                                   std::string(4095, 'c'),
                                   std::string(4096, 'd'),
                                   std::string(20000, 'e'),
                                   "01",
                                   "-0",
                                   "+1",
                                   " 1"};
  for (const std::string& s : strs) b.Add(s);
  std::string lp = b.Finish();
  std::vector<PackedItem> items;
  std::string err;
  ASSERT_TRUE(DecodeListpack(lp, &items, &err)) << err;
  ASSERT_EQ(items.size(), strs.size());
  for (size_t i = 0; i < strs.size(); i++) {
    EXPECT_FALSE(items[i].is_int) << strs[i];
    EXPECT_EQ(items[i].str, strs[i]);
  }
  // Damage is told with the offset.
  std::string bad = lp;
  bad[bad.size() - 2] ^= 0x7f;  // the last back length
  items.clear();
  EXPECT_FALSE(DecodeListpack(bad, &items, &err));
  EXPECT_NE(err.find("at byte"), std::string::npos);
  bad = lp;
  bad[4] = 3;  // the count
  items.clear();
  EXPECT_FALSE(DecodeListpack(bad, &items, &err));
}

TEST(RdbContainersTest, ZiplistEveryEncoding) {
  // Built by hand: "ab" (6-bit), 300 bytes (14-bit), ints 12 (immediate), -100 (int8),
  // 1000 (int16), 100000 (int24), 1<<30 (int32), 1<<40 (int64).
  std::string entries;
  std::vector<size_t> lens;
  auto add = [&](const std::string& enc_and_data) {
    size_t prev = lens.empty() ? 0 : lens.back();
    std::string e;
    if (prev < 254) {
      e.push_back(static_cast<char>(prev));
    } else {
      e.push_back(static_cast<char>(254));
      AppendLE(&e, prev, 4);
    }
    e += enc_and_data;
    lens.push_back(e.size());
    entries += e;
  };
  add(std::string("\x02") + "ab");
  add(std::string("\x41\x2c") + std::string(300, 'z'));
  add("\xfd");
  add(std::string("\xfe") + static_cast<char>(-100));
  std::string i16 = "\xc0";
  AppendLE(&i16, 1000, 2);
  add(i16);
  std::string i24 = "\xf0";
  AppendLE(&i24, 100000, 3);
  add(i24);
  std::string i32 = "\xd0";
  AppendLE(&i32, 1u << 30, 4);
  add(i32);
  std::string i64 = "\xe0";
  AppendLE(&i64, uint64_t{1} << 40, 8);
  add(i64);
  std::string zl;
  size_t total = 10 + entries.size() + 1;
  AppendLE(&zl, total, 4);
  AppendLE(&zl, total - 1 - lens.back(), 4);
  AppendLE(&zl, lens.size(), 2);
  zl += entries;
  zl.push_back(static_cast<char>(0xff));
  std::vector<PackedItem> items;
  std::string err;
  ASSERT_TRUE(DecodeZiplist(zl, &items, &err)) << err;
  ASSERT_EQ(items.size(), 8u);
  EXPECT_EQ(items[0].str, "ab");
  EXPECT_EQ(items[1].str, std::string(300, 'z'));
  std::vector<int64_t> want = {12, -100, 1000, 100000, 1 << 30, int64_t{1} << 40};
  for (size_t i = 0; i < want.size(); i++) EXPECT_EQ(items[2 + i].num, want[i]);
  // A wrong prevlen, a wrong tail, a cut: refused.
  std::string bad = zl;
  bad[10 + lens[0]] = 7;
  items.clear();
  EXPECT_FALSE(DecodeZiplist(bad, &items, &err));
  bad = zl;
  bad[4] ^= 1;
  items.clear();
  EXPECT_FALSE(DecodeZiplist(bad, &items, &err));
  for (size_t n = 0; n < zl.size(); n++) {
    items.clear();
    EXPECT_FALSE(DecodeZiplist(zl.substr(0, n), &items, &err)) << n;
  }
}

TEST(RdbContainersTest, IntsetWidthsAndOrder) {
  for (auto vals : {std::vector<int64_t>{-5, 7}, std::vector<int64_t>{-40000, 1},
                    std::vector<int64_t>{1, int64_t{1} << 33}}) {
    std::string blob = EncodeIntset(vals);
    std::vector<int64_t> back;
    std::string err;
    ASSERT_TRUE(DecodeIntset(blob, &back, &err)) << err;
    EXPECT_EQ(back, vals);
  }
  std::string unordered = EncodeIntset({1, 2});
  std::swap(unordered[8], unordered[10]);
  std::vector<int64_t> back;
  std::string err;
  EXPECT_FALSE(DecodeIntset(unordered, &back, &err));
  EXPECT_NE(err.find("ascending"), std::string::npos);
}

TEST(RdbFormatTest, ModuleNamesFromIds) {
  // Encode "ReJSON-RL" with encoding version 3 as Redis does.
  const std::string cs = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  uint64_t id = 0;
  for (char c : std::string("ReJSON-RL")) id = id << 6 | cs.find(c);
  id = id << 10 | 3;
  EXPECT_EQ(ModuleTypeName(id), "ReJSON-RL");
}

}  // namespace
}  // namespace strata::rdb
