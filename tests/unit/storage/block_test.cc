#include "storage/block.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "storage/crc32c.h"

namespace strata {
namespace {

TEST(Crc32cTest, KnownValuesAndBothPaths) {
  EXPECT_EQ(crc32c::Value("123456789"), 0xE3069283u);  // the standard check value
  EXPECT_EQ(crc32c::Value(""), 0u);
  std::mt19937 rng(1);
  for (size_t n = 0; n < 300; n++) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    uint32_t a = crc32c::Extend(0, s.data(), s.size());
    EXPECT_EQ(a, crc32c::detail::ExtendPortable(0, s.data(), s.size())) << n;
    // Extending in two pieces gives the same value.
    size_t cut = n / 3;
    EXPECT_EQ(crc32c::Extend(crc32c::Extend(0, s.data(), cut), s.data() + cut, n - cut), a);
  }
}

class BlockTest : public ::testing::TestWithParam<BlockCodec> {};

TEST_P(BlockTest, RoundTripsAndDetectsDamage) {
  std::mt19937 rng(2);
  std::string file;
  std::vector<std::string> raws;
  for (size_t n : {0u, 1u, 100u, 5000u, 200000u}) {
    std::string raw(n, '\0');
    // Half compressible text, half random bytes.
    for (size_t i = 0; i < n; i++) raw[i] = i % 2 ? static_cast<char>(rng()) : 'a' + i % 7;
    raws.push_back(raw);
    EncodeBlock(GetParam(), raw, &file);
  }
  size_t pos = 0;
  for (const std::string& want : raws) {
    std::string got;
    ASSERT_TRUE(DecodeBlock(file, &pos, &got, "test").ok());
    EXPECT_EQ(got, want);
  }
  EXPECT_EQ(pos, file.size());
  // Every truncation of the first blocks, and flipped bytes, are refused with the offset.
  std::string one;
  EncodeBlock(GetParam(), std::string(3000, 'x') + "tail", &one);
  for (size_t cut = 0; cut < one.size(); cut += 7) {
    size_t p = 0;
    std::string got;
    Status s = DecodeBlock(std::string_view(one).substr(0, cut), &p, &got, "shard-0.snap");
    EXPECT_FALSE(s.ok()) << cut;
    EXPECT_EQ(s.code(), Status::Code::kCorruption);
    EXPECT_NE(s.message().find("shard-0.snap"), std::string::npos);
    EXPECT_NE(s.message().find("offset 0"), std::string::npos);
  }
  for (size_t i = 0; i < one.size(); i++) {
    std::string bad = one;
    bad[i] ^= 0x20;
    size_t p = 0;
    std::string got;
    EXPECT_FALSE(DecodeBlock(bad, &p, &got, "x").ok()) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Codecs, BlockTest,
                         ::testing::Values(BlockCodec::kNone, BlockCodec::kLz4, BlockCodec::kZstd));

TEST(BlockCodecTest, Names) {
  BlockCodec c;
  EXPECT_TRUE(ParseBlockCodec("lz4", &c));
  EXPECT_EQ(c, BlockCodec::kLz4);
  EXPECT_TRUE(ParseBlockCodec("zstd", &c));
  EXPECT_TRUE(ParseBlockCodec("none", &c));
  EXPECT_FALSE(ParseBlockCodec("gzip", &c));
  EXPECT_STREQ(BlockCodecName(BlockCodec::kZstd), "zstd");
}

TEST(BlockCodecTest, IncompressibleDataIsStoredRaw) {
  std::mt19937 rng(3);
  std::string raw(10000, '\0');
  for (char& c : raw) c = static_cast<char>(rng());
  std::string out;
  EncodeBlock(BlockCodec::kLz4, raw, &out);
  EXPECT_EQ(static_cast<uint8_t>(out[0]), 0);  // codec none
  EXPECT_LE(out.size(), raw.size() + 16);
}

}  // namespace
}  // namespace strata
