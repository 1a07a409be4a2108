#include "storage/rdb_input.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "storage/lzf.h"

namespace strata {
namespace {

std::string B(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

// An RDB length in its shortest form (6 or 14 bits; enough here).
std::string Length(size_t n) {
  if (n < 64) return B({static_cast<int>(n)});
  return B({0x40 | static_cast<int>(n >> 8), static_cast<int>(n & 0xff)});
}

TEST(RdbInputTest, LengthsInEveryWidth) {
  std::string in =
      B({0x05, 0x41, 0x02, 0x80, 0x00, 0x01, 0x00, 0x00, 0x81, 0, 0, 0, 1, 0, 0, 0, 0, 0xc3});
  RdbInput r(in);
  uint64_t n;
  int enc;
  ASSERT_TRUE(r.ReadLength(&n, "a length"));
  EXPECT_EQ(n, 5u);
  ASSERT_TRUE(r.ReadLength(&n, "a length"));
  EXPECT_EQ(n, 0x102u);  // 14 bits, big-endian
  ASSERT_TRUE(r.ReadLength(&n, "a length"));
  EXPECT_EQ(n, 0x10000u);
  ASSERT_TRUE(r.ReadLength(&n, "a length"));
  EXPECT_EQ(n, uint64_t{1} << 32);
  ASSERT_TRUE(r.ReadLength(&n, &enc, "a length"));
  EXPECT_EQ(enc, RdbInput::kEncLzf);
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(RdbInputTest, StringsInEveryEncoding) {
  std::string text(200, 'z');
  std::string packed;
  ASSERT_TRUE(lzf::Compress(text, text.size() - 1, &packed));
  std::string in =
      B({0x03, 'a', 'b', 'c', 0xc0, 0xfe, 0xc1, 0x39, 0x30, 0xc2, 0xff, 0xff, 0xff, 0x7f, 0xc3});
  in += Length(packed.size()) + Length(text.size()) + packed;
  RdbInput r(in);
  std::string s;
  ASSERT_TRUE(r.ReadString(&s, "a string"));
  EXPECT_EQ(s, "abc");
  ASSERT_TRUE(r.ReadString(&s, "a string"));
  EXPECT_EQ(s, "-2");
  ASSERT_TRUE(r.ReadString(&s, "a string"));
  EXPECT_EQ(s, "12345");
  ASSERT_TRUE(r.ReadString(&s, "a string"));
  EXPECT_EQ(s, "2147483647");
  ASSERT_TRUE(r.ReadString(&s, "a string")) << r.error();
  EXPECT_EQ(s, text);
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(RdbInputTest, DoublesAndFixedWidthIntegers) {
  double d = -2.5;
  std::string bin(8, '\0');
  std::memcpy(bin.data(), &d, 8);
  std::string in = bin + B({253, 254, 255, 4}) + "3.25" + B({0x34, 0x12, 0x78, 0x56, 0x34, 0x12});
  RdbInput r(in);
  double x;
  ASSERT_TRUE(r.ReadBinaryDouble(&x, "a score"));
  EXPECT_EQ(x, -2.5);
  ASSERT_TRUE(r.ReadTextDouble(&x, "a score"));
  EXPECT_TRUE(std::isnan(x));
  ASSERT_TRUE(r.ReadTextDouble(&x, "a score"));
  EXPECT_EQ(x, INFINITY);
  ASSERT_TRUE(r.ReadTextDouble(&x, "a score"));
  EXPECT_EQ(x, -INFINITY);
  ASSERT_TRUE(r.ReadTextDouble(&x, "a score"));
  EXPECT_EQ(x, 3.25);
  uint16_t a;
  uint32_t b;
  ASSERT_TRUE(r.ReadU16LE(&a, "a count"));
  EXPECT_EQ(a, 0x1234);
  ASSERT_TRUE(r.ReadU32LE(&b, "a count"));
  EXPECT_EQ(b, 0x12345678u);
}

TEST(RdbInputTest, DamageNamesTheOffsetAndWhatWasExpected) {
  {
    std::string in = B({0x05, 'a', 'b'});  // 5 bytes declared, 2 there
    RdbInput r(in, 100);
    std::string s;
    EXPECT_FALSE(r.ReadString(&s, "a key"));
    EXPECT_EQ(r.error(), "at byte 101: the input ends inside a key (5 bytes needed, 2 left)");
    EXPECT_FALSE(r.ReadString(&s, "a key"));  // failed for good, first error kept
    EXPECT_EQ(r.error(), "at byte 101: the input ends inside a key (5 bytes needed, 2 left)");
  }
  {
    std::string in = B({0x82});
    RdbInput r(in);
    uint64_t n;
    EXPECT_FALSE(r.ReadLength(&n, "a length"));
    EXPECT_EQ(r.error(), "at byte 0: unknown length encoding 0x82 in a length");
  }
  {
    std::string in = B({0xc3, 0x02, 0x7f, 0xff, 0x00, 0x00});  // 2 bytes claiming 16383
    RdbInput r(in);
    std::string s;
    EXPECT_FALSE(r.ReadString(&s, "a value"));
    EXPECT_NE(r.error().find("claims 16383 bytes"), std::string::npos) << r.error();
  }
  {
    std::string in = B({0x81, 0, 0, 0, 1, 0, 0, 0, 0});  // a 4 GB string
    RdbInput r(in);
    std::string s;
    EXPECT_FALSE(r.ReadString(&s, "a value"));
    EXPECT_NE(r.error().find("over the limit"), std::string::npos) << r.error();
  }
  {
    std::string in = B({0xc4});
    RdbInput r(in);
    std::string s;
    EXPECT_FALSE(r.ReadString(&s, "a value"));
    EXPECT_EQ(r.error(), "at byte 0: unknown string encoding 4 in a value");
  }
  {
    std::string in = B({0xc0, 0x01});
    RdbInput r(in);
    uint64_t n;
    EXPECT_FALSE(r.ReadLength(&n, "a count"));
    EXPECT_EQ(r.error(), "at byte 0: a string encoding where a length was expected (a count)");
  }
  {
    std::string in = B({3}) + "1x5";
    RdbInput r(in);
    double x;
    EXPECT_FALSE(r.ReadTextDouble(&x, "a score"));
    EXPECT_EQ(r.error(), "at byte 0: '1x5' is not a number (a score)");
  }
}

}  // namespace
}  // namespace strata
