#include "core/entry.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "core/ascii7.h"
#include "core/slab.h"

namespace strata {
namespace {

TEST(Ascii7Test, RoundTripsEveryLength) {
  std::mt19937 rng(1);
  for (size_t n = 0; n < 300; n++) {
    std::string s(n, ' ');
    for (char& c : s) c = static_cast<char>(rng() % 128);
    ASSERT_TRUE(ascii7::IsAscii(s));
    // The packed buffer is exactly PackedSize bytes, so a read past it is caught by ASan.
    std::string packed(ascii7::PackedSize(n), '\0');
    ascii7::Pack(s, packed.data());
    std::string portable(ascii7::PackedSize(n), '\0');
    ascii7::detail::PackPortable(s, portable.data());
    ASSERT_EQ(packed, portable) << n;
    std::unique_ptr<char[]> exact(new char[packed.size() + 1]);
    std::memcpy(exact.get(), packed.data(), packed.size());
    std::string out(n, '\xff');
    ascii7::Unpack(exact.get(), n, out.data());
    ASSERT_EQ(out, s) << n;
    std::string out2(n, '\xff');
    ascii7::detail::UnpackPortable(packed.data(), n, out2.data());
    ASSERT_EQ(out2, s) << n;
  }
  EXPECT_EQ(ascii7::PackedSize(100), 88u);
  EXPECT_EQ(ascii7::PackedSize(16), 14u);
  EXPECT_EQ(ascii7::PackedSize(15), 14u);
  EXPECT_EQ(ascii7::PackedSize(14), 14u);
  EXPECT_EQ(ascii7::PackedSize(0), 0u);
  EXPECT_FALSE(ascii7::IsAscii(std::string("abc\x80", 4)));
  EXPECT_FALSE(ascii7::IsAscii(std::string(20, 'a') + "\xc3\xa9"));
}

// One byte of 0x80 or more anywhere makes a string non-ASCII, at every length and position
// (whole 16-byte blocks, the overlapping last block, the short-string loops).
TEST(Ascii7Test, IsAsciiSeesOneHighByteAnywhere) {
  for (size_t n = 1; n < 80; n++) {
    std::string s(n, 'a');
    ASSERT_TRUE(ascii7::IsAscii(s)) << n;
    for (size_t i = 0; i < n; i++) {
      for (char high : {'\x80', '\xff'}) {
        s[i] = high;
        ASSERT_FALSE(ascii7::IsAscii(s)) << n << " at " << i;
        s[i] = '\x7f';
        ASSERT_TRUE(ascii7::IsAscii(s)) << n << " at " << i;
        s[i] = 'a';
      }
    }
  }
}

// The format is fixed (docs and future snapshot files depend on it): check one group.
TEST(Ascii7Test, GroupLayout) {
  std::string s = "ABCDEFGHIJKLMN\x7f\x01";
  std::string packed(14, '\0');
  ascii7::Pack(s, packed.data());
  // c14 | c15 << 7 = 0x7f | 0x80 = 0xff: bits 0..7 set, bits 8..13 clear.
  for (int i = 0; i < 14; i++) {
    unsigned char expect = static_cast<unsigned char>(s[i]) | (i < 8 ? 0x80 : 0);
    EXPECT_EQ(static_cast<unsigned char>(packed[i]), expect) << i;
  }
}

class EntryTest : public ::testing::Test {
 protected:
  SlabHeap heap_;
};

TEST_F(EntryTest, CompactHeaderAndPacking) {
  std::string key = "memtier-123456";
  std::string value(100, 'x');
  size_t usable = 0;
  Entry* e = Entry::Create(heap_, key, value, ValueType::kString, Entry::kNoExpire, &usable);
  EXPECT_TRUE(e->IsPacked());
  EXPECT_EQ(e->AllocSize(), 3u + 14 + 88);
  EXPECT_EQ(usable, 108u);
  EXPECT_EQ(e->Key(), key);
  EXPECT_EQ(e->ValueLen(), 100u);
  EXPECT_EQ(e->ValueString(), value);
  EXPECT_TRUE(e->KeyEquals(key));
  EXPECT_FALSE(e->KeyEquals("memtier-123457"));
  EXPECT_EQ(Entry::Destroy(heap_, e), 108u);
}

TEST_F(EntryTest, BinaryLongAndExpiringValues) {
  std::mt19937 rng(2);
  for (size_t vlen : {0u, 1u, 15u, 16u, 127u, 128u, 300u, 2100u, 70000u}) {
    for (bool binary : {false, true}) {
      for (int64_t exp : {Entry::kNoExpire, int64_t{1700000000123}}) {
        std::string key(vlen % 200 + 1, 'k');
        std::string value(vlen, ' ');
        for (char& c : value) c = static_cast<char>(binary ? rng() % 256 : 32 + rng() % 95);
        if (binary && vlen > 0) value[0] = '\xff';
        size_t usable = 0;
        Entry* e = Entry::Create(heap_, key, value, ValueType::kString, exp, &usable);
        EXPECT_EQ(e->IsPacked(), !binary && vlen >= Entry::kPackMinLen);
        EXPECT_EQ(e->Key(), key);
        EXPECT_EQ(e->ExpireMs(), exp);
        EXPECT_EQ(e->HasExpire(), exp != Entry::kNoExpire);
        std::string scratch;
        EXPECT_EQ(e->Value(&scratch), value);
        std::string copy(vlen, '\0');
        e->CopyValue(copy.data());
        EXPECT_EQ(copy, value);
        EXPECT_EQ(Entry::UsableSize(e), usable);
        EXPECT_GE(usable, e->AllocSize());
        if (exp != Entry::kNoExpire) {
          e->SetExpireInPlace(exp + 1);
          EXPECT_EQ(e->ExpireMs(), exp + 1);
          EXPECT_EQ(e->Key(), key);
        }
        EXPECT_EQ(Entry::Destroy(heap_, e), usable);
      }
    }
  }
  EXPECT_EQ(heap_.slot_bytes(), 0u);
}

}  // namespace
}  // namespace strata
