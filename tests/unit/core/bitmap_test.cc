#include "core/bitmap.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace strata::bitmap {
namespace {

// The obvious bit-by-bit versions, to check the word-at-a-time ones against.
uint64_t SlowCount(std::string_view s, uint64_t first, uint64_t last) {
  uint64_t n = 0;
  for (uint64_t i = first; i <= last; i++) n += GetBit(s, i);
  return n;
}
int64_t SlowFind(std::string_view s, uint64_t first, uint64_t last, int bit) {
  for (uint64_t i = first; i <= last; i++) {
    if (GetBit(s, i) == bit) return static_cast<int64_t>(i);
  }
  return -1;
}

TEST(BitmapTest, BitOrderIsRedisOrder) {
  std::string s("\x80\x01", 2);
  EXPECT_EQ(GetBit(s, 0), 1);
  EXPECT_EQ(GetBit(s, 7), 0);
  EXPECT_EQ(GetBit(s, 15), 1);
  EXPECT_EQ(GetBit(s, 16), 0);  // past the end
  EXPECT_EQ(GetField(s, 0, 8), 0x80u);
  EXPECT_EQ(GetField(s, 4, 8), 0x00u);
  EXPECT_EQ(GetField(s, 8, 16), 0x0100u);  // zero-padded past the end
}

TEST(BitmapTest, CountAndFindMatchTheBitByBitVersions) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 300; round++) {
    size_t n = 1 + rng() % 100;
    std::string s(n, '\0');
    int density = static_cast<int>(rng() % 4);
    for (auto& c : s) {
      uint8_t v = static_cast<uint8_t>(rng());
      if (density == 0) v = 0;
      if (density == 1) v = 0xFF;
      c = static_cast<char>(v);
    }
    if (rng() % 3 == 0) s[rng() % n] ^= 0x10;
    EXPECT_EQ(Count(s), SlowCount(s, 0, n * 8 - 1));
    for (int k = 0; k < 20; k++) {
      uint64_t a = rng() % (n * 8), b = rng() % (n * 8);
      if (a > b) std::swap(a, b);
      ASSERT_EQ(CountRange(s, a, b), SlowCount(s, a, b)) << a << " " << b;
      ASSERT_EQ(FindRange(s, a, b, 1), SlowFind(s, a, b, 1)) << a << " " << b;
      ASSERT_EQ(FindRange(s, a, b, 0), SlowFind(s, a, b, 0)) << a << " " << b;
    }
  }
}

TEST(BitmapTest, CombinePadsShorterSourcesWithZeros) {
  std::vector<std::string_view> srcs = {std::string_view("\xff\xff\xff", 3),
                                        std::string_view("\x0f", 1)};
  std::string out(3, '\0');
  Combine(Op::kAnd, srcs, 3, out.data());
  EXPECT_EQ(out, std::string("\x0f\x00\x00", 3));
  Combine(Op::kOr, srcs, 3, out.data());
  EXPECT_EQ(out, std::string("\xff\xff\xff", 3));
  Combine(Op::kXor, srcs, 3, out.data());
  EXPECT_EQ(out, std::string("\xf0\xff\xff", 3));
  std::vector<std::string_view> one = {std::string_view("\x0f\x00", 2)};
  std::string n2(2, '\0');
  Combine(Op::kNot, one, 2, n2.data());
  EXPECT_EQ(n2, std::string("\xf0\xff", 2));
  // Long inputs go a word at a time: the same as byte by byte.
  std::string a(1000, '\0'), b(997, '\0');
  for (size_t i = 0; i < a.size(); i++) a[i] = static_cast<char>(i * 7);
  for (size_t i = 0; i < b.size(); i++) b[i] = static_cast<char>(i * 13);
  std::string x(1000, '\0');
  Combine(Op::kXor, {a, b}, 1000, x.data());
  for (size_t i = 0; i < 1000; i++) {
    char want = static_cast<char>(a[i] ^ (i < b.size() ? b[i] : 0));
    ASSERT_EQ(x[i], want) << i;
  }
}

TEST(BitmapTest, FieldsReadAndWriteAtAnyOffset) {
  std::string s(10, '\0');
  SetField(s.data(), s.size(), 3, 13, 0x1abc);
  EXPECT_EQ(GetField(s, 3, 13), 0x1abcu);
  EXPECT_EQ(GetField(s, 0, 3), 0u);
  EXPECT_EQ(GetField(s, 16, 8), 0u);
  SetField(s.data(), s.size(), 11, 64, 0xfedcba9876543210ull);
  EXPECT_EQ(GetField(s, 11, 64), 0xfedcba9876543210ull);
  EXPECT_EQ(SignExtend(0xff, 8), -1);
  EXPECT_EQ(SignExtend(0x7f, 8), 127);
  EXPECT_EQ(SignExtend(0x80, 8), -128);
  EXPECT_EQ(SignExtend(1, 1), -1);
}

TEST(BitmapTest, OverflowWrapsSaturatesOrFailsAsRedis) {
  uint64_t out = 0;
  // u8: 250 + 10.
  EXPECT_FALSE(AddField(false, 8, 250, 10, Overflow::kWrap, &out));
  EXPECT_EQ(out, 4u);
  EXPECT_FALSE(AddField(false, 8, 250, 10, Overflow::kSat, &out));
  EXPECT_EQ(out, 255u);
  EXPECT_FALSE(AddField(false, 8, 5, -10, Overflow::kSat, &out));
  EXPECT_EQ(out, 0u);
  EXPECT_FALSE(AddField(false, 8, 5, -10, Overflow::kWrap, &out));
  EXPECT_EQ(out, 251u);
  EXPECT_TRUE(AddField(false, 8, 5, 10, Overflow::kFail, &out));
  EXPECT_EQ(out, 15u);
  // SET u8 -1: the value itself is out of range.
  EXPECT_FALSE(AddField(false, 8, static_cast<uint64_t>(int64_t{-1}), 0, Overflow::kWrap, &out));
  EXPECT_EQ(out, 255u);
  // i8: 120 + 10, -120 - 10, SET i8 200.
  EXPECT_FALSE(AddField(true, 8, 120, 10, Overflow::kWrap, &out));
  EXPECT_EQ(static_cast<int64_t>(out), -126);
  EXPECT_FALSE(AddField(true, 8, 120, 10, Overflow::kSat, &out));
  EXPECT_EQ(static_cast<int64_t>(out), 127);
  EXPECT_FALSE(AddField(true, 8, static_cast<uint64_t>(int64_t{-120}), -10, Overflow::kSat, &out));
  EXPECT_EQ(static_cast<int64_t>(out), -128);
  EXPECT_FALSE(AddField(true, 8, 200, 0, Overflow::kWrap, &out));
  EXPECT_EQ(static_cast<int64_t>(out), -56);
  // i64 at its ends.
  EXPECT_FALSE(AddField(true, 64, static_cast<uint64_t>(INT64_MAX), 1, Overflow::kWrap, &out));
  EXPECT_EQ(static_cast<int64_t>(out), INT64_MIN);
  EXPECT_FALSE(AddField(true, 64, static_cast<uint64_t>(INT64_MAX), 1, Overflow::kSat, &out));
  EXPECT_EQ(static_cast<int64_t>(out), INT64_MAX);
  EXPECT_TRUE(AddField(true, 64, static_cast<uint64_t>(int64_t{-5}), 3, Overflow::kFail, &out));
  EXPECT_EQ(static_cast<int64_t>(out), -2);
}

}  // namespace
}  // namespace strata::bitmap
