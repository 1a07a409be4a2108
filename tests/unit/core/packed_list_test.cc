#include "core/packed_list.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata {
namespace {

TEST(PackedListTest, BuildAndReadBack) {
  std::vector<std::string> items = {"", "a", std::string(300, 'x'), std::string("\0\xff\r\n", 4)};
  packed::Builder b;
  for (auto& s : items) b.Add(s);
  std::string buf = b.Finish();
  EXPECT_TRUE(packed::Valid(buf));
  EXPECT_EQ(packed::Count(buf), items.size());
  size_t i = 0;
  for (packed::Reader r(buf); !r.Done(); r.Next()) EXPECT_EQ(r.Item(), items[i++]);
  EXPECT_EQ(i, items.size());
  // 300 needs a 2-byte varint: tag + count + 1+0 + 1+1 + 2+300 + 1+4.
  EXPECT_EQ(buf.size(), 1u + 1 + 1 + 2 + 302 + 5);
}

TEST(PackedListTest, EmptyList) {
  std::string buf = packed::Builder().Finish();
  EXPECT_TRUE(packed::Valid(buf));
  EXPECT_EQ(packed::Count(buf), 0u);
  EXPECT_TRUE(packed::Reader(buf).Done());
}

TEST(PackedListTest, RejectsMalformedBuffers) {
  packed::Builder b;
  b.Add("hello");
  b.Add("world");
  std::string buf = b.Finish();
  for (size_t cut = 0; cut < buf.size(); cut++) {
    EXPECT_FALSE(packed::Valid(buf.substr(0, cut))) << cut;
  }
  EXPECT_FALSE(packed::Valid(buf + "x"));
  std::string wrong_tag = buf;
  wrong_tag[0] = 7;
  EXPECT_FALSE(packed::Valid(wrong_tag));
  std::string huge_len = buf;
  huge_len[2] = static_cast<char>(0x7f);  // first item claims 127 bytes
  EXPECT_FALSE(packed::Valid(huge_len));
  // A reader over a truncated buffer stops instead of reading past the end.
  size_t n = 0;
  std::string truncated = buf.substr(0, buf.size() - 2);
  for (packed::Reader r(truncated); !r.Done(); r.Next()) n++;
  EXPECT_LE(n, 2u);
}

TEST(PackedListTest, Varints) {
  for (uint64_t v : {0ull, 1ull, 127ull, 128ull, 16383ull, 16384ull, 1ull << 40, ~0ull}) {
    std::string s;
    packed::AppendVarint(&s, v);
    EXPECT_EQ(s.size(), packed::VarintSize(v));
    size_t pos = 0;
    uint64_t back = 0;
    ASSERT_TRUE(packed::ReadVarint(s, &pos, &back));
    EXPECT_EQ(back, v);
    EXPECT_EQ(pos, s.size());
    size_t p2 = 0;
    EXPECT_FALSE(packed::ReadVarint(s.substr(0, s.size() - 1), &p2, &back) && s.size() > 1);
  }
}

}  // namespace
}  // namespace strata
