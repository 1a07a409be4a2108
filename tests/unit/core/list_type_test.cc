#include "core/list_type.h"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <random>
#include <string>

#include "core/keyspace.h"
#include "core/packed_list.h"
#include "tests/unit/scaled.h"

namespace strata {
namespace {

std::string RandomElement(std::mt19937& rng, int mode) {
  // mode 0: fixed-width text (fixed nodes), 1: mixed lengths, 2: binary, 3: any mix,
  // 4: compressible text of mixed lengths, 5: compressible text of one length
  if (mode == 4) return "key:" + std::to_string(rng() % 50) + ":" + std::string(rng() % 40, 'x');
  if (mode == 5) return "k" + std::to_string(100 + rng() % 10) + "aaaaaa";
  int m = mode == 3 ? static_cast<int>(rng() % 3) : mode;
  size_t len = m == 0 ? 10 : rng() % 80;
  std::string s(len, ' ');
  for (char& c : s) c = static_cast<char>(m == 2 ? rng() % 256 : 32 + rng() % 95);
  return s;
}

void ExpectSame(const ListObject& l, const std::deque<std::string>& ref) {
  ASSERT_EQ(l.Length(), ref.size());
  std::vector<std::string> all = l.Elements();
  ASSERT_EQ(all.size(), ref.size());
  for (size_t i = 0; i < ref.size(); i++) ASSERT_EQ(all[i], ref[i]) << i;
}

void RandomOps(int mode, uint32_t seed, ListObject& l);

class ListObjectTest : public ::testing::TestWithParam<int> {};

TEST_P(ListObjectTest, RandomOperationsMatchADeque) {
  ListObject l;
  RandomOps(GetParam(), 11 + GetParam(), l);
}

// The same with inner nodes compressed (small nodes, so that there are many), and the
// depth changed half-way: the ends are always plain, the contents always the same.
TEST(ListCompressionTest, RandomOperationsMatchADeque) {
  EncodingLimits& lim = GlobalEncodingLimits();
  int64_t saved_size = lim.list_max_listpack_size.load(),
          saved_depth = lim.list_compress_depth.load();
  lim.list_max_listpack_size.store(16);
  for (int depth : {1, 2, 3}) {
    for (int mode : {0, 3, 4, 5}) {
      lim.list_compress_depth.store(depth);
      ListObject l;
      RandomOps(mode, 100 + depth * 10 + mode, l);
      if (mode >= 4 && l.NodeCount() > 2 * static_cast<size_t>(depth) + 1) {
        EXPECT_GT(l.CompressedNodes(), 0u);
      }
      lim.list_compress_depth.store(depth == 1 ? 0 : 1);
      RandomOps(mode, 200 + depth, l);
    }
  }
  lim.list_max_listpack_size.store(saved_size);
  lim.list_compress_depth.store(saved_depth);
}

// Elements past the packed threshold get nodes of their own (Redis's PLAIN nodes), with
// and without compression; the contents stay the same.
TEST(ListCompressionTest, LargeElementsTakeTheirOwnNodes) {
  EncodingLimits& lim = GlobalEncodingLimits();
  int64_t saved_threshold = lim.list_packed_threshold.load(),
          saved_depth = lim.list_compress_depth.load();
  lim.list_packed_threshold.store(30);
  for (int depth : {0, 1}) {
    lim.list_compress_depth.store(depth);
    ListObject l;
    RandomOps(1, 300 + depth, l);
    RandomOps(4, 400 + depth, l);
  }
  lim.list_packed_threshold.store(saved_threshold);
  lim.list_compress_depth.store(saved_depth);
}

TEST(ListCompressionTest, CompressibleTextShrinks) {
  EncodingLimits& lim = GlobalEncodingLimits();
  int64_t saved_depth = lim.list_compress_depth.load();
  auto fill = [](ListObject& l) {
    for (int i = 0; i < 20000; i++)
      l.PushBack("event=page_view;user=" + std::to_string(i % 97) + ";path=/products/item");
  };
  lim.list_compress_depth.store(0);
  auto plain = std::make_unique<ListObject>();
  fill(*plain);
  lim.list_compress_depth.store(1);
  auto packed = std::make_unique<ListObject>();
  fill(*packed);
  EXPECT_EQ(plain->CompressedNodes(), 0u);
  EXPECT_EQ(packed->CompressedNodes(), packed->NodeCount() - 2);
  EXPECT_LT(packed->Bytes() * 3, plain->Bytes());
  EXPECT_EQ(packed->Elements(), plain->Elements());
  EXPECT_EQ(packed->At(10000), plain->At(10000));
  packed->Set(10000, "changed");
  EXPECT_EQ(packed->At(10000), "changed");
  EXPECT_EQ(packed->CompressedNodes(), packed->NodeCount() - 2);
  // Popping everything inflates each node as it reaches an end.
  for (int i = 0; i < 20000; i++) {
    std::string got = i % 2 ? packed->PopBack() : packed->PopFront();
    ASSERT_FALSE(got.empty());
  }
  EXPECT_EQ(packed->Length(), 0u);
  lim.list_compress_depth.store(saved_depth);
}

void RandomOps(int mode, uint32_t seed, ListObject& l) {
  std::mt19937 rng(seed);
  std::deque<std::string> ref = [&] {
    std::vector<std::string> e = l.Elements();
    return std::deque<std::string>(e.begin(), e.end());
  }();
  int elem_mode = mode;
  for (int op = 0; op < test_scale::Steps(30000); op++) {
    int what = static_cast<int>(rng() % 10);
    if (what < 3) {
      std::string v = RandomElement(rng, elem_mode);
      l.PushBack(v);
      ref.push_back(v);
    } else if (what < 6) {
      std::string v = RandomElement(rng, elem_mode);
      l.PushFront(v);
      ref.push_front(v);
    } else if (what < 7 && !ref.empty()) {
      ASSERT_EQ(l.PopFront(), ref.front());
      ref.pop_front();
    } else if (what < 8 && !ref.empty()) {
      ASSERT_EQ(l.PopBack(), ref.back());
      ref.pop_back();
    } else if (what < 9 && !ref.empty()) {
      size_t i = rng() % ref.size();
      std::string v = RandomElement(rng, elem_mode);
      l.Set(i, v);
      ref[i] = v;
    } else if (!ref.empty()) {
      size_t i = rng() % ref.size();
      ASSERT_EQ(l.At(i), ref[i]);
      // Reverse walks from i.
      size_t k = i;
      l.Walk(i, true, [&](std::string_view v) {
        EXPECT_EQ(v, ref[k]);
        return k-- > 0 && k + 5 > i;
      });
    }
    if (op % 5000 == 0) ExpectSame(l, ref);
  }
  ExpectSame(l, ref);
  std::string ser;
  l.Serialize(&ser);
  EXPECT_TRUE(packed::Valid(ser));
  EXPECT_EQ(packed::Count(ser), ref.size());
}

INSTANTIATE_TEST_SUITE_P(Modes, ListObjectTest, ::testing::Values(0, 1, 2, 3));

// Objects live on the heap (Bytes() counts the object's own allocation).
TEST(ListTypeTest, FixedWidthTextIsPacked) {
  auto lp = std::make_unique<ListObject>();
  ListObject& l = *lp;
  std::mt19937 rng(3);
  for (int i = 0; i < 100000; i++) l.PushBack(RandomElement(rng, 0));
  double per_element = static_cast<double>(l.Bytes()) / l.Length();
  EXPECT_LT(per_element, 9.0);  // 10 characters in 8.75 bytes, nodes included
  EXPECT_GT(per_element, 8.7);
  auto vp = std::make_unique<ListObject>();
  for (int i = 0; i < 100000; i++) vp->PushBack(RandomElement(rng, 2).substr(0, 10) + "\xff");
  EXPECT_GT(static_cast<double>(vp->Bytes()) / vp->Length(), 12.0);  // variable nodes
}

TEST(ListTypeTest, ReleaseSomeFreesFromTheFront) {
  auto lp = std::make_unique<ListObject>();
  ListObject& l = *lp;
  for (int i = 0; i < 50000; i++) l.PushBack("element" + std::to_string(i % 7));
  size_t before = l.Bytes();
  size_t left = l.ReleaseSome(10000);
  EXPECT_LT(left, 50000u - 9000);
  EXPECT_LT(l.Bytes(), before);
  while (l.ReleaseSome(10000) > 0) {
  }
  EXPECT_EQ(l.Length(), 0u);
}

}  // namespace
}  // namespace strata
