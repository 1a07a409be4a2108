#include "storage/lzf.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace strata {
namespace {

std::string Unlzf(std::string_view in, size_t n) {
  std::string out, err;
  EXPECT_TRUE(lzf::Decompress(in, n, &out, &err)) << err;
  return out;
}

TEST(LzfTest, DecodesLiteralsAndBackReferences) {
  // "abc" as a literal run, then a reference of 6 bytes one back (a run of 'c's), then
  // a long reference (7 + 3 + 2 = 12 bytes) 3 back.
  std::string in = {2, 'a', 'b', 'c', static_cast<char>(4 << 5), 0, static_cast<char>(7 << 5),
                    3, 2};
  EXPECT_EQ(Unlzf(in, 21),
            "abccccccc"
            "ccccccccccc"
            "c");
}

TEST(LzfTest, RoundTripsWhatItCompresses) {
  std::mt19937 rng(9);
  std::vector<std::string> inputs = {
      std::string(10000, 'x'),
      "hello hello hello hello hello hello world",
  };
  std::string text;
  for (int i = 0; i < 2000; i++) text += "key:" + std::to_string(rng() % 100) + ",";
  inputs.push_back(text);
  std::string mixed;
  for (int i = 0; i < 50000; i++) mixed.push_back(static_cast<char>(i % 7 == 0 ? rng() : 'a'));
  inputs.push_back(mixed);
  for (const std::string& in : inputs) {
    std::string packed;
    ASSERT_TRUE(lzf::Compress(in, in.size() - 1, &packed)) << in.size();
    EXPECT_LT(packed.size(), in.size());
    EXPECT_EQ(Unlzf(packed, in.size()), in);
  }
}

TEST(LzfTest, GivesUpOnIncompressibleData) {
  std::mt19937 rng(3);
  std::string in(4096, '\0');
  for (char& c : in) c = static_cast<char>(rng());
  std::string packed;
  EXPECT_FALSE(lzf::Compress(in, in.size() - 1, &packed));
  // Allowed to grow (a literal control byte per 32 bytes), it still round-trips.
  ASSERT_TRUE(lzf::Compress(in, in.size() + in.size() / 32 + 1, &packed));
  EXPECT_EQ(Unlzf(packed, in.size()), in);
}

TEST(LzfTest, DamagedInputIsAnErrorNeverAnOverrun) {
  std::string out, err;
  // A literal run longer than the input.
  EXPECT_FALSE(lzf::Decompress(std::string("\x05"
                                           "ab",
                                           3),
                               6, &out, &err));
  EXPECT_NE(err.find("byte 0"), std::string::npos) << err;
  // A reference before the start of the output.
  EXPECT_FALSE(lzf::Decompress(std::string("\x00"
                                           "a"
                                           "\x20\x05",
                                           4),
                               4, &out, &err));
  EXPECT_NE(err.find("before the start"), std::string::npos) << err;
  // More output than expected, and less.
  EXPECT_FALSE(lzf::Decompress(std::string("\x02"
                                           "abc",
                                           4),
                               2, &out, &err));
  EXPECT_FALSE(lzf::Decompress(std::string("\x02"
                                           "abc",
                                           4),
                               5, &out, &err));
  EXPECT_NE(err.find("ends after 3 of 5"), std::string::npos) << err;
  // A reference cut off.
  EXPECT_FALSE(lzf::Decompress(std::string("\x00"
                                           "a"
                                           "\xe0",
                                           3),
                               20, &out, &err));
  // Every truncation and every flipped byte of a valid stream: refused or exact, never
  // out of bounds (run under the sanitizers in CI).
  std::string text;
  for (int i = 0; i < 300; i++) text += "abcabd" + std::to_string(i % 13);
  std::string packed;
  ASSERT_TRUE(lzf::Compress(text, text.size() - 1, &packed));
  for (size_t cut = 0; cut < packed.size(); cut++) {
    EXPECT_FALSE(lzf::Decompress(std::string_view(packed).substr(0, cut), text.size(), &out, &err));
  }
  for (size_t i = 0; i < packed.size(); i++) {
    std::string bad = packed;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    if (lzf::Decompress(bad, text.size(), &out, &err)) {
      EXPECT_EQ(out.size(), text.size());
    }
  }
}

// The encoder's table keeps each position's 3 bytes beside it: zero bytes, a repeat in
// a short value, and a repeat only beyond the 8 KB window must all come out right.
TEST(LzfTest, MatchesZeroBytesShortRepeatsAndStaysInsideTheWindow) {
  std::mt19937 rng(11);
  auto random_bytes = [&](size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    return s;
  };
  std::string zeros(300, '\0');
  std::string packed;
  ASSERT_TRUE(lzf::Compress(zeros, zeros.size() - 1, &packed));
  EXPECT_LT(packed.size(), 20u);
  EXPECT_EQ(Unlzf(packed, zeros.size()), zeros);

  std::string head = random_bytes(40);
  std::string short_repeat = head + random_bytes(20) + head;  // 100 bytes, one 40-byte match
  ASSERT_TRUE(lzf::Compress(short_repeat, short_repeat.size() - 1, &packed));
  EXPECT_LE(packed.size(), short_repeat.size() - 30);
  EXPECT_EQ(Unlzf(packed, short_repeat.size()), short_repeat);

  // A repeat 9000 bytes back is past the 8192-byte window (a reference there could not
  // be written: the round trip would fail); 8000 back it is found. The filler
  // compresses to a few bytes and never matches the head.
  std::string far = head + std::string(9000, 'z') + head;
  ASSERT_TRUE(lzf::Compress(far, far.size() - 1, &packed));
  EXPECT_EQ(Unlzf(packed, far.size()), far);
  size_t far_size = packed.size();
  std::string near = head + std::string(8000, 'z') + head;
  ASSERT_TRUE(lzf::Compress(near, near.size() - 1, &packed));
  EXPECT_EQ(Unlzf(packed, near.size()), near);
  EXPECT_LE(packed.size() + 30, far_size);
}

}  // namespace
}  // namespace strata
