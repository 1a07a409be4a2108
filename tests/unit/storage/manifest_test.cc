#include "storage/manifest.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

Manifest Sample() {
  Manifest m;
  m.seq = 42;
  m.created_ms = 1700000000123;
  m.shard_count = 2;
  m.range_bits = 22;
  for (int l = 0; l < 3; l++) {
    ManifestLink link;
    link.kind = l == 0 ? SnapshotKind::kFull : SnapshotKind::kDelta;
    link.seq = 40 + l;
    link.created_ms = 1700000000000 + l;
    for (int s = 0; s < 2; s++) {
      link.files.push_back(
          {"dump.strata-0000" + std::to_string(40 + l) + "-" + std::to_string(s) + ".snap",
           1000u + l,
           10u + s,
           {{0u, 10u + s}},
           ""});
    }
    m.chain.push_back(link);
  }
  return m;
}

TEST(ManifestTest, RoundTrips) {
  Manifest m = Sample();
  std::string enc = EncodeManifest(m);
  Manifest back;
  Status s = DecodeManifest(enc, "dump.strata", &back);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(back.seq, 42u);
  EXPECT_EQ(back.shard_count, 2u);
  ASSERT_EQ(back.chain.size(), 3u);
  EXPECT_EQ(back.chain[2].kind, SnapshotKind::kDelta);
  EXPECT_EQ(back.chain[1].files[1].name, m.chain[1].files[1].name);
  EXPECT_EQ(back.chain[1].files[1].bytes, 1001u);
  EXPECT_EQ(back.chain[1].files[1].records, 11u);
  ASSERT_EQ(back.chain[1].files[1].db_records.size(), 1u);
  EXPECT_EQ(back.chain[1].files[1].db_records[0].second, 11u);
}

TEST(ManifestTest, FunctionLibrariesMakeVersion3AndRoundTrip) {
  Manifest m = Sample();
  std::string v1 = EncodeManifest(m);
  m.functions = {"#!lua name=a\nredis.register_function('f', function() return 1 end)",
                 std::string("#!lua name=b\n") + std::string(3000, '-')};
  std::string enc = EncodeManifest(m);
  Manifest back;
  Status s = DecodeManifest(enc, "dump.strata", &back);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(back.functions, m.functions);
  EXPECT_EQ(back.chain.size(), 3u);
  // Without libraries the manifest stays at version 1, which older builds read.
  Manifest plain;
  ASSERT_TRUE(DecodeManifest(v1, "dump.strata", &plain).ok());
  EXPECT_TRUE(plain.functions.empty());
  EXPECT_LT(v1.size(), enc.size());
  for (size_t n = 0; n < enc.size(); n++) {
    Manifest cut;
    EXPECT_FALSE(DecodeManifest(std::string_view(enc).substr(0, n), "m", &cut).ok()) << n;
  }
}

TEST(ManifestTest, DamageIsRefused) {
  std::string enc = EncodeManifest(Sample());
  for (size_t i = 0; i < enc.size(); i++) {
    std::string bad = enc;
    bad[i] ^= 0x10;
    Manifest m;
    Status s = DecodeManifest(bad, "dump.strata", &m);
    EXPECT_FALSE(s.ok()) << i;
    EXPECT_NE(s.message().find("dump.strata"), std::string::npos) << s.message();
  }
  for (size_t n = 0; n < enc.size(); n++) {
    Manifest m;
    EXPECT_FALSE(DecodeManifest(std::string_view(enc).substr(0, n), "m", &m).ok()) << n;
  }
}

}  // namespace
}  // namespace strata
