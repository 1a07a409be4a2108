#include "core/hyperloglog.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace strata::hll {
namespace {

int Add(std::string* v, const std::string& ele, size_t max_bytes = 3000) {
  int index, value;
  Hash(ele, &index, &value);
  if (EncodingOf(*v) == kDense) return DenseRaise(v->data() + kHeaderSize, index, value) ? 1 : 0;
  return SparseRaise(v, index, value, max_bytes);
}

TEST(HyperLogLogTest, EmptyIsRedisBytes) {
  std::string e = Empty();
  EXPECT_EQ(e, std::string("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff", 18));
  EXPECT_TRUE(LooksValid(e));
  uint64_t n = 99;
  EXPECT_TRUE(CachedCount(e, &n));
  EXPECT_EQ(n, 0u);
  EXPECT_TRUE(Count(e, &n));
  EXPECT_EQ(n, 0u);
}

TEST(HyperLogLogTest, ShapeChecks) {
  EXPECT_FALSE(LooksValid("HYLL"));
  EXPECT_FALSE(LooksValid(std::string("HYLX\x01", 5) + std::string(13, '\0')));
  std::string bad_enc = Empty();
  bad_enc[4] = 2;
  EXPECT_FALSE(LooksValid(bad_enc));
  std::string short_dense = Empty();
  short_dense[4] = kDense;
  EXPECT_FALSE(LooksValid(short_dense));  // a dense value has exactly 12304 bytes
}

TEST(HyperLogLogTest, SparseAndDenseAgreeAndPromote) {
  std::string sparse = Empty(), dense = Empty();
  ASSERT_TRUE(ToDense(&dense));
  EXPECT_EQ(dense.size(), kDenseSize);
  for (int i = 0; i < 5000; i++) {
    std::string ele = "element:" + std::to_string(i);
    ASSERT_GE(Add(&sparse, ele), 0);
    Add(&dense, ele);
    if (i % 500 == 0) {
      uint64_t a = 0, b = 0;
      ASSERT_TRUE(Count(sparse, &a));
      ASSERT_TRUE(Count(dense, &b));
      ASSERT_EQ(a, b) << i;
    }
  }
  // Past hll-sparse-max-bytes the sparse one turned dense, with the same registers.
  EXPECT_EQ(EncodingOf(sparse), kDense);
  EXPECT_EQ(sparse.substr(kHeaderSize), dense.substr(kHeaderSize));
  // Adding again changes nothing.
  EXPECT_EQ(Add(&sparse, "element:7"), 0);
}

TEST(HyperLogLogTest, EstimatesStayWithinTheStandardError) {
  std::string v = Empty();
  double err = 1.04 / std::sqrt(static_cast<double>(kRegisters));
  uint64_t next = 10;
  for (uint64_t i = 1; i <= 200000; i++) {
    Add(&v, std::to_string(i * 2654435761u));
    if (i == next) {
      uint64_t n = 0;
      ASSERT_TRUE(Count(v, &n));
      EXPECT_LE(std::abs(static_cast<double>(n) - static_cast<double>(i)) / i, 4 * err) << i;
      next *= 10;
    }
  }
}

TEST(HyperLogLogTest, CorruptSparseIsRefused) {
  std::string v = Empty();
  v.push_back(static_cast<char>(0x80));  // one register too many
  uint64_t n = 0;
  EXPECT_FALSE(Count(v, &n));
  std::vector<uint8_t> max(kRegisters, 0);
  EXPECT_FALSE(MergeInto(v, max.data()));
  // Runs that stop short of the last register: a register past them cannot be set.
  std::string short_runs = Empty().substr(0, kHeaderSize) + std::string("\x40\x63", 2);
  EXPECT_FALSE(Count(short_runs, &n));
  EXPECT_EQ(SparseRaise(&short_runs, 200, 3, 3000), -1);
  std::string cut = Empty();
  cut.pop_back();  // an XZERO without its second byte
  EXPECT_FALSE(Count(cut, &n));
  std::string d = cut;
  EXPECT_FALSE(ToDense(&d));
}

TEST(HyperLogLogTest, CacheBytes) {
  std::string v = Empty();
  SetCachedCount(v.data(), 0x0102030405060708ull);
  uint64_t n = 0;
  ASSERT_TRUE(CachedCount(v, &n));
  EXPECT_EQ(n, 0x0102030405060708ull);
  EXPECT_EQ(v[8], 0x08);
  InvalidateCache(v.data());
  EXPECT_FALSE(CachedCount(v, &n));
}

}  // namespace
}  // namespace strata::hll
